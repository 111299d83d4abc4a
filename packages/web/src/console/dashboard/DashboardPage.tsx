// /dashboard: the gateway's traffic over a range (the last hour, day, week,
// or one chosen), split by model, channel, token or user; the users who spent
// most; what is disabled now. The view is kept in the address (view.ts).
// Everything comes from GET /api/dashboard (its rollups answer in
// milliseconds at millions of log rows); a relative range is asked for again
// every 30 s. The charts' library is loaded only when there is a chart.
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useMemo, useState, type FormEvent } from 'react';
import { useLocation, useSearch } from 'wouter';
import { withQuery } from '../../api';
import type { DashboardAnswer, DashboardDimension } from '@kbchat/contracts';
import { useLang, type MessageKey } from '../../i18n';
import { Boundary, formatTime, Loading } from '../../ui';
import { formatUnits, gatewayApi, type GatewayUser } from '../gateway-api';
import type { ChartSeries } from './Chart';
import { DisabledList, groupName, GroupsTable, TopUsersTable, TotalsTiles } from './sections';
import { formatCompact, formatMs, fromLocalInput, GROUPS, RANGE_MS, RANGES, searchOf, toLocalInput, viewOf, windowOf, type RangeName, type View } from './view';
import '../console.css';
import './dashboard.css';

const Chart = lazy(() => import('./Chart'));
/** Groups shown by name; the rest is "other". */
const TOP_GROUPS = 8;
const POLL_MS = 30_000;

export default function DashboardPage({ me }: { me: GatewayUser }) {
  void me;
  const { t } = useLang();
  const search = useSearch();
  const [, navigate] = useLocation();
  const view = viewOf(search);
  const go = (next: View) => navigate(searchOf(next));
  return (
    <section className="stack dashboard">
      <h1>{t('dashboard.title')}</h1>
      <Controls key={view.range === 'custom' ? `${view.from}|${view.to}` : 'relative'} view={view} go={go} />
      <Boundary key={searchOf(view)}>
        <Body view={view} />
      </Boundary>
    </section>
  );
}

