// /apps/:appId/share: the application's share links (FastGPT's outLink): make
// one (a name; under "More settings" its limits, sign-in check and the sites
// that may embed it), see its public address with a copy button, its limits
// and usage, when it was last used; edit it, embed it on a site (the script
// tag, an iframe, a live preview), delete it (it stops working at once).
import type { PublicOutLink } from '@kbchat/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ActionError, DeleteButton } from '../actions';
import { api, withQuery } from '../api';
import { useLang, type Lang, type Translate } from '../i18n';
import { Boundary, CopyButton, formatTime, Loading, Table } from '../ui';
import { AppSubpage } from './AppSubpage';
import { shareLinksKey, useAppDetail, useShareLinks } from './queries';
import { ShareEmbed } from './ShareEmbed';
import { ShareMainFields, ShareMoreFields } from './ShareLinkFields';
import { createBody, EMPTY_FIELDS, fieldsOf, sharePageUrl, updateBody, type LinkFields } from './share-form';

const shareUrl = (shareId: string) => sharePageUrl(location.origin, shareId);

export function ShareLinksPage({ appId }: { appId: string }) {
  const { t } = useLang();
  return (
    <AppSubpage appId={appId} title={t('share.title')}>
      <p className="muted">
        <span>{t('share.intro')}</span>
      </p>
      <Boundary>
        <CreateShareLink appId={appId} />
      </Boundary>
      <Boundary>
        <ShareLinkList appId={appId} />
      </Boundary>
    </AppSubpage>
  );
}

function CreateShareLink({ appId }: { appId: string }) {
  const { t } = useLang();
  const client = useQueryClient();
  const [fields, setFields] = useState<LinkFields>(EMPTY_FIELDS);
  const create = useMutation({
    mutationFn: (json: ReturnType<typeof createBody>) => api('/api/support/outLink/create', { json }),
    onSuccess: () => {
      setFields(EMPTY_FIELDS);
      void client.invalidateQueries({ queryKey: shareLinksKey(appId) });
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate(createBody(appId, fields));
  }
  return (
    <form className="card stack" onSubmit={submit}>
      <ShareMainFields value={fields} onChange={setFields} />
      <details className="share-details">
        <summary>
          <span>{t('share.more')}</span>
        </summary>
        <ShareMoreFields value={fields} onChange={setFields} />
      </details>
      <ActionError error={create.error} />
      <div>
        <button type="submit" disabled={create.isPending}>
          <span>{t('share.create')}</span>
        </button>
      </div>
    </form>
  );
}

type Panel = { id: string; kind: 'edit' | 'embed' };

function ShareLinkList({ appId }: { appId: string }) {
  const { t, lang } = useLang();
  const client = useQueryClient();
  const { data } = useShareLinks(appId);
  const { data: app } = useAppDetail(appId);
  const [panel, setPanel] = useState<Panel | null>(null);
  if (!data) return <Loading />;
  if (data.length === 0)
    return (
      <p>
        <span>{t('share.none')}</span>
      </p>
    );
  const open = panel && data.find((l) => l.id === panel.id);
  const toggle = (id: string, kind: Panel['kind']) => setPanel(panel?.id === id && panel.kind === kind ? null : { id, kind });
  const panelId = 'share-link-panel';
  return (
    <div className="stack">
      <Table
        rows={data}
        rowKey={(l) => l.id}
        className="share-table"
        columns={[
          { header: t('share.name'), cell: (l) => <span className="share-name">{l.name}</span> },
          {
            header: t('share.address'),
            cell: (l) => (
              <div className="row share-address">
                <a href={shareUrl(l.shareId)} target="_blank" rel="noreferrer" className="share-url">
                  <span>{shareUrl(l.shareId)}</span>
                </a>
                <CopyButton text={shareUrl(l.shareId)} />
              </div>
            ),
          },
          { header: t('share.limits'), cell: (l) => <Limits link={l} /> },
          { header: t('share.lastUsed'), cell: (l) => <span>{l.lastTime ? formatTime(l.lastTime, lang) : t('common.never')}</span> },
          {
            header: null,
            cell: (l) => (
              <div className="ap-actions">
                {(['edit', 'embed'] as const).map((kind) => (
                  <button
                    key={kind}
                    type="button"
                    className="secondary"
                    aria-label={t(kind === 'edit' ? 'share.editNamed' : 'share.embedNamed', { name: l.name })}
                    aria-expanded={panel?.id === l.id && panel.kind === kind}
                    aria-controls={panelId}
                    onClick={() => toggle(l.id, kind)}
                  >
                    <span>{t(kind === 'edit' ? 'common.edit' : 'share.embed')}</span>
                  </button>
                ))}
                <DeleteButton
                  name={l.name}
                  onDelete={async () => {
                    await api(withQuery('/api/support/outLink/delete', { id: l.id }), { method: 'DELETE' });
                    if (panel?.id === l.id) setPanel(null);
                    await client.invalidateQueries({ queryKey: shareLinksKey(appId) });
                  }}
                />
              </div>
            ),
          },
        ]}
      />
      {open && panel && (
        <LinkPanel id={panelId} title={t(panel.kind === 'edit' ? 'share.editNamed' : 'share.embed.title', { name: open.name })} onClose={() => setPanel(null)}>
          {panel.kind === 'edit' ? (
            <EditShareLink key={open.id} appId={appId} link={open} onDone={() => setPanel(null)} />
          ) : (
            <ShareEmbed key={open.id} link={open} appName={app?.name ?? open.name} />
          )}
        </LinkPanel>
      )}
    </div>
  );
}

/** A link's edit form or embedding, under the table, brought into view when opened. */
function LinkPanel({ id, title, onClose, children }: { id: string; title: string; onClose: () => void; children: ReactNode }) {
  const { t } = useLang();
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    ref.current?.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
  }, [title]);
  return (
    <section ref={ref} id={id} className="card stack share-panel" aria-labelledby={`${id}-title`}>
      <div className="row">
        <h2 id={`${id}-title`} className="ap-card-title grow">
          <span>{title}</span>
        </h2>
        <button type="button" className="link" onClick={onClose}>
          <span>{t('common.close')}</span>
        </button>
      </div>
      {children}
    </section>
  );
}

