import { describe, expect, it } from 'vitest';
import { providerSpec } from '../../../functions/shared/providers/registry';
import { ctxFor, request, sentBody } from './support';

/**
 * The body the OpenAI-compatible adapter sends upstream, compared whole: the client's fields pass
 * through except where a provider differs (providers.md §1.9 o-series, §4.3 DeepSeek reasoning in
 * history, §5.1–5.2 MiniMax temperature and reasoning_details).
 */

const toolCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

describe('OpenAI-compatible request building', () => {
  it('sends the live upstream id, the default temperature 0.7, and always asks for stream usage', () => {
    const ctx = ctxFor('gpt-4o-mini');
    const built = providerSpec('openai').adapter.buildChatRequest(request({ stream: true }), ctx);
    expect(built.url).toBe('http://127.0.0.1:1/base/chat/completions');
    expect(built.headers.authorization).toBe('Bearer upstream-key');
    expect(JSON.parse(built.body)).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.7,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it.each([
    ['openai', 'gpt-4o-mini', 0],
    ['deepseek', 'deepseek-v3', 0],
    ['minimax', 'minimax', 0],
    ['together', 'llama-3-70b', 0],
    ['deepinfra', 'llama-3-70b', 1],
  ] as const)('%s: a buffered client request goes upstream streamed, with usage asked for, without our routing fields', (provider, model, target) => {
    const ctx = ctxFor(model, target);
    expect(ctx.target.provider).toBe(provider);
    // The router always calls chat upstreams in streaming mode (routing/fallback-router.ts).
    const body = JSON.parse(providerSpec(provider).adapter.buildChatRequest(request({ stream: false, models: ['gpt-4o'], route: 'fallback' }), ctx).body);
    expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(body).not.toHaveProperty('models');
    expect(body).not.toHaveProperty('route');
  });

  it('rewrites max_tokens and drops sampling fields for o-series models', () => {
    const body = sentBody('o3-mini', request({ max_tokens: 100, top_p: 0.5 }));
    expect(body).toEqual({ model: 'o3-mini', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 100 });
  });

  it('passes reasoning_effort to o-series models', () => {
    expect(sentBody('o3-mini', request({ reasoning_effort: 'high', max_completion_tokens: 500 }))).toEqual({
      model: 'o3-mini',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 500,
      reasoning_effort: 'high',
    });
  });

  it('drops reasoning_effort for a model that does not reason (OpenAI would answer 400)', () => {
    expect(sentBody('gpt-4o', request({ reasoning_effort: 'low' }))).toEqual({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.7,
    });
  });

  it('drops reasoning_effort for DeepSeek non-thinking targets, where V4 would read it as a switch to think', () => {
    expect(sentBody('deepseek-v3', request({ reasoning_effort: 'high' }))).toEqual({
      model: 'deepseek-flash',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.7,
      thinking: { type: 'disabled' },
    });
  });

  it('keeps reasoning_effort for DeepSeek thinking targets', () => {
    expect(sentBody('deepseek-r1', request({ reasoning_effort: 'high' }))).toEqual({
      model: 'deepseek-flash',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.7,
      reasoning_effort: 'high',
      thinking: { type: 'enabled' },
    });
  });

  it('clamps MiniMax temperature into (0, 1] and asks for reasoning apart', () => {
    const body = sentBody('minimax', request({ temperature: 0 }));
    expect(body).toEqual({ model: 'MiniMax-M2.7', messages: [{ role: 'user', content: 'hi' }], temperature: 0.01, reasoning_split: true });
  });

  it('sends DeepSeek V4 the thinking switch of the catalogue target', () => {
    const r1 = sentBody('deepseek-r1', request());
    const v3 = sentBody('deepseek-v3', request());
    expect(r1).toMatchObject({ model: 'deepseek-flash', thinking: { type: 'enabled' } });
    expect(v3).toMatchObject({ model: 'deepseek-flash', thinking: { type: 'disabled' } });
    expect(r1).toEqual({ model: 'deepseek-flash', messages: [{ role: 'user', content: 'hi' }], temperature: 0.7, thinking: { type: 'enabled' } });
    expect(v3).toEqual({ model: 'deepseek-flash', messages: [{ role: 'user', content: 'hi' }], temperature: 0.7, thinking: { type: 'disabled' } });
  });

  it('caps max_tokens at the target output limit', () => {
    expect(sentBody('gpt-4o', request({ max_tokens: 1_000_000 }))).toMatchObject({ max_tokens: 16_384 });
  });

  it('passes stop sequences through as sent', () => {
    expect(sentBody('gpt-4o-mini', request({ stop: ['END', '\n\n'] }))).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.7,
      stop: ['END', '\n\n'],
    });
  });
});

