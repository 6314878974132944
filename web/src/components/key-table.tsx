import type { KeyRecord } from '../api/types';
import { formatAgo, formatDate, formatDateTime } from '../format/dates';
import { formatUsd } from '../format/money';
import { windowWords } from './key-limit-fields';

/**
 * The keys as a table (a stack of cards below 640 px, by CSS; each cell then shows its column name).
 * Row buttons carry the key's name in their accessible name, so a screen reader hears which key.
 */
export function KeyTable(props: {
  keys: readonly KeyRecord[];
  busy: boolean;
  onEdit: (k: KeyRecord) => void;
  onToggle: (k: KeyRecord) => void;
  onDelete: (k: KeyRecord) => void;
}) {
  return (
    <div class="table-wrap">
      <table class="table responsive-table keys-table">
        <caption class="visually-hidden">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Usage</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((k) => (
            <tr key={k.hash} class={k.disabled ? 'is-disabled' : ''}>
              <th scope="row" data-label="Name" class="key-name">
                {k.name}
              </th>
              <td data-label="Key" class="mono">
                {k.label}
              </td>
              <td data-label="Created">
                <time dateTime={k.created_at} title={formatDateTime(k.created_at)}>
                  {formatDate(k.created_at)}
                </time>
              </td>
              <td data-label="Last used">
                {k.last_used_at ? (
                  <time dateTime={k.last_used_at} title={formatDateTime(k.last_used_at)}>
                    {formatAgo(k.last_used_at)}
                  </time>
                ) : (
                  'Never'
                )}
              </td>
              <td data-label="Usage">
                <Usage k={k} />
              </td>
              <td data-label="Status">
                <span class={`badge ${k.disabled ? 'badge-muted' : 'badge-ok'}`}>{k.disabled ? 'Disabled' : 'Active'}</span>
              </td>
              <td class="row-actions">
                <button
                  type="button"
                  class="button button-small button-secondary"
                  aria-label={`Edit ${k.name}`}
                  onClick={() => props.onEdit(k)}
                  disabled={props.busy}
                >
                  Edit
                </button>
                <button
                  type="button"
                  class="button button-small button-secondary"
                  aria-label={`${k.disabled ? 'Enable' : 'Disable'} ${k.name}`}
                  onClick={() => props.onToggle(k)}
                  disabled={props.busy}
                >
                  {k.disabled ? 'Enable' : 'Disable'}
                </button>
                <button
                  type="button"
                  class="button button-small button-danger-quiet"
                  aria-label={`Delete ${k.name}`}
                  onClick={() => props.onDelete(k)}
                  disabled={props.busy}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Lifetime usage, and with a limit: what the window has left, as a meter. */
function Usage({ k }: { k: KeyRecord }) {
  if (k.limit_nano_usd === null) return <span>{formatUsd(k.usage_nano_usd)}</span>;
  const remaining = Math.max(0, k.limit_remaining_nano_usd ?? k.limit_nano_usd);
  const used = Math.max(0, k.limit_nano_usd - remaining);
  return (
    <div class="usage-cell">
      <span>
        {formatUsd(used)} of {formatUsd(k.limit_nano_usd)} {windowWords(k.limit_reset)}
      </span>
      <meter
        min={0}
        max={k.limit_nano_usd || 1}
        value={used}
        high={k.limit_nano_usd * 0.8}
        optimum={0}
        aria-label={`${k.name}: ${formatUsd(used)} of ${formatUsd(k.limit_nano_usd)} used`}
      />
      <span class="field-hint">All time: {formatUsd(k.usage_nano_usd)}</span>
    </div>
  );
}
