/**
 * What the ledger says about the smoke test's requests, read only through the deployment's API:
 *
 * - each request's own entry, `GET /v1/generation?id=<request id>` with the key that made it (404 until
 *   its settle has written it): tokens, free tokens used and cost;
 * - the account API's `GET /v1/activity` rows of the key: the same requests, per served model, with
 *   the same token and cost sums;
 * - the balance, `GET /v1/account`: free tokens and credit moved by exactly those sums, once nothing is
 *   held. A function instance pays its requests from a lease (docs/credit-leases.md) and returns it
 *   when idle; a per-invocation Lambda container frozen between invocations returns it at its next
 *   invocation or leaves it to the orphan sweep, about 12.5 minutes after its requests with the
 *   defaults, so this check may wait that long on AWS (a few seconds locally). While it waits it
 *   invokes the chat and embeddings functions now and then ({@link nudgeFunctions}), so a warm
 *   container thaws and its overdue idle timer can return the lease.
 */
import { fetchJson, HttpError, type AccountApi, type AccountInfo, type ActivityRow } from './account-api';
import type { Answered } from './calls';

/** One request's ledger entry as `GET /v1/generation` shows it (the fields read here). */
export interface Generation {
  id: string;
  served_model: string;
  status: string;
  tokens_prompt: number;
  tokens_completion: number;
  free_tokens_used: number;
  cost_nano_usd: number;
}

/** How often a check that waits looks again, ms. */
const POLL_MS = 1_000;
/** How often the balance check invokes the functions while it waits, ms (a lease's default idle time). */
const NUDGE_MS = 5_000;

/**
 * Invokes the chat function (`GET /v1/models`) and the embeddings function (`GET /v1/embeddings`,
 * which it refuses with a 4xx) once each; answers and errors are ignored.
 */
export async function nudgeFunctions(baseUrl: string, apiKey: string): Promise<void> {
  const headers = { authorization: `Bearer ${apiKey}` };
  await Promise.all(
    ['/models', '/embeddings'].map((path) =>
      fetch(`${baseUrl}${path}`, { headers, signal: AbortSignal.timeout(10_000) })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined),
    ),
  );
}

/**
 * Calls `probe` until it returns a value or the deadline passes.
 * @throws the last error of `probe` (or `timeoutText`'s Error) at the deadline.
 */
async function until<T>(deadline: number, probe: () => Promise<T | undefined>, timeoutText: () => string): Promise<T> {
  for (;;) {
    let last: unknown;
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) throw last instanceof Error ? last : new Error(timeoutText());
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * The settled entry of each answered request, polled until its settle wrote it.
 * @throws Error when one is still missing at the deadline, or is not `complete`.
 */
export async function generations(baseUrl: string, apiKey: string, answered: readonly Answered[], deadline: number): Promise<Generation[]> {
  const out: Generation[] = [];
  for (const a of answered) {
    const url = `${baseUrl}/generation?id=${encodeURIComponent(a.requestId)}`;
    const g = await until(
      deadline,
      async () => {
        try {
          return (await fetchJson<{ data: Generation }>(url, { apiKey })).data;
        } catch (err) {
          if (err instanceof HttpError && err.status === 404) return undefined; // not settled yet
          throw err;
        }
      },
      () => `the ${a.step} request ${a.requestId} has no ledger entry (GET /v1/generation answers 404)`,
    );
    if (g.status !== 'complete') throw new Error(`the ${a.step} request ${a.requestId} settled as ${g.status}`);
    out.push(g);
  }
  return out;
}

/** Σ of a number field. */
const sum = <T>(items: readonly T[], field: (item: T) => number): number => items.reduce((n, i) => n + field(i), 0);

/** `{model: requests}` as text, for a message. */
const byModelText = (m: Map<string, number>): string =>
  [...m]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([model, n]) => `${model} ×${n}`)
    .join(', ');

/**
 * The key's activity rows, polled until they show the entries' requests, then checked to agree with
 * them: the same requests per served model, the same prompt and completion tokens and cost.
 * @returns the line for the step.
 * @throws Error when they do not agree by the deadline.
 */
