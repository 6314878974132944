import { describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { chatDemand } from '../../functions/shared/billing/hold-demand';
import { CATALOGUE, getModel } from '../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest, type ChatCompletionRequest } from '../../functions/shared/openai/chat-request';
import type { InputItem } from '../../functions/shared/responses/request';
import { toChatRequest } from '../../functions/shared/responses/to-chat';
import { planAttempts } from '../../functions/shared/routing/attempt-plan';
import { warmTokenizer } from '../../functions/shared/usage/estimate';

/**
 * What a hold counts of a prompt (billing/hold-demand.ts): every text an adapter may send upstream,
 * including the assistant fields a continued Responses conversation replays — reasoning (sent back as
 * `reasoning_content`, which the OpenAI-compatible adapters replay to DeepSeek and MiniMax) and
 * refusals — so a long stored reasoning cannot reach an upstream unheld.
 */

const LONG = Array.from({ length: 3_000 }, (_, i) => `thought${i % 50}`).join(' ');
const entry = getModel('deepseek-v4-pro', 'chat');
const plan = planAttempts(entry, CATALOGUE, { DEEPSEEK_API_KEY: 'k' });
const heldPrompt = (body: ChatCompletionRequest): number => chatDemand(body, entry, plan).demand.promptTokens;
const chat = (messages: unknown[]): ChatCompletionRequest => chatCompletionRequest.parse({ model: entry.id, messages, max_tokens: 16 });
const responses = (input: InputItem[]): ChatCompletionRequest =>
  toChatRequest({ model: entry.id, input, max_output_tokens: 16 } as Parameters<typeof toChatRequest>[0]);

describe('the prompt a hold counts', () => {
  it.each([false, true])('counts replayed reasoning and refusals (tokenizer loaded: %s)', async (loaded) => {
    if (loaded) await warmTokenizer();
    const floor = countTokens(LONG);
    const base = heldPrompt(
      chat([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 'q2' },
      ]),
    );
    const withReasoning = heldPrompt(
      chat([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a', reasoning_content: LONG },
        { role: 'user', content: 'q2' },
      ]),
    );
    const withRefusal = heldPrompt(
      chat([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: LONG }] },
        { role: 'user', content: 'q2' },
      ]),
    );
    const withRefusalField = heldPrompt(
      chat([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, refusal: LONG },
        { role: 'user', content: 'q2' },
      ]),
    );
    for (const held of [withReasoning, withRefusal, withRefusalField]) expect(held - base).toBeGreaterThanOrEqual(floor);
  });

  it('holds a Responses conversation whose earlier reasoning item is replayed', async () => {
    await warmTokenizer();
    const turns = (reasoning: boolean): InputItem[] => [
      { type: 'message', role: 'user', content: 'q' },
      ...(reasoning ? [{ type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: LONG }] } as InputItem] : []),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a', annotations: [] }] } as InputItem,
      { type: 'message', role: 'user', content: 'q2' },
    ];
    const sent = responses(turns(true));
    const replayed = sent.messages.find((m) => m.role === 'assistant');
    expect(replayed && 'reasoning_content' in replayed ? replayed.reasoning_content : undefined).toBe(LONG);
    expect(heldPrompt(sent) - heldPrompt(responses(turns(false)))).toBeGreaterThanOrEqual(countTokens(LONG));
  });
});