function EditShareLink({ appId, link, onDone }: { appId: string; link: PublicOutLink; onDone: () => void }) {
  const { t, lang } = useLang();
  const client = useQueryClient();
  const [was] = useState(() => fieldsOf(link));
  const [fields, setFields] = useState(was);
  const save = useMutation({
    mutationFn: (json: ReturnType<typeof updateBody>) => api<PublicOutLink>('/api/support/outLink/update', { method: 'PUT', json }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: shareLinksKey(appId) });
      onDone();
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    save.mutate(updateBody(link.id, fields, was));
  }
  const expires = link.limit.expiredTime ? t('share.expiresCurrent', { date: formatTime(link.limit.expiredTime, lang) }) : undefined;
  return (
    <form className="stack" onSubmit={submit} aria-label={t('share.editNamed', { name: link.name })}>
      <ShareMainFields value={fields} onChange={setFields} expiresLabel={expires} />
      <ShareMoreFields value={fields} onChange={setFields} />
      <p className="muted ap-hint ap-note">
        <span>{t('share.edit.clearHint')}</span>
      </p>
      <ActionError error={save.error} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>
          <span>{t('common.save')}</span>
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          <span>{t('common.cancel')}</span>
        </button>
      </div>
    </form>
  );
}

/** Usage points: a few significant digits for small sums (a cent's fraction), two decimals past 1. */
export function formatPoints(n: number, lang: Lang): string {
  const opts = Math.abs(n) >= 1 || n === 0 ? { maximumFractionDigits: 2 } : { maximumSignificantDigits: 3 };
  return new Intl.NumberFormat(lang === 'zh' ? 'zh-CN' : 'en-US', opts).format(n);
}

function limitLines(l: PublicOutLink, t: Translate, lang: Lang): { text: string; warn?: boolean }[] {
  const { limit } = l;
  const lines: { text: string; warn?: boolean }[] = [];
  if (limit.expiredTime) lines.push({ text: t('share.until', { date: formatTime(limit.expiredTime, lang) }) });
  if (limit.QPM) lines.push({ text: t('share.perMinute', { n: limit.QPM }) });
  if (limit.linkQPM) lines.push({ text: t('share.linkPerMinute', { n: limit.linkQPM }) });
  if (limit.maxUsagePoints !== undefined) {
    const usedUp = l.usedPoints >= limit.maxUsagePoints;
    const text = t('share.usage', { used: formatPoints(l.usedPoints, lang), max: formatPoints(limit.maxUsagePoints, lang) });
    lines.push({ text: usedUp ? `${text} (${t('share.usedUp')})` : text, warn: usedUp });
  } else if (l.usedPoints > 0) lines.push({ text: t('share.usageSpent', { used: formatPoints(l.usedPoints, lang) }) });
  if (limit.hookUrl) lines.push({ text: t('share.hook', { url: limit.hookUrl }) });
  if (l.allowedOrigins.length) lines.push({ text: t('share.embeddableOn', { origins: l.allowedOrigins.join(', ') }) });
  return lines;
}

function Limits({ link }: { link: PublicOutLink }) {
  const { t, lang } = useLang();
  const lines = limitLines(link, t, lang);
  if (!lines.length) return <span>{t('share.noLimits')}</span>;
  return (
    <ul className="share-limits">
      {lines.map((line) => (
        <li key={line.text} className={line.warn ? 'error' : undefined}>
          <span>{line.text}</span>
        </li>
      ))}
    </ul>
  );
}
