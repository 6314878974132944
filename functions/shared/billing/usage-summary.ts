/** Sums of an account's ledger: what the admin CLI's `usage` prints. */
import { InvalidRequestError } from '../errors/gateway-errors';
import { readState } from './account-state';
import { forEachLedgerEntry } from './ledger-read';

/** Token and money totals over a set of ledger entries. */
export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  freeTokensUsed: number;
  /** nano-USD. */
  costNanoUsd: number;
}

/** Totals for an account, overall and per public model. */
export interface UsageSummary extends UsageTotals {
  accountId: string;
  /** ISO 8601 lower bound, when one was given. */
  since?: string;
  byModel: Record<string, UsageTotals>;
}

const emptyTotals = (): UsageTotals => ({ requests: 0, promptTokens: 0, completionTokens: 0, freeTokensUsed: 0, costNanoUsd: 0 });

function add(t: UsageTotals, e: Omit<UsageTotals, 'requests'>): void {
  t.requests += 1;
  t.promptTokens += e.promptTokens;
  t.completionTokens += e.completionTokens;
  t.freeTokensUsed += e.freeTokensUsed;
  t.costNanoUsd += e.costNanoUsd;
}

/**
 * Sums the account's settled ledger entries (all pages, every fund shard's partition; holds in flight
 * are skipped), optionally only those whose request id was made at or after `since` (ISO 8601; uses
 * the time-ordered request id as the range key, see request-id.ts).
 * @throws InvalidRequestError for an unparsable `since`; StoreUnavailableError (503).
 */
export async function usageSummary(accountId: string, opts: { since?: string } = {}): Promise<UsageSummary> {
  const sinceMs = opts.since === undefined ? undefined : Date.parse(opts.since);
  if (sinceMs !== undefined && Number.isNaN(sinceMs)) {
    throw new InvalidRequestError(`"${opts.since}" is not an ISO 8601 date.`, { param: 'since' });
  }
  const summary: UsageSummary = { accountId, ...emptyTotals(), byModel: {} };
  if (sinceMs !== undefined) summary.since = new Date(sinceMs).toISOString();
  const root = await readState(accountId, { consistent: true });
  await forEachLedgerEntry(
    accountId,
    sinceMs,
    (e) => {
      add(summary, e);
      add((summary.byModel[e.publicModel] ??= emptyTotals()), e);
    },
    root.shards,
  );
  return summary;
}
