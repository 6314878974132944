/**
 * What storing Responses API responses costs (`store: true`, OpenAI's default; responses/response-store.ts):
 * the DynamoDB calls and capacity units a request makes beyond the same request with `store: false`, for
 * the shapes that matter — one turn buffered and streamed, the 10th turn of a chat that replays earlier
 * answers as `item_reference` (the Vercel AI SDK's default), the 10th turn of a `previous_response_id`
 * chain (the openai SDK's way), and a 600 KB image (the input split over part items). Run against the
 * gateway bundles with the bench's call counter (aws-calls.ts: the units DynamoDB Local reports).
 */
import { randomBytes } from 'node:crypto';
import type { AwsCalls } from './aws-calls';
import { isRead, isWrite } from './aws-calls';
import type { Gateway, System } from './system';

/** One measured shape: the extra per request of `store: true` over the same request with `store: false`. */
export interface StoredResponseFigures {
  label: string;
  /** Requests averaged. */
  requests: number;
  /** DynamoDB calls, write units and read units added per request. */
  calls: number;
  writeUnits: number;
  readUnits: number;
  /** Operation → calls added per request, e.g. `PutItem ×1`. */
  operations: string;
  /** Wall time of the added DynamoDB calls per request (DynamoDB Local on this machine), ms. */
  dynamoMs: number;
}

type Body = Record<string, unknown>;

const MODEL = 'gpt-4o-mini';

/** Sends one Responses request and reads the answer whole; returns the response id. @throws Error on a non-200. */
async function send(gateway: Gateway, apiKey: string, body: Body): Promise<string> {
  const res = await fetch(`${gateway.origin}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/v1/responses: status ${res.status}: ${text.slice(0, 300)}`);
  if (body['stream'] === true) {
    const last = text.trim().split('\n\n').at(-1) ?? '';
    return (JSON.parse(/^data: (.*)$/m.exec(last)?.[1] ?? '{}') as { response?: { id?: string } }).response?.id ?? '';
  }
  return (JSON.parse(text) as { id: string }).id;
}

/**
 * The operations of the responses store (RESPONSES_TABLE_ACTIONS); the rest of a request's calls (the
 * hold, the settle, an occasional balance re-read) are the same with and without `store` and are left
 * out, so their noise does not blur the difference.
 */
const STORE_OPERATIONS = new Set(['DynamoDB.PutItem', 'DynamoDB.BatchGetItem', 'DynamoDB.DeleteItem']);

/** Calls, units and time of the store's operations in `calls`. */
function totals(calls: AwsCalls): { calls: number; write: number; read: number; ms: number; ops: Map<string, number> } {
  const out = { calls: 0, write: 0, read: 0, ms: 0, ops: new Map<string, number>() };
  for (const [op, c] of Object.entries(calls)) {
    if (!STORE_OPERATIONS.has(op)) continue;
    out.calls += c.calls;
    out.ms += c.totalMs;
    if (isWrite(op)) out.write += c.capacityUnits;
    if (isRead(op)) out.read += c.capacityUnits;
    out.ops.set(op.slice('DynamoDB.'.length), c.calls);
  }
  return out;
}

/** The calls of `n` requests made by `run`, after the gateway is idle (settles included). */
async function measured(gateway: Gateway, n: number, run: () => Promise<void>): Promise<ReturnType<typeof totals>> {
  await gateway.idle();
  await gateway.take();
  for (let i = 0; i < n; i++) await run();
  await gateway.idle();
  return totals((await gateway.take()).calls);
}

/** `stored` minus `twin`, per request. */
function extra(label: string, n: number, stored: ReturnType<typeof totals>, twin: ReturnType<typeof totals>): StoredResponseFigures {
  const ops = [...stored.ops].map(([op, c]) => [op, (c - (twin.ops.get(op) ?? 0)) / n] as const).filter(([, c]) => c > 0);
  return {
    label,
    requests: n,
    calls: (stored.calls - twin.calls) / n,
    writeUnits: (stored.write - twin.write) / n,
    readUnits: (stored.read - twin.read) / n,
    operations: ops.map(([op, c]) => `${op} ×${Math.round(c * 100) / 100}`).join(', ') || '—',
    dynamoMs: Math.max(0, stored.ms - twin.ms) / n,
  };
}

