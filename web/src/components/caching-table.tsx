import type { DailyCaching } from '../usage/aggregate';
import { formatCount, formatUsd } from '../format/money';

/**
 * Prompt caching per UTC day × model: the prompt tokens read from and written to the
 * providers' caches, and what the cache reads saved (the API's `cache_discount_nano_usd`: cached tokens
 * × the input price − what they cost at the cached price). Nothing when no request used a cache.
 */
export function CachingTable({ rows, days }: { rows: readonly DailyCaching[]; days: number }) {
  if (rows.length === 0) return null;
  return (
    <section class="card" aria-labelledby="caching-heading">
      <div class="card-header">
        <h2 id="caching-heading">Prompt caching by day and model</h2>
      </div>
      <p class="lead">
        Cached tokens are prompt tokens the provider read from its cache, billed at the cached price; “Saved” is what they would have cost at the input price,
        less what they cost.
      </p>
      <div class="table-wrap">
        <table class="table responsive-table caching-table">
          <caption class="visually-hidden">Prompt caching by day and model, last {days} days</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Model</th>
              <th scope="col" class="num">
                Prompt tokens
              </th>
              <th scope="col" class="num">
                Cached tokens
              </th>
              <th scope="col" class="num">
                Cache writes
              </th>
              <th scope="col" class="num">
                Saved
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.date}/${r.model}`}>
                <td data-label="Day (UTC)">{r.date}</td>
                <th scope="row" data-label="Model">
                  {r.model}
                </th>
                <td data-label="Prompt tokens" class="num">
                  {formatCount(r.promptTokens)}
                </td>
                <td data-label="Cached tokens" class="num">
                  {formatCount(r.cachedTokens)}
                </td>
                <td data-label="Cache writes" class="num">
                  {formatCount(r.cacheWriteTokens)}
                </td>
                <td data-label="Saved" class="num">
                  {formatUsd(r.cacheDiscountNanoUsd)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
