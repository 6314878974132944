/**
 * Conversation rules the simulator's native Anthropic route enforces as the Messages API does
 * (providers.md §2.2–2.3): roles, tool_result ↔ tool_use pairing, temperature with top_p on newer
 * models; consecutive same-role turns are merged, not refused (§2.2).
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../local/simulator/index.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

const send = (body: Record<string, unknown>): Promise<Response> =>
  fetch(`${sim.urls.anthropic}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 50, ...body }),
  });

async function expect400(res: Response, message: string | RegExp): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { type: string; error: { type: string; message: string } };
  expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  expect(body.error.message).toMatch(message);
}

const question = { role: 'user', content: 'Weather in Paris?' };
const toolUse = (id: string) => ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'get_weather', input: { city: 'Paris' } }] });
const toolResult = (id: string) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: '21' }] });

describe('anthropic conversation rules', () => {
  it('answers a tool_result that matches a tool_use of the previous assistant turn', async () => {
    const res = await send({ messages: [question, toolUse('toolu_1'), toolResult('toolu_1')] });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ content: [{ type: 'text', text: expect.stringContaining('Tool said: 21') }] });
  });

  it.each([
    ['an id no tool_use issued', [question, toolUse('toolu_1'), toolResult('toolu_2')], 'messages.2.content.0', 'toolu_2'],
    [
      'a tool_use two turns back',
      [question, toolUse('toolu_1'), toolResult('toolu_1'), { role: 'assistant', content: 'ok' }, toolResult('toolu_1')],
      'messages.4.content.0',
      'toolu_1',
    ],
    ['no assistant turn before it', [toolResult('toolu_1')], 'messages.0.content.0', 'toolu_1'],
  ])('refuses a tool_result answering %s with 400 invalid_request_error', async (_case, messages, path, id) => {
    await expect400(
      await send({ messages }),
      `${path}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
    );
  });

  it('merges consecutive same-role messages as the API does, pairing results with the merged assistant turn', async () => {
    const res = await send({
      messages: [question, { role: 'user', content: 'Please.' }, toolUse('toolu_1'), toolUse('toolu_2'), toolResult('toolu_1'), toolResult('toolu_2')],
    });
    expect(res.status).toBe(200);
  });

  it.each(['system', 'tool', 'developer'])('refuses a message with role %s', async (role) => {
    await expect400(await send({ messages: [question, { role, content: 'x' }] }), "messages.1.role: Input should be 'user' or 'assistant'");
  });

  it.each(['claude-sonnet-4-6', 'claude-haiku-4-5', 'claude-opus-4-6', 'claude-sonnet-4-5-20250929', 'claude-opus-5'])(
    'refuses temperature with top_p on %s (newer models take one sampler)',
    async (model) => {
      await expect400(
        await send({ model, temperature: 0.5, top_p: 0.9, messages: [question] }),
        '`temperature` and `top_p` cannot both be specified for this model. Please use only one.',
      );
      expect((await send({ model, top_p: 0.9, messages: [question] })).status).toBe(200);
      expect((await send({ model, temperature: 0.5, messages: [question] })).status).toBe(200);
    },
  );

  it('still takes temperature with top_p on an older model', async () => {
    expect((await send({ model: 'claude-3-haiku-20240307', temperature: 0.5, top_p: 0.9, messages: [question] })).status).toBe(200);
  });

  it('raises the SDK BadRequestError for an unmatched tool result', async () => {
    const client = new Anthropic({ apiKey: 'k', baseURL: sim.urls.anthropic, maxRetries: 0 });
    await expect(
      client.messages.create({
        model: 'claude-haiku-4-5',
        max_tokens: 10,
        messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'x' }] }],
      }),
    ).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });
});
