import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * What the gateway logs (Powertools JSON lines on stdout, as CloudWatch receives them): one line per
 * request with ids, models, tokens and latency — and never an API key or a word of the conversation.
 * The logger level is raised from the test default (SILENT) before the handlers are loaded.
 */

let gw: RunningGateway;
let client: OpenAI;
const lines: string[] = [];
let restore: (() => void) | undefined;

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  gw = await startGateway({ tablePrefix: `logging-${process.pid}` });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
  // Observe stdout without changing it for anyone else: every write is kept, then passed on.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    lines.push(
      ...String(chunk)
        .split('\n')
        .filter((l) => l.startsWith('{')),
    );
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  restore = () => {
    process.stdout.write = write;
  };
});

afterAll(async () => {
  restore?.();
  await gw?.close();
});

/** Waits (≤ 5 s) until a JSON log line with this request id has been written (settle logs after the response). */
function logLineOf(requestId: string | null): Promise<Record<string, unknown>> {
  return vi.waitFor(
    () => {
      const found = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.requestId === requestId && l.message === 'request');
      if (!found) throw new Error(`no request log line for ${requestId}`);
      return found;
    },
    { timeout: 5_000, interval: 20 },
  );
}

describe('request logs', () => {
  it('write one JSON line per request with ids, models, tokens, cost and latency, and never the key or the text', async () => {
    const secretWords = 'zanzibar quokka marmalade';
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `tell me about ${secretWords}` }] })
      .withResponse();
    const stream = await client.chat.completions.create({
      model: 'claude-3-5-sonnet',
      messages: [
        { role: 'system', content: `secret system ${secretWords}` },
        { role: 'user', content: secretWords },
      ],
      stream: true,
    });
    for await (const chunk of stream) void chunk;
    const wrongKey = `sk-mux-${'Z'.repeat(43)}`;
    await new OpenAI({ baseURL: gw.baseUrl, apiKey: wrongKey, maxRetries: 0 }).chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: secretWords }] })
      .catch(() => undefined);

    const line = await logLineOf(response.headers.get('x-request-id'));
    expect(line).toMatchObject({
      level: 'INFO',
      service: 'modelmux',
      model: 'gpt-4o-mini',
      servedModel: 'gpt-4o-mini',
      provider: 'openai',
      status: 'complete',
      promptTokens: data.usage?.prompt_tokens,
      completionTokens: data.usage?.completion_tokens,
      usageEstimated: false,
    });
    expect(line.latencyMs).toEqual(expect.any(Number));
    expect(line.costNanoUsd).toEqual(expect.any(Number));

    const all = lines.join('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const forbidden of [
      gw.apiKey,
      gw.apiKey.slice('sk-mux-'.length),
      wrongKey,
      'zanzibar',
      'quokka',
      'marmalade',
      data.choices[0]?.message.content ?? '',
    ]) {
      expect(all).not.toContain(forbidden);
    }
  });
});
