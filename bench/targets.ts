/**
 * The two things measured side by side: the simulator's OpenAI route called directly (the floor) and
 * the same request through modelmux. Same bodies, same client; only origin, path prefix and key differ.
 */
import type { GatewayInfo } from './gateway-process';
import { pick } from './json-pick';
import type { RequestSpec } from './load';
import type { SimulatorInfo } from './simulator-process';

/** Which side a measurement is from. */
export type TargetName = 'direct' | 'modelmux';

/** One side, with its three requests. */
export interface Target {
  name: TargetName;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  chat: RequestSpec;
  stream: RequestSpec;
  embeddings: RequestSpec;
}

/** A short chat turn: the simulator answers 12 words (12 completion tokens). */
const CHAT_BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello to the benchmark, briefly.' }] };
/** What the openai SDK sends for `embeddings.create` by default: base64-encoded float32. */
const EMBEDDINGS_BODY = { model: 'text-embedding-3-small', input: 'The quick brown fox jumps over the lazy dog', encoding_format: 'base64' };

function specs(prefix: string, key: string): Pick<Target, 'chat' | 'stream' | 'embeddings'> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return {
    chat: { path: `${prefix}/chat/completions`, headers, body: JSON.stringify(CHAT_BODY) },
    stream: { path: `${prefix}/chat/completions`, headers, body: JSON.stringify({ ...CHAT_BODY, stream: true }) },
    embeddings: { path: `${prefix}/embeddings`, headers, body: JSON.stringify(EMBEDDINGS_BODY) },
  };
}

/** The simulator's OpenAI route, called without modelmux. */
export function directTarget(sim: SimulatorInfo): Target {
  const openai = sim.urls['openai'];
  if (openai === undefined) throw new Error('simulator has no openai route');
  const url = new URL(openai);
  return { name: 'direct', origin: url.origin, ...specs(url.pathname.replace(/\/$/, ''), 'sim-key') };
}

/** modelmux's `/v1` routes with the bench account's key. */
export function gatewayTarget(gw: GatewayInfo): Target {
  const url = new URL(gw.baseUrl);
  return { name: 'modelmux', origin: url.origin, ...specs(url.pathname.replace(/\/$/, ''), gw.apiKey) };
}

/** Throws unless `body` is a chat.completion with text. */
export function checkChatCompletion(body: string): void {
  const text = pick(JSON.parse(body), 'choices', 0, 'message', 'content');
  if (typeof text !== 'string' || text.length === 0) throw new Error(`not a chat.completion: ${body.slice(0, 200)}`);
}

/** Throws unless `body` is an embeddings list with a base64 vector. */
export function checkEmbeddings(body: string): void {
  const vector = pick(JSON.parse(body), 'data', 0, 'embedding');
  if (typeof vector !== 'string' || vector.length === 0) throw new Error(`not an embeddings list: ${body.slice(0, 200)}`);
}
