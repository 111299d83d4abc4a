// The model calls of an answer, one row each: the step that made it, the
// model, and, from the gateway's request log (GET /api/core/chat/modelCalls
// for the stored answer, read when the steps are opened), the channel,
// latency and cost; the gateway's request id with a copy button. A share
// link's visitor gets no such read: the rows show what the answer carries.
import { useQuery } from '@tanstack/react-query';
import type { GatewayCall, GatewayCalls, ModelCall } from '../api';
import { ApiError } from '../api';
import { useLang, type MessageKey } from '../i18n';
import { CopyButton, Table } from '../ui';

const STEP_KEYS: Record<string, MessageKey> = {
  classifyQuestion: 'chat.step.classifyQuestion',
  queryExtension: 'chat.step.queryExtension',
  contentExtract: 'chat.step.contentExtract',
  embeddings: 'chat.trace.embeddings',
  rerank: 'chat.trace.rerank',
  chatNode: 'chat.trace.answer',
};

/** The gateway's record of the calls; a refusal or a failure becomes `unavailable`, shown in place of the columns. */
async function loadGatewayCalls(load: (() => Promise<GatewayCalls>) | undefined): Promise<GatewayCalls> {
  if (!load) return { calls: [] };
  try {
    return await load();
  } catch (err) {
    return { calls: [], unavailable: err instanceof ApiError ? err.message : String(err) };
  }
}

/** `load` reads the gateway's side of these calls (absent: the rows show what the answer carries). */
export function ModelCalls({ calls, load }: { calls: ModelCall[]; load?: () => Promise<GatewayCalls> }) {
  const { t } = useLang();
  const ids = calls.flatMap((c) => (c.requestId ? [c.requestId] : []));
  const { data } = useQuery({ queryKey: ['model-calls', ids], queryFn: () => loadGatewayCalls(ids.length ? load : undefined) });
  const byId = new Map<string, GatewayCall>((data?.calls ?? []).map((c) => [c.requestId, c]));
  return (
    <section className="trace-calls" aria-label={t('chat.trace.calls')}>
      <strong>{t('chat.trace.calls')}</strong>
      <Table
        className="trace-table"
        rows={calls.map((call, i) => ({ call, i, g: call.requestId ? byId.get(call.requestId) : undefined }))}
        rowKey={(r) => String(r.i)}
        rowClass={(r) => (r.call.error ? 'error' : undefined)}
        columns={[
          { header: t('chat.trace.step'), cell: ({ call }) => <span>{STEP_KEYS[call.step] ? t(STEP_KEYS[call.step]!) : call.step}</span> },
          { header: t('chat.trace.model'), cell: ({ call }) => <code>{call.model}</code> },
          {
            header: t('chat.trace.channel'),
            cell: ({ g }) => <span>{g ? (g.channelName ? `${g.channelName} (#${g.channelId})` : g.channelId === null ? '—' : `#${g.channelId}`) : '—'}</span>,
          },
          {
            header: t('chat.trace.latency'),
            cell: ({ call, g }) => <span>{g ? t('chat.trace.ms', { ms: g.latencyMs }) : t('chat.step.seconds', { s: call.runningTime })}</span>,
          },
          { header: t('chat.trace.cost'), cell: ({ g }) => <span>{g ? formatCost(g.cost) : '—'}</span> },
          {
            header: t('chat.trace.requestId'),
            cell: ({ call }) => (
              <>
                {call.requestId ? (
                  <span className="row trace-id">
                    <code>{call.requestId}</code>
                    <CopyButton text={call.requestId} label={t('chat.trace.copyId')} />
                  </span>
                ) : (
                  <span className="muted">{t('chat.trace.noId')}</span>
                )}
                {call.error && (
                  <span className="error">
                    <span>{call.error}</span>
                  </span>
                )}
              </>
            ),
          },
        ]}
      />
      {data === undefined && ids.length > 0 && (
        <p className="muted">
          <span>{t('chat.trace.loading')}</span>
        </p>
      )}
      {data?.unavailable && (
        <p className="muted">
          <span>{t('chat.trace.unavailable', { message: data.unavailable })}</span>
        </p>
      )}
    </section>
  );
}

/** The gateway's currency units: small costs keep their significant digits. */
export function formatCost(units: number): string {
  if (units === 0) return '0';
  return units >= 0.01 ? units.toFixed(4) : units.toPrecision(2);
}
