// The dashboard's numbers as text: the range's totals, a row per group, the
// users who spent most, and what is disabled now. Every figure is the
// gateway's own (GET /api/dashboard), formatted, never recomputed here.
import { Link } from 'wouter';
import type { DashboardAnswer, DashboardDimension, DashboardGroup, TopUser } from '@kbchat/contracts';
import { useLang, type Translate } from '../../i18n';
import { formatTime, Table } from '../../ui';
import { formatUnits } from '../gateway-api';
import { formatCount, formatMs } from './view';

type Totals = DashboardAnswer['totals'];

const errorRate = (t: Totals) => (t.requests > 0 ? `${((t.errors / t.requests) * 100).toFixed(1)} %` : '');
const ms = (v: number | null) => (v === null ? '–' : formatMs(v));

function Tile({ id, label, value, note }: { id: string; label: string; value: string; note?: string }) {
  return (
    <div className="card dash-tile" data-testid={`total-${id}`}>
      <dt>
        <span>{label}</span>
      </dt>
      <dd>
        <span className="dash-value" data-testid="value">
          {value}
        </span>
        {note ? <span className="muted dash-note">{note}</span> : null}
      </dd>
    </div>
  );
}

export function TotalsTiles({ totals }: { totals: Totals }) {
  const { t } = useLang();
  return (
    <dl className="dash-tiles" aria-label={t('dashboard.totals')}>
      <Tile id="requests" label={t('dashboard.requests')} value={formatCount(totals.requests)} />
      <Tile id="errors" label={t('dashboard.errors')} value={formatCount(totals.errors)} note={errorRate(totals)} />
      <Tile id="prompt-tokens" label={t('dashboard.tokensIn')} value={formatCount(totals.prompt_tokens)} />
      <Tile id="completion-tokens" label={t('dashboard.tokensOut')} value={formatCount(totals.completion_tokens)} />
      <Tile id="spend" label={t('dashboard.spend')} value={formatUnits(totals.cost)} />
      <Tile id="latency-p50" label={t('dashboard.p50')} value={ms(totals.latency_p50_ms)} />
      <Tile
        id="latency-p95"
        label={t('dashboard.p95')}
        value={ms(totals.latency_p95_ms)}
        note={totals.latency_avg_ms === null ? undefined : t('dashboard.avg', { ms: ms(totals.latency_avg_ms) })}
      />
    </dl>
  );
}

/** A group's name in the reader's language: "other", "(no channel)", or the gateway's label (a model, or a name by id). */
export function groupName(g: DashboardGroup, dim: DashboardDimension, t: Translate): string {
  if (g.other) return t('dashboard.other');
  if (g.key === '') return t(`dashboard.none.${dim}`);
  return g.label;
}

export function GroupsTable({ groups, dim }: { groups: DashboardGroup[]; dim: DashboardDimension }) {
  const { t } = useLang();
  return (
    <Table
      className="console-table"
      rows={groups}
      rowKey={(g) => (g.other ? '\u0000other' : g.key)}
      columns={[
        {
          header: t(`dashboard.group.${dim}`),
          cell: (g) => (
            <span className="dash-name">
              <span data-testid="group-name">{groupName(g, dim, t)}</span>
              {dim !== 'model' && !g.other && g.key !== '' ? <span className="muted"> #{g.key}</span> : null}
            </span>
          ),
        },
        { header: t('dashboard.requests'), cell: (g) => <span data-testid="requests">{formatCount(g.totals.requests)}</span> },
        { header: t('dashboard.errors'), cell: (g) => <span data-testid="errors">{formatCount(g.totals.errors)}</span> },
        { header: t('dashboard.tokensIn'), cell: (g) => <span>{formatCount(g.totals.prompt_tokens)}</span> },
        { header: t('dashboard.tokensOut'), cell: (g) => <span>{formatCount(g.totals.completion_tokens)}</span> },
        { header: t('dashboard.spend'), cell: (g) => <span data-testid="spend">{formatUnits(g.totals.cost)}</span> },
        { header: t('dashboard.latencyAvg'), cell: (g) => <span>{ms(g.totals.latency_avg_ms)}</span> },
        { header: t('dashboard.col.p50'), cell: (g) => <span data-testid="p50">{ms(g.totals.latency_p50_ms)}</span> },
        { header: t('dashboard.col.p95'), cell: (g) => <span data-testid="p95">{ms(g.totals.latency_p95_ms)}</span> },
      ]}
    />
  );
}

export function TopUsersTable({ users }: { users: TopUser[] }) {
  const { t } = useLang();
  if (users.length === 0)
    return (
      <p className="muted">
        <span>{t('dashboard.noSpenders')}</span>
      </p>
    );
  return (
    <Table
      className="console-table"
      rows={users}
      rowKey={(u) => String(u.user_id)}
      columns={[
        { header: '#', cell: (u) => <span>{users.indexOf(u) + 1}</span> },
        { header: t('dashboard.user'), cell: (u) => <span data-testid="username">{u.username ?? t('dashboard.deletedUser', { id: u.user_id })}</span> },
        { header: t('dashboard.spend'), cell: (u) => <span data-testid="spend">{formatUnits(u.cost)}</span> },
        { header: t('dashboard.requests'), cell: (u) => <span data-testid="requests">{formatCount(u.requests)}</span> },
        { header: t('dashboard.errors'), cell: (u) => <span>{formatCount(u.errors)}</span> },
        { header: t('dashboard.tokensIn'), cell: (u) => <span>{formatCount(u.prompt_tokens)}</span> },
        { header: t('dashboard.tokensOut'), cell: (u) => <span>{formatCount(u.completion_tokens)}</span> },
      ]}
    />
  );
}

/** Channels an administrator disabled, and channel models the health check disabled, each with why and since when. */
export function DisabledList({ disabled }: { disabled: DashboardAnswer['disabled'] }) {
  const { t, lang } = useLang();
  if (disabled.channels.length === 0 && disabled.models.length === 0)
    return (
      <p className="muted" data-testid="nothing-disabled">
        <span>{t('dashboard.nothingDisabled')}</span>
      </p>
    );
  const channelLink = (id: number, name: string) => (
    <Link href="~/channels" className="dash-name">
      <span>{name}</span>
      <span className="muted"> #{id}</span>
    </Link>
  );
  return (
    <ul className="dash-disabled">
      {disabled.channels.map((c) => (
        <li key={`c${c.channel_id}`} className="card" data-testid="disabled-channel">
          <div className="row">
            <span className="badge bad">{t('dashboard.channelDisabled')}</span>
            {channelLink(c.channel_id, c.name)}
          </div>
          <p className="dash-reason">
            <span>{c.reason === 'disabled by an administrator' ? t('dashboard.byAdmin') : c.reason}</span>
          </p>
          <p className="muted">
            <span>{t('dashboard.since', { time: formatTime(c.since, lang) })}</span>
          </p>
        </li>
      ))}
      {disabled.models.map((m) => (
        <li key={`m${m.channel_id}\u0000${m.model}`} className="card" data-testid="disabled-model">
          <div className="row">
            <span className="badge warn">{t('dashboard.modelDisabled')}</span>
            <code>{m.model}</code>
            <span className="muted">{t('dashboard.onChannel')}</span>
            {channelLink(m.channel_id, m.channel_name)}
          </div>
          <p className="dash-reason">
            <span>{m.reason}</span>
          </p>
          <p className="muted">
            <span>{t('dashboard.since', { time: formatTime(m.since, lang) })}</span>
          </p>
        </li>
      ))}
    </ul>
  );
}
