/** The ledger's item shape: one entry per billed request (pk accountId, sk requestId). */
import * as z from 'zod';

/** How a request ended: finished, cut off midway (client left; tokens so far are billed), or never produced output. */
export type LedgerStatus = 'complete' | 'partial' | 'aborted';

/** What the gateway knows about a finished request, to be billed by `settle`. */
export interface LedgerEntryInput {
  accountId: string;
  /** From `newRequestId()`: time-ordered; the idempotency key of the settle. */
  requestId: string;
  /** The `model` the client asked for. */
  publicModel: string;
  /** The upstream model that answered (differs after a fallback). */
  servedModel: string;
  /** Provider id of the served model. */
  provider: string;
  promptTokens: number;
  completionTokens: number;
  /** Displayed input price of the served model, µUSD per 1M tokens. */
  inputPrice: number;
  /** Displayed output price of the served model, µUSD per 1M tokens. */
  outputPrice: number;
  /** True when the upstream sent no usage and the counts are our estimate. */
  usageEstimated: boolean;
  /** Targets tried in order, e.g. `["openai:gpt-4o", "azure:gpt-4o"]`; the last one served. */
  fallbackPath: string[];
  /** Default `complete`. */
  status?: LedgerStatus;
  /** SHA-256 hex of the API key that made the request. */
  keyHash?: string;
  /** Served with the account's own provider key: prices are the platform fee only. */
  byok?: boolean;
}

const count = z.number().int().nonnegative();

/** A stored ledger entry: the input plus the charge and creation time. */
export const ledgerItemSchema = z.object({
  accountId: z.string(),
  requestId: z.string(),
  publicModel: z.string(),
  servedModel: z.string(),
  provider: z.string(),
  promptTokens: count,
  completionTokens: count,
  inputPrice: count,
  outputPrice: count,
  usageEstimated: z.boolean(),
  fallbackPath: z.array(z.string()),
  status: z.enum(['complete', 'partial', 'aborted']),
  /** Tokens paid with free tokens (prompt first). */
  freeTokensUsed: count,
  /** Charged to credit, nano-USD. */
  costNanoUsd: count,
  /** ISO 8601. */
  createdAt: z.string(),
  keyHash: z.string().optional(),
  byok: z.boolean().optional(),
});

/** A stored ledger entry. */
export type LedgerItem = z.infer<typeof ledgerItemSchema>;

/** A failed settle after all retries. `entry` is everything needed to replay it (idempotent on requestId). */
export class LedgerWriteError extends Error {
  readonly entry: LedgerEntryInput;

  constructor(entry: LedgerEntryInput, cause: unknown) {
    super(`Could not write the ledger entry for ${entry.requestId} (account ${entry.accountId}).`, { cause });
    this.name = 'LedgerWriteError';
    this.entry = entry;
  }
}