export async function checkActivity(api: AccountApi, keyHash: string, entries: readonly Generation[], deadline: number): Promise<string> {
  const want = new Map<string, number>();
  for (const e of entries) want.set(e.served_model, (want.get(e.served_model) ?? 0) + 1);
  let rows: ActivityRow[] = [];
  await until(
    deadline,
    async () => {
      rows = (await api.activity()).filter((r) => r.key_hash === keyHash);
      return sum(rows, (r) => r.requests) >= entries.length ? rows : undefined;
    },
    () => `GET /v1/activity shows ${sum(rows, (r) => r.requests)} of this key's ${entries.length} requests`,
  );
  const got = new Map<string, number>();
  for (const r of rows) got.set(r.model, (got.get(r.model) ?? 0) + r.requests);
  const problems: string[] = [];
  if (byModelText(got) !== byModelText(want)) problems.push(`requests ${byModelText(got)}, the entries ${byModelText(want)}`);
  const pairs: Array<[string, number, number]> = [
    ['prompt tokens', sum(rows, (r) => r.prompt_tokens), sum(entries, (e) => e.tokens_prompt)],
    ['completion tokens', sum(rows, (r) => r.completion_tokens), sum(entries, (e) => e.tokens_completion)],
    ['cost nano-USD', sum(rows, (r) => r.usage_nano_usd), sum(entries, (e) => e.cost_nano_usd)],
  ];
  for (const [what, a, e] of pairs) if (a !== e) problems.push(`${what} ${a}, the entries ${e}`);
  if (problems.length > 0) throw new Error(`GET /v1/activity disagrees with the requests' entries: ${problems.join('; ')}`);
  const tokens = pairs[0]![1] + pairs[1]![1];
  return `${entries.length} requests of this key (${byModelText(want)}), ${tokens} tokens, ${pairs[2]![1]} nano-USD, as their entries say`;
}

/** What the balance should have moved by: the entries' free tokens and cost. */
function expectedMove(entries: readonly Generation[]): { freeTokens: number; costNanoUsd: number } {
  return { freeTokens: sum(entries, (e) => e.free_tokens_used), costNanoUsd: sum(entries, (e) => e.cost_nano_usd) };
}

/** The balance's move from `before` to `now`, when nothing is held any more (else undefined). */
function settledMove(before: AccountInfo, now: AccountInfo): { freeTokens: number; costNanoUsd: number; usage: number } | undefined {
  if (now.free_tokens_held !== 0 || now.credit_held_nano_usd !== 0) return undefined;
  return {
    freeTokens: before.free_tokens - now.free_tokens,
    costNanoUsd: before.credit_nano_usd - now.credit_nano_usd,
    usage: now.total_usage_nano_usd - before.total_usage_nano_usd,
  };
}

/**
 * Polls `GET /v1/account` until nothing is held and the balance moved by exactly the entries' free
 * tokens and cost (and `total_usage` by the cost).
 * @param wait `onWait` is called once, when the first look finds the balance not yet moved (to say why
 *        it waits); `nudge` every {@link NUDGE_MS} after that.
 * @returns the line for the step.
 * @throws Error at the deadline, with what the account showed last.
 */
export async function checkBalance(
  api: AccountApi,
  before: AccountInfo,
  entries: readonly Generation[],
  deadline: number,
  wait: { onWait: () => void; nudge: () => Promise<void> },
): Promise<string> {
  const want = expectedMove(entries);
  let last: AccountInfo = before;
  let waited = false;
  let nudgedAt = Date.now();
  await until(
    deadline,
    async () => {
      if (waited && Date.now() - nudgedAt >= NUDGE_MS) {
        nudgedAt = Date.now();
        await wait.nudge();
      }
      last = await api.account();
      const moved = settledMove(before, last);
      if (moved?.freeTokens === want.freeTokens && moved.costNanoUsd === want.costNanoUsd && moved.usage === want.costNanoUsd) return moved;
      if (!waited) wait.onWait();
      waited = true;
      return undefined;
    },
    () =>
      `the balance did not move by the requests' ${want.freeTokens} free tokens and ${want.costNanoUsd} nano-USD: free tokens ${before.free_tokens} → ${last.free_tokens} ` +
      `(held ${last.free_tokens_held}), credit ${before.credit_nano_usd} → ${last.credit_nano_usd} nano-USD (held ${last.credit_held_nano_usd}), ` +
      `total usage ${before.total_usage_nano_usd} → ${last.total_usage_nano_usd}`,
  );
  const credit =
    want.costNanoUsd === 0
      ? `credit unchanged at ${last.credit_nano_usd} nano-USD`
      : `credit ${before.credit_nano_usd} → ${last.credit_nano_usd} nano-USD (−${want.costNanoUsd})`;
  return `free tokens ${before.free_tokens} → ${last.free_tokens} (−${want.freeTokens}), ${credit}, nothing held: moved by exactly what the entries charged`;
}
