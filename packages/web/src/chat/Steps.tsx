// The steps of an answer (responseData), behind the message's Steps toggle:
// what was classified, how the question was completed, what the search used
// and found with every score, what was extracted, each tool call, and each model call.
import type { DroppedItem, GatewayCalls, ModelCall, StepRecord } from '../api';
import { useLang, type MessageKey, type Translate } from '../i18n';
import type { Quote } from './messages-model';
import { ModelCalls } from './ModelCalls';

const STEP_KEYS: Record<string, MessageKey> = {
  classifyQuestion: 'chat.step.classifyQuestion',
  queryExtension: 'chat.step.queryExtension',
  datasetSearchNode: 'chat.step.datasetSearchNode',
  contentExtract: 'chat.step.contentExtract',
  chatNode: 'chat.step.chatNode',
  answerNode: 'chat.step.answerNode',
  toolCall: 'chat.step.toolCall',
};

export function ScoreList({ score }: { score: Quote['score'] }) {
  const { t } = useLang();
  return (
    <span className="scores">
      {score.map((s) => (
        <span key={s.type} className="badge">
          <span>{`${t(`chat.score.${s.type}` as MessageKey)} ${s.value.toFixed(3)} #${s.index + 1}`}</span>
        </span>
      ))}
    </span>
  );
}

const MODE_KEYS: Record<string, MessageKey> = {
  embedding: 'chat.mode.embedding',
  fullTextRecall: 'chat.mode.fullTextRecall',
  mixedRecall: 'chat.mode.mixedRecall',
};

function modeName(t: Translate, mode: unknown): string {
  const key = MODE_KEYS[String(mode)];
  return key ? t(key) : String(mode ?? '');
}

/** The category the classifier chose, with its description when the record lists it. */
function categoryOf(r: StepRecord): string {
  if (r.cqResult === null) return '—';
  const list = Array.isArray(r.cqList) ? (r.cqList as { id: string; description: string }[]) : [];
  const found = list.find((c) => c.id === r.cqResult);
  return found ? `${found.id} (${found.description})` : String(r.cqResult);
}

