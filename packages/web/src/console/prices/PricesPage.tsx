// /prices: every model's price, in one-api's ratios and in units per 1M
// tokens; the models that have channels or traffic but no price of their own
// listed with what they are charged (the default, or nothing for in-process
// models). Set a price either way, add one for any model, delete one (back
// to the default); every save is read back from the gateway before the page
// says it was saved. Each model's fallbacks (the models that answer when all
// its channels fail) shown in its row, and set in FallbacksEditor.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { ModelFallbacks, PricesAnswer, PublicPrice } from '@kbchat/contracts';
import { DeleteButton } from '../../actions';
import { useLang } from '../../i18n';
import { Loading, Table } from '../../ui';
import { formatUnits, gatewayApi, type GatewayUser } from '../gateway-api';
import { pricePath, showNumber } from './convert';
import { FallbacksEditor } from './FallbacksEditor';
import { useLimitsEditor } from '../limits/useLimitsEditor';
import { PriceEditor } from './PriceEditor';
import '../console.css';
import './prices.css';

interface Row extends PublicPrice {
  charged: 'set' | 'default' | 'free';
  in_channels?: boolean;
  has_traffic?: boolean;
}

export default function PricesPage({ me }: { me: GatewayUser }) {
  void me;
  const { t } = useLang();
  const client = useQueryClient();
  // undefined: no editor; null: adding a price; a price: editing that one.
  const [editing, setEditing] = useState<PublicPrice | null | undefined>(undefined);
  // The model whose fallbacks are being edited, if any.
  const [falling, setFalling] = useState<string | undefined>(undefined);
  const [saved, setSaved] = useState('');
  const { data } = useQuery({ queryKey: ['prices'], queryFn: ({ signal }) => gatewayApi<PricesAnswer>('/api/prices', { signal }) });
  const { data: fallbackList } = useQuery({
    queryKey: ['fallbacks'],
    queryFn: ({ signal }) => gatewayApi<{ data: ModelFallbacks[] }>('/api/fallbacks', { signal }),
  });
  const reload = () => void client.invalidateQueries({ queryKey: ['prices'] });
  // A model's rate limits bind every caller of it.
  const limits = useLimitsEditor(true);
  const fallbacksOf = new Map((fallbackList?.data ?? []).map((f) => [f.model, f.fallbacks]));
  // Every model the page knows, to pick a fallback from: priced, served or seen, and named in fallbacks.
  const known = [
    ...new Set([
      ...(data ? [...data.data, ...data.unpriced].map((p) => p.model) : []),
      ...(fallbackList?.data ?? []).flatMap((f) => [f.model, ...f.fallbacks]),
    ]),
  ].sort((a, b) => a.localeCompare(b));

  const rows: Row[] = data ? [...data.data.map((p): Row => ({ ...p, charged: 'set' })), ...data.unpriced].sort((a, b) => a.model.localeCompare(b.model)) : [];
  const describe = (p: PublicPrice) => ({
    model: p.model,
    input: formatUnits(p.input_price),
    output: formatUnits(p.output_price),
    ratio: showNumber(p.model_ratio),
    completion: p.completion_ratio === null ? '–' : showNumber(p.completion_ratio),
  });

  const remove = async (model: string) => {
    setSaved('');
    await gatewayApi(pricePath(model), { method: 'DELETE' });
    // What it is charged now: read back, not assumed.
    const now = await gatewayApi<PublicPrice>(pricePath(model));
    setSaved(t('prices.deleted', describe(now)));
    reload();
  };
  const open = (p: PublicPrice | null) => {
    setSaved('');
    setFalling(undefined);
    setEditing(p);
  };
  const openFallbacks = (model: string) => {
    setSaved('');
    setEditing(undefined);
    setFalling(model);
  };

  return (
    <section className="stack prices">
      <h1>{t('prices.title')}</h1>
      <div className="notice" data-testid="convention">
        <p>
          <span>{t('prices.convention')}</span>
        </p>
        {data && (
          <p>
            <span>
              {t('prices.defaultIs', {
                input: formatUnits(data.default.input_price),
                output: formatUnits(data.default.output_price),
                ratio: showNumber(data.default.input_price / 2),
                completion: data.default.input_price > 0 ? showNumber(data.default.output_price / data.default.input_price) : '–',
              })}
            </span>
          </p>
        )}
      </div>
      {saved && (
        <p role="status" className="notice ok">
          <span>{saved}</span>
        </p>
      )}
      {limits.notice}
      {limits.editor}
      {falling !== undefined ? (
        <FallbacksEditor
          key={falling}
          model={falling}
          start={fallbacksOf.get(falling) ?? []}
          known={known}
          onDone={(fresh) => {
            setFalling(undefined);
            if (!fresh) return;
            setSaved(
              fresh.length ? t('prices.fallbacks.saved', { model: falling, models: fresh.join(' → ') }) : t('prices.fallbacks.removed', { model: falling }),
            );
            void client.invalidateQueries({ queryKey: ['fallbacks'] });
          }}
        />
      ) : editing !== undefined ? (
        <PriceEditor
          key={editing?.model ?? '\u0000new'}
          start={editing}
          models={data ? data.unpriced.map((p) => p.model) : []}
          onDone={(fresh) => {
            setEditing(undefined);
            if (fresh) {
              setSaved(t('prices.saved', describe(fresh)));
              reload();
            }
          }}
        />
      ) : (
        <div className="row">
          <button type="button" onClick={() => open(null)}>
            <span>{t('prices.add')}</span>
          </button>
        </div>
      )}
      {!data ? (
        <Loading />
      ) : rows.length === 0 ? (
        <p className="muted">
          <span>{t('prices.none')}</span>
        </p>
      ) : (
        <Table
          className="console-table prices-table"
          rows={rows}
          rowKey={(r) => r.model}
          rowClass={(r) => (r.charged === 'set' ? undefined : 'unpriced')}
          columns={[
            {
              header: t('prices.model'),
              cell: (r) => (
                <div className="price-model">
                  <code data-testid="model">{r.model}</code>
                  {r.charged !== 'set' && (
                    <span className="muted">
                      {t(r.in_channels && r.has_traffic ? 'prices.seen.both' : r.in_channels ? 'prices.seen.channels' : 'prices.seen.traffic')}
                    </span>
                  )}
                  {limits.summary('model', r.model) !== t('limits.none') && (
                    <span className="limits-summary" data-testid="model-rate-limits">
                      {limits.summary('model', r.model)}
                    </span>
                  )}
                  {fallbacksOf.has(r.model) && (
                    <span className="price-fallbacks" data-testid="fallbacks">
                      {t('prices.fallbacks.then', { models: fallbacksOf.get(r.model)!.join(' → ') })}
                    </span>
                  )}
                </div>
              ),
            },
            {
              header: t('prices.charged'),
              cell: (r) => (
                <span className={`badge ${r.charged === 'set' ? 'ok' : r.charged === 'free' ? '' : 'warn'}`} data-testid="charged">
                  {t(`prices.charged.${r.charged}`)}
                </span>
              ),
            },
            { header: t('prices.modelRatio'), cell: (r) => <span data-testid="model-ratio">{showNumber(r.model_ratio)}</span> },
            {
              header: t('prices.completionRatio'),
              cell: (r) => <span data-testid="completion-ratio">{r.completion_ratio === null ? '–' : showNumber(r.completion_ratio)}</span>,
            },
            { header: t('prices.col.input'), cell: (r) => <span data-testid="input-price">{formatUnits(r.input_price)}</span> },
            { header: t('prices.col.output'), cell: (r) => <span data-testid="output-price">{formatUnits(r.output_price)}</span> },
            {
              header: t('prices.actions'),
              cell: (r) => (
                <div className="row price-actions">
                  <button
                    type="button"
                    className="secondary"
                    aria-label={t(r.charged === 'set' ? 'prices.editNamed' : 'prices.setNamed', { model: r.model })}
                    onClick={() => open(r)}
                  >
                    <span>{t(r.charged === 'set' ? 'prices.edit' : 'prices.set')}</span>
                  </button>
                  <button
                    type="button"
                    className="secondary"
                    aria-label={t('prices.fallbacks.editNamed', { model: r.model })}
                    onClick={() => openFallbacks(r.model)}
                  >
                    <span>{t('prices.fallbacks.edit')}</span>
                  </button>
                  {limits.button('model', r.model, r.model)}
                  {r.charged === 'set' && <DeleteButton name={t('prices.priceOf', { model: r.model })} onDelete={() => remove(r.model)} />}
                </div>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