describe('reasoning and signatures in the history', () => {
  /** Two user turns: an earlier answer with reasoning, then a tool loop in progress. */
  const conversation = request({
    messages: [
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer', reasoning_content: 'old thoughts' },
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: null, reasoning_content: 'I should call the tool', tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
    ],
  });
  const stripped = [
    { role: 'user', content: 'first question' },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [toolCall] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
  ];

  it('echoes DeepSeek reasoning_content only within the current tool loop of a thinking target', () => {
    expect(sentBody('deepseek-r1', conversation)).toEqual({
      model: 'deepseek-flash',
      temperature: 0.7,
      thinking: { type: 'enabled' },
      messages: [
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: null, reasoning_content: 'I should call the tool', tool_calls: [toolCall] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
      ],
    });
  });

  it('strips every DeepSeek reasoning_content for a non-thinking target (original R1 rule: 400 if echoed)', () => {
    expect(sentBody('deepseek-v3', conversation)).toEqual({ model: 'deepseek-flash', temperature: 0.7, thinking: { type: 'disabled' }, messages: stripped });
  });

  it('strips DeepSeek reasoning_content once the user has spoken after it', () => {
    const body = sentBody(
      'deepseek-r1',
      request({
        messages: [...conversation.messages, { role: 'assistant', content: 'It is 21 °C.', reasoning_content: 'done' }, { role: 'user', content: 'thanks' }],
      }),
    );
    expect(body).toEqual({
      model: 'deepseek-flash',
      temperature: 0.7,
      thinking: { type: 'enabled' },
      messages: [...stripped, { role: 'assistant', content: 'It is 21 °C.' }, { role: 'user', content: 'thanks' }],
    });
  });

  it('strips reasoning_content for OpenAI and the Llama hosts', () => {
    expect(sentBody('gpt-4o', conversation)).toEqual({ model: 'gpt-4o', temperature: 0.7, messages: stripped });
    expect(sentBody('llama-3-70b', conversation)).toMatchObject({ messages: stripped });
  });

  it('turns MiniMax reasoning_content back into reasoning_details on every assistant message', () => {
    const details = (text: string) => [{ type: 'reasoning.text', id: 'reasoning-text-1', format: 'MiniMax-response-v1', index: 0, text }];
    expect(sentBody('minimax', conversation)).toEqual({
      model: 'MiniMax-M2.7',
      temperature: 0.7,
      reasoning_split: true,
      messages: [
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer', reasoning_details: details('old thoughts') },
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: null, reasoning_details: details('I should call the tool'), tool_calls: [toolCall] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
      ],
    });
  });

  it('never forwards a Gemini thought signature (tool call extra_content) to an OpenAI-compatible upstream', () => {
    const signed = { ...toolCall, extra_content: { google: { thought_signature: 'c2ln' } } };
    const body = sentBody(
      'gpt-4o',
      request({
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [signed] },
          { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
        ],
      }),
    );
    expect(body).toEqual({
      model: 'gpt-4o',
      temperature: 0.7,
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: [toolCall] },
        { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
      ],
    });
  });
});