/** A chat of `turns` user turns: each later one replays the earlier answers as item references (the AI SDK's default). */
async function referencingChat(gateway: Gateway, apiKey: string, turns: number): Promise<Body[]> {
  const input: Body[] = [];
  for (let t = 1; t < turns; t++) {
    input.push({ role: 'user', content: [{ type: 'input_text', text: `Turn ${t}: tell me something about the benchmark.` }] });
    const id = await send(gateway, apiKey, { model: MODEL, input, max_output_tokens: 40 });
    input.push({ type: 'item_reference', id: `msg_${id.slice('resp_'.length)}_0` });
  }
  input.push({ role: 'user', content: [{ type: 'input_text', text: `Turn ${turns}: and finally?` }] });
  return input;
}

/** Runs every shape; `n` requests each for the single-turn ones. */
export async function measureStoredResponses(system: System, gateway: Gateway, n: number): Promise<StoredResponseFigures[]> {
  const key = system.apiKey;
  const hello = { model: MODEL, input: 'Say hello to the benchmark, briefly.', max_output_tokens: 15 };
  const rows: StoredResponseFigures[] = [];
  const pair = async (label: string, times: number, body: () => Body | Promise<Body>, twin: () => Body | Promise<Body>): Promise<void> => {
    const stored = await measured(gateway, times, async () => void (await send(gateway, key, await body())));
    const plain = await measured(gateway, times, async () => void (await send(gateway, key, await twin())));
    rows.push(extra(label, times, stored, plain));
  };
  await pair('one turn, buffered, 15 tokens', n, () => hello, () => ({ ...hello, store: false }));
  await pair('one turn, streamed, 15 tokens', n, () => ({ ...hello, stream: true }), () => ({ ...hello, stream: true, store: false }));

  // The 10th turn of a chat replaying 9 earlier answers by reference, against the same turn sent whole.
  const chat = await referencingChat(gateway, key, 10);
  await pair('10th turn, 9 earlier answers as item_reference (AI SDK default)', 1, () => ({ model: MODEL, input: chat, max_output_tokens: 40 }), async () => {
    const whole = chat.map((i) => (i['type'] === 'item_reference' ? { role: 'assistant', content: 'An earlier answer about the benchmark, about forty tokens long, as the simulator writes it.' } : i));
    return { model: MODEL, input: whole, max_output_tokens: 40, store: false };
  });

  // The 10th turn of a previous_response_id chain, against the same conversation sent whole.
  let previous: string | undefined;
  for (let t = 1; t < 10; t++) previous = await send(gateway, key, { model: MODEL, input: `Turn ${t}: tell me something.`, max_output_tokens: 40, ...(previous ? { previous_response_id: previous } : {}) });
  await pair('10th turn of a previous_response_id chain', 1, () => ({ model: MODEL, input: 'And finally?', max_output_tokens: 40, previous_response_id: previous }), () => ({
    model: MODEL,
    input: Array.from({ length: 9 }, (_, t) => [{ role: 'user', content: `Turn ${t + 1}: tell me something.` }, { role: 'assistant', content: 'An earlier answer about the benchmark, about forty tokens long.' }]).flat().concat([{ role: 'user', content: 'And finally?' }]),
    max_output_tokens: 40,
    store: false,
  }));

  // An image sent as a data URL: incompressible, so the input goes to part items.
  const image = { role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: `data:image/png;base64,${randomBytes(450_000).toString('base64')}`, detail: 'low' }] };
  await pair('one turn with a 600 KB image (input in part items)', 2, () => ({ model: MODEL, input: [image], max_output_tokens: 15 }), () => ({ model: MODEL, input: [image], max_output_tokens: 15, store: false }));
  return rows;
}

/** The report's section. */
export function storedResponsesSection(rows: readonly StoredResponseFigures[]): string {
  const f = (x: number): string => (Math.round(x * 100) / 100).toString();
  return [
    'What `store: true` (the Responses API default) adds to a request, over the same request with `store: false`: the stored',
    'response (one brotli-compressed item; part items past 64 KiB), and the strongly consistent reads of what a turn continues.',
    'On-demand DynamoDB bills 1 write unit per KB written and 1 read unit per 4 KB read strongly consistent. Items expire after',
    '30 days (TTL deletes cost nothing); storage is $0.25 per GB-month.',
    '',
    '| request | DynamoDB calls added | write units | read units | operations added | DynamoDB time added (local) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.label} | ${f(r.calls)} | ${f(r.writeUnits)} | ${f(r.readUnits)} | ${r.operations} | ${f(r.dynamoMs)} ms |`),
  ].join('\n');
}
