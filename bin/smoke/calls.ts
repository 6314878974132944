/**
 * The API calls of the smoke test, each through the official SDK a client would use, with its default
 * settings (retries, timeouts, the embeddings' base64 encoding) and only the base URL and key set:
 * chat completions buffered and streamed and embeddings with `openai`, the Messages API with
 * `@anthropic-ai/sdk`. Each returns the request id the gateway sent back (`x-request-id`), which the
 * ledger check looks up, and a line saying what came back.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

/** One call that answered: which step, the model asked for, and the gateway's request id. */
export interface Answered {
  step: string;
  model: string;
  requestId: string;
  detail: string;
}

const PROMPT = 'This is a modelmux smoke test. Answer with one short sentence.';

/** The gateway's request id of an answer. @throws Error when the answer has none. */
function requestIdOf(response: Response): string {
  const id = response.headers.get('x-request-id') ?? response.headers.get('request-id');
  if (id === null || id === '') throw new Error(`the answer (HTTP ${response.status}) has no x-request-id header`);
  return id;
}

/** At most 40 characters of a model's text, on one line, quoted. */
function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(line.length > 40 ? `${line.slice(0, 39)}…` : line);
}

/** The SDK clients of one key. */
export interface Clients {
  openai: OpenAI;
  anthropic: Anthropic;
}

/**
 * The clients for a key: `openai` on the base URL (ending in /v1), `@anthropic-ai/sdk` on its origin
 * (the SDK adds `/v1/messages` itself).
 */
export function clientsFor(baseUrl: string, apiKey: string): Clients {
  return { openai: new OpenAI({ baseURL: baseUrl, apiKey }), anthropic: new Anthropic({ baseURL: baseUrl.replace(/\/v1$/, ''), apiKey }) };
}

/** `chat.completions.create` without `stream`. @throws Error when the answer has no text or no usage. */
export async function chatBuffered(c: Clients, model: string): Promise<Answered> {
  const { data, response } = await c.openai.chat.completions.create({ model, messages: [{ role: 'user', content: PROMPT }] }).withResponse();
  const choice = data.choices[0];
  const text = choice?.message.content ?? '';
  if (text.trim() === '') throw new Error(`${model} answered no text (finish_reason ${choice?.finish_reason ?? 'none'})`);
  if (!data.usage || data.usage.completion_tokens <= 0) throw new Error(`${model} answered without usage`);
  const detail = `${model} answered ${clip(text)}, ${data.usage.prompt_tokens}+${data.usage.completion_tokens} tokens`;
  return { step: 'chat', model, requestId: requestIdOf(response), detail };
}

/** `chat.completions.create({stream: true})`, read to the end. @throws Error when no text or no finish reason came. */
export async function chatStreamed(c: Clients, model: string): Promise<Answered> {
  const { data: stream, response } = await c.openai.chat.completions
    .create({ model, messages: [{ role: 'user', content: PROMPT }], stream: true })
    .withResponse();
  let text = '';
  let chunks = 0;
  let finish: string | null = null;
  for await (const chunk of stream) {
    chunks += 1;
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  if (text.trim() === '') throw new Error(`${model} streamed no text in ${chunks} chunks`);
  if (finish === null) throw new Error(`${model}'s stream ended without a finish_reason (${chunks} chunks)`);
  return { step: 'chat stream', model, requestId: requestIdOf(response), detail: `${model} streamed ${clip(text)} in ${chunks} chunks, finish ${finish}` };
}

/** `embeddings.create` of one input. @throws Error when no vector came back. */
export async function embeddings(c: Clients, model: string): Promise<Answered> {
  const { data, response } = await c.openai.embeddings.create({ model, input: PROMPT }).withResponse();
  const vector = data.data[0]?.embedding ?? [];
  if (vector.length === 0 || !vector.every((x) => Number.isFinite(x))) throw new Error(`${model} answered no usable vector`);
  return {
    step: 'embeddings',
    model,
    requestId: requestIdOf(response),
    detail: `${model} answered a vector of ${vector.length}, ${data.usage.prompt_tokens} tokens`,
  };
}

/** `messages.create` (the Anthropic Messages API, `/v1/messages`). @throws Error when the answer has no text. */
export async function messages(c: Clients, model: string): Promise<Answered> {
  const { data, response } = await c.anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] }).withResponse();
  const text = data.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  if (text.trim() === '') throw new Error(`${model} answered no text (stop_reason ${data.stop_reason ?? 'none'})`);
  const detail = `/v1/messages ${model} answered ${clip(text)}, ${data.usage.input_tokens}+${data.usage.output_tokens} tokens`;
  return { step: 'messages', model, requestId: requestIdOf(response), detail };
}
