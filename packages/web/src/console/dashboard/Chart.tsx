// One time-series chart (uPlot, ~20 KB gzipped): loaded lazily, so that only
// the dashboard pays for it. Colours are read from the page's CSS variables
// (dashboard.css) and the chart is drawn again when the system switches
// between light and dark. uPlot draws on a canvas inside a div React leaves
// empty, so a page translator's rewriting never meets React's nodes.
import { useEffect, useRef, useSyncExternalStore } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  /** A CSS custom property holding the line's colour, e.g. '--chart-requests'. */
  color: string;
  values: (number | null)[];
  /** Values with gaps (latency: none where no request was made): joined across gaps, each one marked. */
  sparse?: boolean;
}

export interface ChartProps {
  title: string;
  /** Bucket starts, epoch ms. */
  times: number[];
  series: ChartSeries[];
  /** How a value reads on the axis and in the legend. */
  format: (v: number) => string;
  /** The reader's language: dates and times on the axis and in the legend. */
  lang: 'en' | 'zh';
  /** The legend's name for the time. */
  timeLabel: string;
  height?: number;
}

const DARK = '(prefers-color-scheme: dark)';
function useDarkScheme(): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const mq = window.matchMedia(DARK);
      mq.addEventListener('change', onChange);
      return () => mq.removeEventListener('change', onChange);
    },
    () => window.matchMedia(DARK).matches,
  );
}

/** Time ticks in 24-hour time, the date under the first tick and at midnight; only dates when ticks are days apart. */
function timeTicks(locale: string) {
  return (_u: uPlot, splits: number[], _axis: number, _space: number, incr: number): string[] =>
    splits.map((s, i) => {
      const d = new Date(s * 1000);
      const date = d.toLocaleDateString(locale, { month: 'short', day: 'numeric' });
      if (incr >= 86_400) return date;
      const time = d.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
      return i === 0 || (d.getHours() === 0 && d.getMinutes() === 0) ? `${time}\n${date}` : time;
    });
}

export default function Chart({ title, times, series, format, lang, timeLabel, height = 170 }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const dark = useDarkScheme();

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(el);
    const color = (name: string) => css.getPropertyValue(name).trim() || css.color;
    const text = color('--muted');
    const grid = color('--line');
    const font = `12px ${css.fontFamily}`;
    const locale = lang === 'zh' ? 'zh-CN' : 'en-US';
    const axis: uPlot.Axis = { stroke: text, font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      cursor: { drag: { x: false, y: false } },
      legend: { show: true },
      scales: {
        x: { time: true },
        // Counts, tokens, money and latency: never below zero; an empty series still has an axis.
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1] },
      },
      axes: [
        { ...axis, values: timeTicks(locale) },
        {
          ...axis,
          values: (_u, ticks) => ticks.map(format),
          // Room for the widest label: spend can read 0.000125.
          size: (_u, values) => (values ? Math.max(...values.map((v) => v.length)) * 7 + 18 : 40),
        },
      ],
      series: [
        { label: timeLabel, value: (_u, v) => (v === null ? '' : new Date(v * 1000).toLocaleString(locale, { dateStyle: 'short', timeStyle: 'short' })) },
        ...series.map((s) => ({
          label: s.label,
          stroke: color(s.color),
          width: 2,
          // Dense series (a zero where nothing happened) read as lines; sparse ones need their points.
          ...(s.sparse ? { spanGaps: true, points: { show: true, size: 6, fill: color(s.color) } } : { points: { show: false } }),
          value: (_u: uPlot, v: number | null) => (v === null ? '–' : format(v)),
        })),
      ],
    };
    const data: uPlot.AlignedData = [times.map((t) => t / 1000), ...series.map((s) => s.values)];
    const plot = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, format, lang, timeLabel, height, dark]);

  return (
    <figure className="chart card" aria-label={title}>
      <figcaption>
        <span>{title}</span>
      </figcaption>
      <div ref={box} className="chart-plot" />
    </figure>
  );
}