function Controls({ view, go }: { view: View; go: (v: View) => void }) {
  const { t } = useLang();
  const [from, setFrom] = useState(() => (view.from ? toLocalInput(Date.parse(view.from)) : ''));
  const [to, setTo] = useState(() => (view.to ? toLocalInput(Date.parse(view.to)) : ''));

  const pickRange = (range: RangeName) => {
    if (range !== 'custom') return go({ range, group: view.group });
    // A chosen range starts as the last day, to the minute: then the reader moves its ends.
    const now = Math.ceil(Date.now() / 60_000) * 60_000;
    const f = toLocalInput(now - RANGE_MS.day);
    const tt = toLocalInput(now);
    setFrom(f);
    setTo(tt);
    go({ range, from: fromLocalInput(f), to: fromLocalInput(tt), group: view.group });
  };
  const apply = (e: FormEvent) => {
    e.preventDefault();
    go({ range: 'custom', from: fromLocalInput(from), to: fromLocalInput(to), group: view.group });
  };

  return (
    <div className="stack">
      <div className="toolbar dash-controls">
        <label>
          <span>{t('dashboard.range')}</span>
          <select aria-label={t('dashboard.range')} value={view.range} onChange={(e) => pickRange(e.target.value as RangeName)}>
            {RANGES.map((r) => (
              <option key={r} value={r}>
                {t(`dashboard.range.${r}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('dashboard.groupBy')}</span>
          <select aria-label={t('dashboard.groupBy')} value={view.group} onChange={(e) => go({ ...view, group: e.target.value as DashboardDimension })}>
            {GROUPS.map((g) => (
              <option key={g} value={g}>
                {t(`dashboard.group.${g}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {view.range === 'custom' && (
        <form className="toolbar dash-controls" onSubmit={apply} aria-label={t('dashboard.customRange')}>
          <label>
            <span>{t('dashboard.from')}</span>
            <input type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} required />
          </label>
          <label>
            <span>{t('dashboard.to')}</span>
            <input type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} required />
          </label>
          <button type="submit">
            <span>{t('dashboard.apply')}</span>
          </button>
        </form>
      )}
    </div>
  );
}

function Body({ view }: { view: View }) {
  const { t, lang } = useLang();
  // A window that ends now is read again every POLL_MS (its window moves with the clock); a custom one is fixed.
  const { data, refetch } = useQuery({
    queryKey: ['dashboard', searchOf(view)],
    queryFn: ({ signal }) =>
      gatewayApi<DashboardAnswer>(withQuery('/api/dashboard', { ...windowOf(view), group_by: view.group, top: TOP_GROUPS, users: 10 }), { signal }),
    refetchInterval: view.range !== 'custom' ? POLL_MS : false,
  });
  const reload = () => refetch();
  if (!data) return <Loading />;
  const empty = data.totals.requests === 0;
  return (
    <>
      <div className="row dash-covers">
        <p className="muted grow" data-testid="covers">
          <span>
            {t('dashboard.covers', { from: formatTime(data.from, lang), to: formatTime(data.to, lang), bucket: t(`dashboard.bucket.${data.bucket}`) })}
          </span>
        </p>
        <button type="button" className="secondary" onClick={() => void reload()}>
          <span>{t('dashboard.refresh')}</span>
        </button>
      </div>
      {empty ? (
        <div className="notice" role="status" data-testid="no-traffic">
          <strong>{t('dashboard.noTraffic')}</strong>
          <p>
            <span>{t('dashboard.noTrafficHint')}</span>
          </p>
        </div>
      ) : (
        <>
          <TotalsTiles totals={data.totals} />
          <Charts data={data} />
          <h2>{t(`dashboard.by.${view.group}`)}</h2>
          <GroupChart data={data} dim={view.group} />
          <GroupsTable groups={data.groups ?? []} dim={view.group} />
          {(data.groups ?? []).some((g) => !g.other && g.totals.requests > 0 && g.totals.latency_p50_ms === null) && (
            <p className="muted" data-testid="percentiles-capped">
              <span>{t('dashboard.percentilesCapped')}</span>
            </p>
          )}
        </>
      )}
      <h2>{t('dashboard.topUsers')}</h2>
      <TopUsersTable users={data.top_users} />
      <h2>{t('dashboard.disabled')}</h2>
      <DisabledList disabled={data.disabled} />
    </>
  );
}

function Charts({ data }: { data: DashboardAnswer }) {
  const { t, lang } = useLang();
  const charts = useMemo(() => {
    const times = data.points.map((p) => p.t);
    const of = (f: (p: DashboardAnswer['points'][number]) => number | null) => data.points.map(f);
    const line = (label: MessageKey, color: string, values: (number | null)[], sparse = false): ChartSeries => ({ label: t(label), color, values, sparse });
    return [
      {
        title: t('dashboard.chart.requests'),
        format: formatCompact,
        times,
        series: [
          line(
            'dashboard.requests',
            '--chart-requests',
            of((p) => p.requests),
          ),
          line(
            'dashboard.errors',
            '--chart-errors',
            of((p) => p.errors),
          ),
        ],
      },
      {
        title: t('dashboard.chart.tokens'),
        format: formatCompact,
        times,
        series: [
          line(
            'dashboard.tokensIn',
            '--chart-in',
            of((p) => p.prompt_tokens),
          ),
          line(
            'dashboard.tokensOut',
            '--chart-out',
            of((p) => p.completion_tokens),
          ),
        ],
      },
      {
        title: t('dashboard.chart.spend'),
        format: formatUnits,
        times,
        series: [
          line(
            'dashboard.spend',
            '--chart-spend',
            of((p) => p.cost),
          ),
        ],
      },
      {
        title: t('dashboard.chart.latency'),
        format: formatMs,
        times,
        series: [
          line(
            'dashboard.p50',
            '--chart-p50',
            of((p) => p.latency_p50_ms),
            true,
          ),
          line(
            'dashboard.p95',
            '--chart-p95',
            of((p) => p.latency_p95_ms),
            true,
          ),
        ],
      },
    ];
    // t follows lang; t itself is new at each render, and a new chart each render would flicker.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data, lang]);
  return (
    <div className="dash-charts">
      {charts.map((c) => (
        <Suspense key={c.title} fallback={<Loading />}>
          <Chart {...c} lang={lang} timeLabel={t('dashboard.time')} />
        </Suspense>
      ))}
    </div>
  );
}

type GroupMetric = 'requests' | 'errors' | 'tokens' | 'cost';
const METRICS: GroupMetric[] = ['requests', 'errors', 'tokens', 'cost'];

/** One metric over time, a line per group. */
function GroupChart({ data, dim }: { data: DashboardAnswer; dim: DashboardDimension }) {
  const { t, lang } = useLang();
  const [metric, setMetric] = useState<GroupMetric>('requests');
  const chart = useMemo(() => {
    const groups = data.groups ?? [];
    const value = (p: DashboardAnswer['points'][number]) =>
      metric === 'tokens' ? p.prompt_tokens + p.completion_tokens : metric === 'cost' ? p.cost : p[metric];
    return {
      times: data.points.map((p) => p.t),
      series: groups.map((g, i) => ({ label: groupName(g, dim, t), color: g.other ? '--muted' : `--chart-${(i % 8) + 1}`, values: g.points.map(value) })),
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data, dim, metric, lang]);
  if (chart.series.length === 0) return null;
  return (
    <div className="stack">
      <label className="dash-metric">
        <span>{t('dashboard.metric')}</span>
        <select aria-label={t('dashboard.metric')} value={metric} onChange={(e) => setMetric(e.target.value as GroupMetric)}>
          {METRICS.map((m) => (
            <option key={m} value={m}>
              {t(`dashboard.metric.${m}`)}
            </option>
          ))}
        </select>
      </label>
      <Suspense fallback={<Loading />}>
        <Chart
          title={t('dashboard.chart.byGroup', { metric: t(`dashboard.metric.${metric}`), group: t(`dashboard.word.${dim}`) })}
          times={chart.times}
          series={chart.series}
          format={metric === 'cost' ? formatUnits : formatCompact}
          lang={lang}
          timeLabel={t('dashboard.time')}
        />
      </Suspense>
    </div>
  );
}
