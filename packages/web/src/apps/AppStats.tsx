// /apps/:appId/stats: the application's figures over the last day, week,
// month or quarter, per hour or day (UTC, the platform's buckets): totals,
// then charts of questions and chats, feedback and answers from annotations,
// tokens, cost, and time to the first text. The charts are the gateway
// console's (uPlot), loaded only when this page shows them.
import type { AppStatsQuery } from '@kbchat/contracts';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useMemo, useState } from 'react';
import { api, withQuery, type AppStats } from '../api';
import type { ChartProps, ChartSeries } from '../console/dashboard/Chart';
import '../console/dashboard/dashboard.css';
import { formatCompact, formatMs } from '../console/dashboard/view';
import { formatUnits } from '../console/gateway-api';
import { useLang, type MessageKey } from '../i18n';
import { keepPreviousData } from '../query';
import { Boundary, formatTime, Loading } from '../ui';
import { AppSubpage } from './AppSubpage';
import { SelectField } from './fields';

const Chart = lazy(() => import('../console/dashboard/Chart'));

type Bucket = AppStats['bucket'];
const DAY_MS = 86_400_000;
const PERIODS = [1, 7, 30, 90] as const;
type Period = (typeof PERIODS)[number];
/** The platform answers at most 1,000 buckets: 90 days of hours are more. */
const fits = (bucket: Bucket, days: Period) => bucket === 'day' || days * 24 <= 1_000;

export function AppStatsPage({ appId }: { appId: string }) {
  const { t } = useLang();
  const [bucket, setBucket] = useState<Bucket>('day');
  const [days, setDays] = useState<Period>(7);
  const pickBucket = (b: Bucket) => {
    setBucket(b);
    if (!fits(b, days)) setDays(30);
  };
  return (
    <AppSubpage appId={appId} title={t('stats.title')}>
      <div className="toolbar ap-filters">
        <SelectField
          label={t('stats.bucket')}
          value={bucket}
          onChange={(b) => pickBucket(b as Bucket)}
          options={(['hour', 'day'] as const).map((b) => ({ value: b, label: t(`stats.bucket.${b}`) }))}
        />
        <SelectField
          label={t('stats.period')}
          value={String(days)}
          onChange={(d) => setDays(Number(d) as Period)}
          options={PERIODS.filter((d) => fits(bucket, d)).map((d) => ({ value: String(d), label: t(`stats.period.${d}`) }))}
        />
      </div>
      <Figures appId={appId} bucket={bucket} days={days} />
    </AppSubpage>
  );
}

function Figures({ appId, bucket, days }: { appId: string; bucket: Bucket; days: Period }) {
  const { t, lang } = useLang();
  // The period ends when it is asked for: Refresh (or another choice) asks again, up to that moment.
  const { data, refetch, isFetching } = useQuery({
    queryKey: ['apps', appId, 'stats', { bucket, days }],
    queryFn: ({ signal }) => {
      const to = Date.now();
      return api<AppStats>(withQuery('/api/core/app/stats', { appId, bucket, from: to - days * DAY_MS, to } satisfies AppStatsQuery), { signal });
    },
    placeholderData: keepPreviousData,
  });
  if (!data) return <Loading />;
  return (
    <div className="stack ap-stats">
      <div className="row">
        <p className="muted grow ap-note" data-testid="stats-covers">
          <span>{t('stats.covers', { from: formatTime(data.from, lang), to: formatTime(data.to, lang), bucket: t(`stats.bucket.${data.bucket}`) })}</span>
        </p>
        <button type="button" className="secondary" disabled={isFetching} onClick={() => void refetch()}>
          <span>{t('stats.refresh')}</span>
        </button>
      </div>
      <Totals totals={data.totals} />
      <Charts data={data} />
    </div>
  );
}

function Totals({ totals }: { totals: AppStats['totals'] }) {
  const { t, count } = useLang();
  const ms = (v: number | null) => (v === null ? t('stats.none') : formatMs(v));
  const tiles: [MessageKey, string][] = [
    ['stats.questions', count(totals.questions)],
    ['stats.chats', count(totals.chats)],
    ['stats.visitors', count(totals.visitors)],
    ['stats.good', count(totals.goodFeedback)],
    ['stats.bad', count(totals.badFeedback)],
    ['stats.annotationAnswers', count(totals.annotationAnswers)],
    ['stats.uncited', count(totals.uncitedAnswers)],
    ['stats.tokens', count(totals.tokens)],
    ['stats.cost', formatUnits(totals.cost)],
    ['stats.ttftP50', ms(totals.ttftP50Ms)],
    ['stats.ttftP95', ms(totals.ttftP95Ms)],
  ];
  return (
    <section aria-label={t('stats.totals')}>
      <dl className="dash-tiles">
        {tiles.map(([label, value]) => (
          <div key={label} className="dash-tile card" data-testid={label}>
            <dt>
              <span>{t(label)}</span>
            </dt>
            <dd>
              <span className="dash-value">{value}</span>
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

type ChartSpec = Pick<ChartProps, 'title' | 'times' | 'series' | 'format'>;

function Charts({ data }: { data: AppStats }) {
  const { t, lang } = useLang();
  const charts = useMemo((): ChartSpec[] => {
    const times = data.buckets.map((b) => Date.parse(b.start));
    const line = (label: MessageKey, color: string, pick: (b: AppStats['buckets'][number]) => number | null, sparse = false): ChartSeries => ({
      label: t(label),
      color,
      values: data.buckets.map(pick),
      sparse,
    });
    return [
      {
        title: t('stats.chart.questions'),
        format: formatCompact,
        times,
        series: [line('stats.questions', '--chart-questions', (b) => b.questions), line('stats.chats', '--chart-chats', (b) => b.chats)],
      },
      {
        title: t('stats.chart.feedback'),
        format: formatCompact,
        times,
        series: [
          line('stats.good', '--chart-good', (b) => b.goodFeedback),
          line('stats.bad', '--chart-bad', (b) => b.badFeedback),
          line('stats.annotationAnswers', '--chart-annotations', (b) => b.annotationAnswers),
        ],
      },
      { title: t('stats.chart.tokens'), format: formatCompact, times, series: [line('stats.tokens', '--chart-tokens', (b) => b.tokens)] },
      { title: t('stats.chart.cost'), format: formatUnits, times, series: [line('stats.cost', '--chart-cost', (b) => b.cost)] },
      {
        title: t('stats.chart.ttft'),
        format: formatMs,
        times,
        series: [line('stats.ttftP50', '--chart-p50', (b) => b.ttftP50Ms, true), line('stats.ttftP95', '--chart-p95', (b) => b.ttftP95Ms, true)],
      },
    ];
    // t follows lang; a new chart at each render would flicker.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data, lang]);
  return (
    <div className="dash-charts">
      {charts.map((c) => (
        // Each chart on its own: one that fails leaves the totals and the other charts in place.
        <Boundary key={c.title}>
          <Suspense fallback={<Loading />}>
            <Chart {...c} lang={lang} timeLabel={t('stats.time')} />
          </Suspense>
        </Boundary>
      ))}
    </div>
  );
}
