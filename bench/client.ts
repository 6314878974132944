/**
 * The client side: one timed request (buffered or SSE, over an undici Pool with keep-alive), and
 * autocannon for buffered load. Every answer is checked: a bench of error pages would be worthless.
 */
import { constants, createGunzip, gunzipSync, type Gunzip } from 'node:zlib';
import autocannon from 'autocannon';
import { Pool } from 'undici';

/**
 * The Accept-Encoding the openai Node SDK sends to an HTTPS base URL such as CloudFront's: its fetch
 * (undici) adds `br, gzip, deflate` and decodes the answer. Every bench request to modelmux sends it,
 * so the bytes counted are what CloudFront would carry (and bill) for the SDK's users.
 */
export const SDK_ACCEPT_ENCODING = 'br, gzip, deflate';

/** One HTTP request as sent. */
export interface RequestSpec {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A buffered answer, timed at the client. */
export interface BufferedTiming {
  /** Send → last body byte, ms. */
  ms: number;
  /** Status line + headers + body as sent on the wire (gzip when the gateway encoded it), bytes. */
  bytes: number;
  /** The same with the body decoded (what the answer is without compression), bytes. */
  decodedBytes: number;
  headers: Record<string, string>;
  /** The body, decoded. */
  body: string;
  /** The body as it came off the wire. */
  wire: Buffer[];
}

/** A streamed answer, timed at the client (ms since the request was sent). */
export interface StreamTiming {
  firstByteMs: number;
  /** First event with a non-empty `choices[0].delta.content`. */
  firstTokenMs: number;
  totalMs: number;
  /** Arrival of every content event (events read together share a time). */
  contentAt: number[];
  /** Content events that arrived in one socket read with another (a batching proxy shows here). */
  batched: number;
  /** The SSE events as received (decoded), each with its blank-line terminator (`data: [DONE]` included). */
  events: string[];
  /** On the wire (status line, headers, body as sent: gzip when encoded), and with the body decoded. */
  bytes: number;
  decodedBytes: number;
  headers: Record<string, string>;
  /** The body as it came off the wire, one buffer per socket read. */
  wire: Buffer[];
}

const pools = new Map<string, Pool>();
/** A keep-alive pool per origin and size, made once. */
function pool(origin: string, connections = 1): Pool {
  const key = `${origin} ${connections}`;
  let p = pools.get(key);
  if (p === undefined) pools.set(key, (p = new Pool(origin, { connections, pipelining: 1 })));
  return p;
}

/** Closes every pool. */
export async function closePools(): Promise<void> {
  await Promise.all([...pools.values()].map((p) => p.close()));
  pools.clear();
}

function headerRecord(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(raw).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v]])));
}
const headerBytes = (h: Record<string, string>): number => 17 + Object.entries(h).reduce((n, [k, v]) => n + k.length + v.length + 4, 2);

/** Sends a buffered request. @throws Error on a non-2xx status. */
export async function sendBuffered(spec: RequestSpec, connections = 1): Promise<BufferedTiming> {
  const t0 = performance.now();
  const res = await pool(spec.origin, connections).request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body });
  const wire = Buffer.from(await res.body.arrayBuffer());
  const headers = headerRecord(res.headers);
  const body = (headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire).toString('utf8');
  const ms = performance.now() - t0;
  if (res.statusCode >= 300) throw new Error(`${spec.path}: status ${res.statusCode}: ${body.slice(0, 300)}`);
  return { ms, bytes: headerBytes(headers) + wire.length, decodedBytes: headerBytes(headers) + Buffer.byteLength(body), headers, body, wire: [wire] };
}

/** Decodes one read of a gzip body as far as it goes (each event the gateway writes is sync-flushed). */
function inflateRead(gunzip: Gunzip, chunk: Buffer): Promise<Buffer> {
  const out: Buffer[] = [];
  const take = (b: Buffer): number => out.push(b);
  gunzip.on('data', take);
  gunzip.write(chunk);
  return new Promise((resolve) =>
    gunzip.flush(constants.Z_SYNC_FLUSH, () => {
      gunzip.off('data', take);
      resolve(Buffer.concat(out));
    }),
  );
}

const hasContent = (event: string): boolean => {
  const data = /^data: (.*)$/m.exec(event)?.[1];
  if (data === undefined || data === '[DONE]') return false;
  const parsed = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> };
  return (parsed.choices?.[0]?.delta?.content ?? '') !== '';
};

/** Sends a `stream: true` chat request and reads it to the end. @throws Error on a non-200 or a stream without content. */
export async function sendStream(spec: RequestSpec, connections = 1): Promise<StreamTiming> {
  const t0 = performance.now();
  const res = await pool(spec.origin, connections).request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body });
  if (res.statusCode !== 200) throw new Error(`${spec.path}: status ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  const decoder = new TextDecoder();
  const t: StreamTiming = { firstByteMs: Number.NaN, firstTokenMs: Number.NaN, totalMs: 0, contentAt: [], batched: 0, events: [], bytes: 0, decodedBytes: 0, headers: headerRecord(res.headers), wire: [] };
  const gunzip = t.headers['content-encoding'] === 'gzip' ? createGunzip() : undefined;
  let pending = '';
  for await (const chunk of res.body) {
    const at = performance.now() - t0;
    if (Number.isNaN(t.firstByteMs)) t.firstByteMs = at;
    const read = Buffer.from(chunk as Uint8Array);
    t.wire.push(read);
    t.bytes += read.length;
    const decoded = gunzip === undefined ? read : await inflateRead(gunzip, read);
    t.decodedBytes += decoded.length;
    pending += decoder.decode(decoded, { stream: true });
    const parts = pending.split('\n\n');
    pending = parts.pop() ?? '';
    const events = parts.map((p) => `${p}\n\n`);
    const content = events.filter(hasContent).length;
    t.events.push(...events);
    for (let i = 0; i < content; i++) t.contentAt.push(at);
    if (content > 1) t.batched += content;
    if (content > 0 && Number.isNaN(t.firstTokenMs)) t.firstTokenMs = at;
  }
  gunzip?.destroy();
  t.totalMs = performance.now() - t0;
  t.bytes += headerBytes(t.headers);
  t.decodedBytes += headerBytes(t.headers);
  if (Number.isNaN(t.firstTokenMs)) throw new Error(`${spec.path}: stream without content`);
  return t;
}

/** What one autocannon run measured. */
export interface LoadRun {
  /** Latency of every 2xx answer, ms (from autocannon's per-response events: its histogram keeps whole ms). */
  latencies: number[];
  /** Answers that were not 2xx, plus transport errors. */
  failures: number;
  elapsedMs: number;
}

/** `connections` closed-loop clients send `spec` for `seconds` (autocannon). */
export function load(spec: RequestSpec, connections: number, seconds: number): Promise<LoadRun> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: `${spec.origin}${spec.path}`, method: 'POST', headers: spec.headers, body: spec.body, connections, duration: seconds },
      (err, result) => (err ? reject(err) : resolve({ latencies, failures: result.non2xx + result.errors, elapsedMs: result.duration * 1000 })),
    );
    instance.on('response', (_client, status: number, _bytes: number, ms: number) => {
      if (status < 300) latencies.push(ms);
    });
  });
}
