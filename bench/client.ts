/**
 * The client side: one timed request (buffered or SSE, over an undici Pool with keep-alive), and
 * autocannon for buffered load. Every answer is checked: a bench of error pages would be worthless.
 */
import { constants, createGunzip, gunzipSync, type Gunzip } from 'node:zlib';
import autocannon from 'autocannon';
import { Pool } from 'undici';

/**
 * The Accept-Encoding the openai Node SDK sends (its fetch adds `br, gzip, deflate` and decodes the answer):
 * the bytes counted are what CloudFront would carry, and bill, for the SDK's users.
 */
export const SDK_ACCEPT_ENCODING = 'br, gzip, deflate';

/** One HTTP request as sent. */
export interface RequestSpec {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** An answer timed at the client. */
export interface Answer {
  /** Send → last body byte (buffered) or → the first event with content (a stream), ms. */
  ms: number;
  /** Status line + headers + body as on the wire (gzip when encoded), and with the body decoded, bytes. */
  bytes: number;
  decodedBytes: number;
  headers: Record<string, string>;
  /** The decoded body: one part (buffered) or the SSE events, each with its blank line. */
  parts: string[];
  /** The body as it came off the wire, one buffer per socket read. */
  wire: Buffer[];
}

const pools = new Map<string, Pool>();
const pool = (origin: string, connections: number): Pool => {
  const key = `${origin} ${connections}`;
  if (!pools.has(key)) pools.set(key, new Pool(origin, { connections, pipelining: 1 }));
  return pools.get(key) as Pool;
};

/** Closes every pool. */
export async function closePools(): Promise<void> {
  await Promise.all([...pools.values()].map((p) => p.close()));
  pools.clear();
}

const headerRecord = (raw: Record<string, string | string[] | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(raw).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v]])));
const headerBytes = (h: Record<string, string>): number => 17 + Object.entries(h).reduce((n, [k, v]) => n + k.length + v.length + 4, 2);

/** Sends a buffered request. @throws Error on a non-2xx status. */
export async function sendBuffered(spec: RequestSpec, connections = 1): Promise<Answer> {
  const t0 = performance.now();
  const res = await pool(spec.origin, connections).request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body });
  const wire = Buffer.from(await res.body.arrayBuffer());
  const headers = headerRecord(res.headers);
  const body = (headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire).toString('utf8');
  const ms = performance.now() - t0;
  if (res.statusCode >= 300) throw new Error(`${spec.path}: status ${res.statusCode}: ${body.slice(0, 300)}`);
  return { ms, bytes: headerBytes(headers) + wire.length, decodedBytes: headerBytes(headers) + Buffer.byteLength(body), headers, parts: [body], wire: [wire] };
}

/** Decodes one read of a gzip body as far as it goes (each event the gateway writes is sync-flushed). */
function inflateRead(gunzip: Gunzip, chunk: Buffer): Promise<Buffer> {
  const out: Buffer[] = [];
  const take = (b: Buffer): number => out.push(b);
  gunzip.on('data', take);
  gunzip.write(chunk);
  return new Promise((resolve) => gunzip.flush(constants.Z_SYNC_FLUSH, () => resolve((gunzip.off('data', take), Buffer.concat(out)))));
}

const hasContent = (event: string): boolean => {
  const data = /^data: (.*)$/m.exec(event)?.[1];
  return (
    data !== undefined &&
    data !== '[DONE]' &&
    ((JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content ?? '') !== ''
  );
};

/** Sends a `stream: true` chat request and reads it to the end. @throws Error on a non-200 or a stream without content. */
export async function sendStream(spec: RequestSpec, connections = 1): Promise<Answer> {
  const t0 = performance.now();
  const res = await pool(spec.origin, connections).request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body });
  if (res.statusCode !== 200) throw new Error(`${spec.path}: status ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  const decoder = new TextDecoder();
  const headers = headerRecord(res.headers);
  const a: Answer = { ms: Number.NaN, bytes: headerBytes(headers), decodedBytes: headerBytes(headers), headers, parts: [], wire: [] };
  const gunzip = headers['content-encoding'] === 'gzip' ? createGunzip() : undefined;
  let pending = '';
  for await (const chunk of res.body) {
    const at = performance.now() - t0;
    const read = Buffer.from(chunk as Uint8Array);
    a.wire.push(read);
    a.bytes += read.length;
    const decoded = gunzip === undefined ? read : await inflateRead(gunzip, read);
    a.decodedBytes += decoded.length;
    const parts = (pending + decoder.decode(decoded, { stream: true })).split('\n\n');
    pending = parts.pop() ?? '';
    const events = parts.map((p) => `${p}\n\n`);
    a.parts.push(...events);
    if (Number.isNaN(a.ms) && events.some(hasContent)) a.ms = at;
  }
  gunzip?.destroy();
  if (Number.isNaN(a.ms)) throw new Error(`${spec.path}: stream without content`);
  return a;
}

/** `connections` closed-loop clients send `spec` for `seconds` (autocannon): each 2xx answer's latency (ms), failures (non-2xx and errors). */
export function load(spec: RequestSpec, connections: number, seconds: number): Promise<{ latencies: number[]; failures: number; elapsedMs: number }> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: `${spec.origin}${spec.path}`, method: 'POST', headers: spec.headers, body: spec.body, connections, duration: seconds },
      (err, result) => (err ? reject(err) : resolve({ latencies, failures: result.non2xx + result.errors, elapsedMs: result.duration * 1000 })),
    );
    instance.on('response', (_client, status: number, _bytes: number, ms: number) => void (status < 300 && latencies.push(ms)));
  });
}
