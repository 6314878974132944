import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { DailyChart } from '../usage/aggregate';

const MARGIN = { top: 12, right: 8, bottom: 28, left: 64 };

const dayLabel = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** "Nov 24" for a `YYYY-MM-DD` UTC date. */
export function shortDay(date: string): string {
  return dayLabel.format(Date.parse(`${date}T00:00:00Z`));
}

/** The smallest "nice" number (1, 2 or 5 × 10^n) ≥ `value`, so axis labels are round. */
export function niceCeil(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/**
 * A stacked bar chart drawn by hand in SVG: one bar per UTC day, one colour per model (colours by
 * class, in the stylesheet: the CSP allows no style attributes). Each segment has a <title> (hover
 * tooltip); the whole is one labelled image whose description sums it up, and the table below the
 * chart carries the same numbers for screen readers.
 */
export function UsageChart({ chart, format, label }: { chart: DailyChart; format: (value: number) => string; label: string }) {
  // Drawn at the width it is shown at (1 SVG unit = 1 CSS pixel), so labels stay legible on a phone.
  const figure = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(720);
  useLayoutEffect(() => {
    const el = figure.current;
    if (!el) return undefined;
    const observer = new ResizeObserver((entries) => {
      const w = Math.round(entries[0]?.contentRect.width ?? 0);
      if (w > 0) setWidth(Math.max(280, w));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const height = width < 500 ? 200 : 240;
  const every = width < 500 ? 7 : 5;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const top = niceCeil(chart.max);
  // Round steps: a top of 5·10^n in fifths, 1 or 2·10^n in quarters.
  const ticks = String(top).startsWith('5') ? 5 : 4;
  const step = plotW / Math.max(1, chart.dates.length);
  const barW = Math.max(2, step * 0.7);
  const y = (v: number): number => MARGIN.top + plotH - (v / top) * plotH;
  const dayTotals = chart.dates.map((_, i) => chart.series.reduce((sum, series) => sum + (series.values[i] ?? 0), 0));
  const busiestDate = chart.dates[dayTotals.indexOf(Math.max(...dayTotals))];
  const summary = `${label} per day over ${chart.dates.length} days, by model: ${format(chart.total)} in all${busiestDate ? `; highest on ${shortDay(busiestDate)}` : ''}. The table below has the figures.`;
  return (
    <figure class="chart" ref={figure}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby="chart-title chart-desc" preserveAspectRatio="xMidYMid meet">
        <title id="chart-title">{label} per day by model</title>
        <desc id="chart-desc">{summary}</desc>
        {Array.from({ length: ticks + 1 }, (_, t) => {
          const value = (top / ticks) * t;
          const ty = y(value);
          return (
            <g key={t} class="chart-grid" aria-hidden="true">
              <line x1={MARGIN.left} x2={width - MARGIN.right} y1={ty} y2={ty} />
              <text x={MARGIN.left - 6} y={ty + 4} text-anchor="end">
                {format(Math.round(value))}
              </text>
            </g>
          );
        })}
        {chart.dates.map((date, i) => {
          let base = 0;
          const x = MARGIN.left + i * step + (step - barW) / 2;
          return (
            <g key={date}>
              {chart.series.map((series, s) => {
                const v = series.values[i] ?? 0;
                if (v <= 0) return null;
                const y0 = y(base);
                base += v;
                const y1 = y(base);
                return (
                  <rect key={series.name} class={`series-${s}`} x={x} y={y1} width={barW} height={Math.max(1, y0 - y1)}>
                    <title>{`${shortDay(date)} · ${series.name}: ${format(v)}`}</title>
                  </rect>
                );
              })}
              {(chart.dates.length - 1 - i) % every === 0 && (
                <text
                  class="chart-axis"
                  x={i === chart.dates.length - 1 ? x + barW : x + barW / 2}
                  y={height - 8}
                  text-anchor={i === chart.dates.length - 1 ? 'end' : 'middle'}
                  aria-hidden="true"
                >
                  {shortDay(date)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend" aria-label="Models">
          {chart.series.map((series, s) => (
            <li key={series.name}>
              <span class={`swatch series-${s}`} aria-hidden="true" />
              {series.name} <span class="legend-value">{format(series.total)}</span>
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