function Step({ r }: { r: StepRecord }) {
  const { t } = useLang();
  const title = STEP_KEYS[r.moduleType] ? t(STEP_KEYS[r.moduleType]!) : r.moduleName;
  const quotes = Array.isArray(r.quoteList) ? (r.quoteList as Quote[]) : undefined;
  const queries = Array.isArray(r.queries)
    ? (r.queries as string[])
    : Array.isArray((r.queryExtensionResult as { queries?: string[] })?.queries)
      ? (r.queryExtensionResult as { queries: string[] }).queries
      : undefined;
  return (
    <li className="step">
      <div className="row">
        <strong>{title}</strong>
        {r.model && <code>{r.model}</code>}
        {r.moduleType === 'toolCall' && <code>{`${r.sourceName ? `${String(r.sourceName)} / ` : ''}${String(r.toolName ?? '')}`}</code>}
        <span className="muted">{t('chat.step.seconds', { s: r.runningTime })}</span>
        {(r.inputTokens !== undefined || r.outputTokens !== undefined) && (
          <span className="muted">{t('chat.step.tokens', { input: r.inputTokens ?? 0, output: r.outputTokens ?? 0 })}</span>
        )}
      </div>
      {r.cqResult !== undefined && (
        <div>
          <span>{t('chat.step.category', { value: categoryOf(r) })}</span>
        </div>
      )}
      {queries && queries.length > 0 && (
        <div>
          <span className="muted">{t('chat.step.queries')}</span>
          <ul>
            {queries.map((q, i) => (
              <li key={i}>
                <span>{q}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
      {r.moduleType === 'datasetSearchNode' && (
        <div className="muted">
          <span>{t('chat.step.searchUsed', { mode: modeName(t, r.searchMode), similarity: String(r.similarity ?? 0), limit: String(r.limit ?? '') })}</span>
        </div>
      )}
      {quotes &&
        (quotes.length === 0 ? (
          <div>
            <span>{t('chat.step.noQuotes')}</span>
          </div>
        ) : (
          <ol className="step-quotes">
            {quotes.map((q) => (
              <li key={q.id}>
                <div className="row">
                  <span className="muted">{q.sourceName}</span>
                  <ScoreList score={q.score} />
                </div>
                <div className="quote-text">
                  <span>{q.q.length > 300 ? `${q.q.slice(0, 300)}…` : q.q}</span>
                </div>
              </li>
            ))}
          </ol>
        ))}
      {Array.isArray(r.dropped) && r.dropped.length > 0 && (
        <Dropped items={r.dropped as DroppedItem[]} similarity={Number(r.similarity ?? 0)} limit={Number(r.limit ?? 0)} />
      )}
      {typeof r.quoteCount === 'number' && r.moduleType === 'chatNode' && (
        <div className="muted">
          <span>{t('chat.step.quotes', { n: r.quoteCount })}</span>
        </div>
      )}
      {r.moduleType === 'toolCall' && (
        <div className="step-tool">
          <div>
            <span className="muted">{t('chat.step.toolInput')}</span> <code>{String(r.toolInput ?? '')}</code>
          </div>
          <div>
            <span className="muted">{t('chat.step.toolResult')}</span>
            <pre className="quote-text">{String(r.toolRes ?? '')}</pre>
          </div>
        </div>
      )}
      {r.extractResult !== undefined && (
        <div>
          <span className="muted">{t('chat.step.extracted')}</span>
          <code>{JSON.stringify(r.extractResult)}</code>
        </div>
      )}
      {typeof r.note === 'string' && (
        <div className="muted">
          <span>{t('chat.step.note', { message: r.note })}</span>
        </div>
      )}
      {typeof r.requestId === 'string' && !Array.isArray(r.modelCalls) && (
        <div className="muted">
          <span>{t('chat.requestId', { id: r.requestId })}</span>
        </div>
      )}
      {r.error && (
        <div className="error">
          <span>{t('chat.step.error', { message: r.error })}</span>
        </div>
      )}
    </li>
  );
}

/** The results the search found but dropped, collapsed: each with the rule that dropped it and the number that rule read. */
function Dropped({ items, similarity, limit }: { items: DroppedItem[]; similarity: number; limit: number }) {
  const { t } = useLang();
  return (
    <details className="trace-dropped">
      <summary>
        <span>{t('chat.trace.dropped', { n: items.length })}</span>
      </summary>
      <ol className="step-quotes">
        {items.map((d) => (
          <li key={d.id}>
            <div className="row">
              <span className="badge">
                <span>
                  {d.reason === 'similarity'
                    ? t('chat.trace.belowSimilarity', { value: d.similarityValue.toFixed(3), threshold: String(similarity) })
                    : t('chat.trace.pastLimit', { tokens: d.tokens, limit: String(limit) })}
                </span>
              </span>
              <span className="muted">{d.sourceName}</span>
              <ScoreList score={d.score} />
            </div>
            <div className="quote-text">
              <span>{d.q}</span>
            </div>
          </li>
        ))}
      </ol>
    </details>
  );
}

/** `loadCalls` reads the gateway's record of the answer's model calls (channel, latency, cost). */
export function Steps({ records, loadCalls }: { records: StepRecord[]; loadCalls?: () => Promise<GatewayCalls> }) {
  const calls = records.flatMap((r) => (Array.isArray(r.modelCalls) ? (r.modelCalls as ModelCall[]) : []));
  return (
    <>
      <ol className="steps">
        {records.map((r, i) => (
          <Step key={i} r={r} />
        ))}
      </ol>
      {calls.length > 0 && <ModelCalls calls={calls} load={loadCalls} />}
    </>
  );
}
