import { useMemo, useState } from 'preact/hooks';
import type { ActivityRow } from '../api/types';
import { CachingTable } from '../components/caching-table';
import { Page } from '../components/page';
import { Empty, ErrorNotice, Loading } from '../components/status';
import { UsageChart } from '../components/usage-chart';
import { useServices } from '../context';
import { lastUtcDays } from '../format/dates';
import { formatCount, formatUsd } from '../format/money';
import { useResource } from '../hooks';
import { href } from '../router';
import { byModelAndKey, cachingByDayAndModel, dailyByModel, totalsOf, type UsageMetric } from '../usage/aggregate';
import { activityCsv } from '../usage/csv';

/** The period the page shows, days (UTC, today included). */
export const USAGE_DAYS = 30;

const METRICS: ReadonlyArray<{ id: UsageMetric; label: string }> = [
  { id: 'cost', label: 'Cost' },
  { id: 'tokens', label: 'Tokens' },
  { id: 'requests', label: 'Requests' },
];

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** Daily cost by model over 30 days (chart), the same by model and key (table), and a CSV of it all. */
export function UsagePage() {
  const { api } = useServices();
  const activity = useResource(() => api.activity(USAGE_DAYS));
  return (
    <Page
      title="Usage"
      description={`The last ${USAGE_DAYS} days (UTC). Free tokens are used first, so early requests may cost $0.00.`}
      actions={
        <button type="button" class="button button-secondary" onClick={activity.reload} disabled={activity.state === 'loading'}>
          Refresh
        </button>
      }
    >
      {activity.state === 'error' && <ErrorNotice message={activity.error} onRetry={activity.reload} />}
      {activity.data ? <UsageReport rows={activity.data} /> : activity.state === 'loading' && <Loading label="Loading your usage…" />}
    </Page>
  );
}

function UsageReport({ rows }: { rows: ActivityRow[] }) {
  const [metric, setMetric] = useState<UsageMetric>('cost');
  const dates = useMemo(() => lastUtcDays(USAGE_DAYS), []);
  const chart = useMemo(() => dailyByModel(rows, dates, metric), [rows, dates, metric]);
  const table = useMemo(() => byModelAndKey(rows), [rows]);
  const totals = useMemo(() => totalsOf(rows), [rows]);
  const caching = useMemo(() => cachingByDayAndModel(rows), [rows]);
  if (rows.length === 0) {
    return (
      <section class="card">
        <Empty title={`No requests in the last ${USAGE_DAYS} days`}>
          <p>
            <a href={href('keys')}>Create a key</a> and send a request: it shows up here within seconds.
          </p>
        </Empty>
      </section>
    );
  }
  const format = metric === 'cost' ? formatUsd : (v: number) => compact.format(v);
  const label = METRICS.find((m) => m.id === metric)?.label ?? '';
  return (
    <>
      <dl class="stats stats-small">
        <div class="stat">
          <dt>Requests</dt>
          <dd class="stat-value">{formatCount(totals.requests)}</dd>
        </div>
        <div class="stat">
          <dt>Tokens</dt>
          <dd class="stat-value">{formatCount(totals.tokens)}</dd>
        </div>
        <div class="stat">
          <dt>Cost</dt>
          <dd class="stat-value">{formatUsd(totals.costNanoUsd)}</dd>
        </div>
        <div class="stat">
          <dt>Saved by caching</dt>
          <dd class="stat-value">{formatUsd(totals.cacheDiscountNanoUsd)}</dd>
        </div>
      </dl>
      <section class="card" aria-labelledby="chart-heading">
        <div class="card-header">
          <h2 id="chart-heading">Daily {label.toLowerCase()} by model</h2>
          <fieldset class="segmented">
            <legend class="visually-hidden">Show</legend>
            {METRICS.map((m) => (
              <label key={m.id} class={metric === m.id ? 'is-selected' : ''}>
                <input type="radio" name="metric" value={m.id} checked={metric === m.id} onChange={() => setMetric(m.id)} />
                {m.label}
              </label>
            ))}
          </fieldset>
        </div>
        {chart.total === 0 ? (
          <Empty title={`No ${label.toLowerCase()} to chart`}>{metric === 'cost' && <p>Your requests so far were paid with free tokens.</p>}</Empty>
        ) : (
          <UsageChart chart={chart} format={format} label={label} />
        )}
      </section>
      <section class="card" aria-labelledby="table-heading">
        <div class="card-header">
          <h2 id="table-heading">By model and key</h2>
          <button type="button" class="button button-secondary" onClick={() => downloadCsv(rows)}>
            Download CSV
          </button>
        </div>
        <div class="table-wrap">
          <table class="table responsive-table usage-table">
            <caption class="visually-hidden">Usage by model and key, last {USAGE_DAYS} days</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Key</th>
                <th scope="col" class="num">
                  Requests
                </th>
                <th scope="col" class="num">
                  Prompt tokens
                </th>
                <th scope="col" class="num">
                  Completion tokens
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
              </tr>
            </thead>
            <tbody>
              {table.map((r) => (
                <tr key={`${r.model}/${r.keyHash}`}>
                  <th scope="row" data-label="Model">
                    {r.model}
                    <span class="cell-note">
                      {r.provider}
                      {r.byokRequests > 0 ? ` · ${formatCount(r.byokRequests)} with your key` : ''}
                    </span>
                  </th>
                  <td data-label="Key">{r.keyName}</td>
                  <td data-label="Requests" class="num">
                    {formatCount(r.requests)}
                  </td>
                  <td data-label="Prompt tokens" class="num">
                    {formatCount(r.promptTokens)}
                  </td>
                  <td data-label="Completion tokens" class="num">
                    {formatCount(r.completionTokens)}
                  </td>
                  <td data-label="Cost" class="num">
                    {formatUsd(r.costNanoUsd)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <CachingTable rows={caching} days={USAGE_DAYS} />
    </>
  );
}

/** Saves the rows as `modelmux-usage-<today>.csv` (a Blob URL: nothing is sent anywhere). */
function downloadCsv(rows: readonly ActivityRow[]): void {
  const blob = new Blob([activityCsv(rows)], { type: 'text/csv;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = `modelmux-usage-${new Date().toISOString().slice(0, 10)}.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
