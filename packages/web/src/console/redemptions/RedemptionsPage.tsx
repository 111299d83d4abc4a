// /redemptions: top-up codes, for administrators. A batch is made with the
// form above the list and its codes are shown once (the gateway keeps only
// their hashes); the list, paged by the gateway and searched by name (both
// kept in the address), shows each code's hint, amount, status and who
// redeemed it. An unused code can be disabled and enabled again; any can be
// deleted, after a confirmation. What the list shows is read back from the
// gateway after every change.
import type { GatewayRedemption, GatewayRedemptionPage, PatchRedemptionBody } from '@kbchat/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'wouter';
import { ActionError, DeleteButton } from '../../actions';
import { withQuery } from '../../api';
import { useLang } from '../../i18n';
import { keepPreviousData } from '../../query';
import { formatTime, Loading, Pager, Table } from '../../ui';
import { formatUnits, gatewayApi, type GatewayUser } from '../gateway-api';
import { CreateCodesForm, NewCodesPanel, type NewCodes } from './CreateCodes';
import '../console.css';
import './redemptions.css';

const PAGE = 20;
const STATUS_BADGE = { unused: 'ok', redeemed: '', disabled: 'bad' } as const;

export default function RedemptionsPage({ me }: { me: GatewayUser }) {
  void me;
  const { t, lang } = useLang();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const offset = Math.max(0, Number.parseInt(params.get('offset') ?? '0', 10) || 0);
  const client = useQueryClient();
  const [made, setMade] = useState<NewCodes | null>(null);
  const [error, setError] = useState<unknown>(null);
  const { data } = useQuery({
    queryKey: ['redemptions', { q, offset }],
    queryFn: ({ signal }) => gatewayApi<GatewayRedemptionPage>(withQuery('/api/redemptions', { q: q || undefined, offset, limit: PAGE }), { signal }),
    placeholderData: keepPreviousData,
  });
  // Every page and search of the list: a change can move a code between them.
  const reload = () => void client.invalidateQueries({ queryKey: ['redemptions'] });
  const setQuery = (next: { q?: string; offset?: number }) =>
    setParams((p) => {
      const out = new URLSearchParams(p);
      for (const [k, v] of Object.entries(next)) {
        if (v === undefined || v === '' || v === 0) out.delete(k);
        else out.set(k, String(v));
      }
      // A new search starts at its first page.
      if (next.offset === undefined) out.delete('offset');
      return out;
    });

  const setStatus = async (code: GatewayRedemption, status: PatchRedemptionBody['status']) => {
    setError(null);
    try {
      await gatewayApi(`/api/redemptions/${code.id}`, { method: 'PATCH', json: { status } satisfies PatchRedemptionBody });
    } catch (err) {
      setError(err);
    }
    // Read back either way: a refusal (the code was redeemed meanwhile) shows the code as it is now.
    reload();
  };
  const remove = async (code: GatewayRedemption) => {
    await gatewayApi(`/api/redemptions/${code.id}`, { method: 'DELETE' });
    reload();
  };
  const named = (c: GatewayRedemption) => t('redemptions.codeNamed', { name: c.name, hint: c.key_hint });

  return (
    <section className="stack">
      <h1>{t('redemptions.title')}</h1>
      <p className="muted">
        <span>{t('redemptions.intro')}</span>
      </p>
      <CreateCodesForm
        onCreated={(codes) => {
          setMade(codes);
          reload();
        }}
      />
      {made && <NewCodesPanel made={made} onClose={() => setMade(null)} />}
      <div className="toolbar">
        <SearchBox key={q} initial={q} onSearch={(text) => setQuery({ q: text })} />
      </div>
      <ActionError error={error} />
      {!data ? (
        <Loading />
      ) : (
        <>
          <p className="muted">
            <span>{q ? t('redemptions.countFound', { n: data.total }) : t('redemptions.total', { n: data.total })}</span>
          </p>
          {data.data.length === 0 ? (
            <p className="notice">
              <span>{q ? t('redemptions.noneFound', { q }) : t('redemptions.none')}</span>
            </p>
          ) : (
            <Table
              className="console-table codes-table"
              rows={data.data}
              rowKey={(c) => String(c.id)}
              columns={[
                {
                  header: t('redemptions.col.code'),
                  cell: (c) => (
                    <>
                      <strong>{c.name}</strong>
                      <div>
                        <code className="muted">{c.key_hint}</code>
                      </div>
                    </>
                  ),
                },
                { header: t('redemptions.col.amount'), cell: (c) => <span>{formatUnits(c.quota)}</span> },
                {
                  header: t('redemptions.col.status'),
                  cell: (c) => (
                    <span className={`badge ${STATUS_BADGE[c.status]}`} data-testid="code-status">
                      {t(`redemptions.status.${c.status}`)}
                    </span>
                  ),
                },
                {
                  header: t('redemptions.col.redeemedBy'),
                  cell: (c) =>
                    c.redeemed_at === null ? (
                      <span className="muted">{t('redemptions.notRedeemed')}</span>
                    ) : (
                      <>
                        <span data-testid="redeemed-by">
                          {c.redeemed_by_username ?? (c.redeemed_by === null ? '' : t('redemptions.userN', { id: c.redeemed_by }))}
                        </span>
                        <div className="muted">
                          <span>{formatTime(c.redeemed_at, lang)}</span>
                        </div>
                      </>
                    ),
                },
                { header: t('redemptions.col.created'), cell: (c) => <span>{formatTime(c.created_at, lang)}</span> },
                {
                  header: t('redemptions.col.actions'),
                  cell: (c) => (
                    <div className="row">
                      {c.status !== 'redeemed' && (
                        <button
                          type="button"
                          className="secondary"
                          aria-label={t(c.status === 'unused' ? 'redemptions.disableNamed' : 'redemptions.enableNamed', { code: named(c) })}
                          onClick={() => setStatus(c, c.status === 'unused' ? 'disabled' : 'unused')}
                        >
                          <span>{t(c.status === 'unused' ? 'redemptions.disable' : 'redemptions.enable')}</span>
                        </button>
                      )}
                      <DeleteButton name={named(c)} onDelete={() => remove(c)} />
                    </div>
                  ),
                },
              ]}
            />
          )}
          <Pager offset={offset} pageSize={PAGE} total={data.total} onOffset={(o) => setQuery({ q, offset: o })} />
        </>
      )}
    </section>
  );
}

function SearchBox({ initial, onSearch }: { initial: string; onSearch: (q: string) => void }) {
  const { t } = useLang();
  const [text, setText] = useState(initial);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSearch(text.trim());
  };
  return (
    <form role="search" className="row grow codes-searchbox" onSubmit={submit} aria-label={t('redemptions.search')}>
      <input
        className="codes-search"
        type="search"
        maxLength={100}
        aria-label={t('redemptions.search')}
        placeholder={t('redemptions.search')}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit" className="secondary">
        <span>{t('redemptions.searchButton')}</span>
      </button>
    </form>
  );
}
