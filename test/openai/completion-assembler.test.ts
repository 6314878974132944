import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tokensOf } from '../support/token-usage';
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue';
import type { ChunkParts, CompletionParts } from '../../functions/shared/openai/chat-response';
import { createCompletionAssembler } from '../../functions/shared/openai/completion-assembler';
import { providerSpec } from '../../functions/shared/providers/registry';
import type { AdapterContext } from '../../functions/shared/providers/types';
import { runTransform } from '../providers/stream-run';

/**
 * A buffered chat answer is assembled from the upstream's STREAM (routing/fallback-router.ts): modelmux
 * never asks an upstream for a buffered answer. Proof that it is the answer the upstream's own buffered
 * API gives: each scenario is recorded as the upstream's stream in its documented wire format
 * (test/fixtures/<provider>/pairs/<scenario>.sse) and as the `chat.completion` parts of the same answer
 * taken buffered from that upstream (`<scenario>.completion.json`: choices, usage in modelmux's token
 * counts, fingerprint). The stream goes through the adapter's transform (in awkward byte splits) and the
 * assembler; the result must equal the recorded parts, field for field.
 */

const fixtures = join(__dirname, '..', 'fixtures');
const read = (path: string): Buffer => readFileSync(join(fixtures, path));

function ctxFor(model: string): AdapterContext {
  const target = CATALOGUE.get(model)?.targets[0];
  if (!target) throw new Error(`no target for ${model}`);
  return { target, endpoint: { provider: target.provider, baseUrl: 'http://127.0.0.1:1', apiKey: 'k' } };
}

/** Both sides of one pair: the recorded buffered parts, and the stream's parts (split `size` bytes at a time). */
async function bothWays(model: string, scenario: string, size: number) {
  const ctx = ctxFor(model);
  const adapter = providerSpec(ctx.target.provider).adapter;
  const buffered = JSON.parse(read(`${scenario}.completion.json`).toString('utf8')) as CompletionParts;
  const run = await runTransform(adapter.createStreamTransform(ctx), read(`${scenario}.sse`), size);
  if (run.error !== undefined) throw run.error;
  return { buffered, parts: run.parts, rules: adapter.assembly };
}

// [provider, scenario, model whose first target's adapter reads it, fixture path without extension]
const PAIRS: Array<[string, string, string]> = [
  ['OpenAI: two choices (n = 2) with logprobs, fingerprint and usage details', 'gpt-4o', 'openai/pairs/two-choices-logprobs'],
  ['OpenAI: parallel tool calls, no content', 'gpt-4o', 'openai/pairs/parallel-tool-calls'],
  ['OpenAI: a refusal', 'gpt-4o', 'openai/pairs/refusal'],
  ['OpenAI: content_filter before any text', 'gpt-4o', 'openai/pairs/content-filter-empty'],
  ['DeepSeek: reasoning_content, then the answer, cache-split usage', 'deepseek-r1', 'openai/pairs/deepseek-reasoning'],
  ['MiniMax: reasoning_details, text and a tool call', 'minimax', 'minimax/reasoning-details'],
  ['Anthropic: thinking, text, a tool call with arguments and one without, cache usage', 'claude-3-5-sonnet', 'anthropic/pairs/thinking-text-tools'],
  ['Anthropic: a tool call and no text block', 'claude-haiku-4-5', 'anthropic/pairs/tool-only'],
  ['Anthropic: text cut by a stop sequence', 'claude-3-5-sonnet', 'anthropic/pairs/stop-sequence'],
  ['Gemini: two candidates (n = 2), one cut by max tokens', 'gemini-2.0-flash', 'gemini/pairs/two-candidates'],
  ['Gemini: thoughts, then two function calls, one signed', 'gemini-2.5-flash', 'gemini/pairs/thoughts-signed-calls'],
  ['Gemini: a prompt blocked before generation', 'gemini-2.0-flash', 'gemini/pairs/blocked-prompt'],
];

describe('the same answer streamed and buffered gives the same chat.completion', () => {
  it.each(PAIRS.flatMap(([name, ...rest]) => [1, 7, 4096].map((size) => [`${name} (${size}-byte splits)`, ...rest, size] as const)))(
    '%s',
    async (_name, model, scenario, size) => {
      const { buffered, parts, rules } = await bothWays(model, scenario, size);
      const assembler = createCompletionAssembler(rules);
      assembler.push(parts);
      expect(assembler.result()).toEqual(buffered);
    },
  );

  it('the pairs carry what the assembler must get right (so the comparison above can fail)', async () => {
    const openai = await bothWays('gpt-4o', 'openai/pairs/two-choices-logprobs', 4096);
    expect(openai.buffered.choices).toHaveLength(2);
    expect(openai.buffered.system_fingerprint).toBe('fp_b705f0c291');
    expect((openai.buffered.choices[0]?.logprobs as { content: unknown[] }).content).toHaveLength(7);
    // Anthropic's buffered answer serialises `input` compactly and has `{}` for a call without
    // arguments; its stream has the model's own JSON text, and nothing for an empty input.
    const claude = await bothWays('claude-3-5-sonnet', 'anthropic/pairs/thinking-text-tools', 4096);
    expect(claude.buffered.choices[0]?.message.tool_calls?.map((t) => (t.type === 'function' ? t.function.arguments : ''))).toEqual([
      '{"city":"Paris","days":2}',
      '{}',
    ]);
    const plain = createCompletionAssembler();
    plain.push(claude.parts);
    expect(plain.result().choices[0]?.message.tool_calls?.map((t) => (t.type === 'function' ? t.function.arguments : ''))).toEqual([
      '{"city": "Paris", "days": 2}',
      '{}',
    ]);
    const toolOnly = await bothWays('claude-haiku-4-5', 'anthropic/pairs/tool-only', 4096);
    expect(toolOnly.buffered.choices[0]?.message.content).toBeNull();
  });
});

describe('assembly rules', () => {
  const part = (index: number, delta: ChunkParts['choices'][number]['delta'], finish: ChunkParts['choices'][number]['finish_reason'] = null): ChunkParts => ({
    choices: [{ index, delta, finish_reason: finish }],
  });

  it('merges interleaved tool-call fragments by index; ids, names and extra content from the fragments that carry them', () => {
    const a = createCompletionAssembler();
    a.push([
      part(0, { role: 'assistant', content: null, tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '' } }] }),
      part(0, { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x":' } }] }),
      part(0, {
        tool_calls: [
          { index: 1, function: { arguments: '{}' } },
          { index: 0, function: { arguments: '1}' } },
        ],
      }),
      part(0, { tool_calls: [{ index: 2, type: 'custom', custom: { name: 'grep', input: 'fo' } }] }),
      part(0, { tool_calls: [{ index: 2, custom: { input: 'o' } }] }),
      part(0, {}, 'tool_calls'),
    ]);
    expect(a.result().choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
          { id: 'call_b', type: 'function', function: { name: 'b', arguments: '{}' } },
          { id: 'call_0_2', type: 'custom', custom: { name: 'grep', input: 'foo' } },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  it('the role preamble\'s empty content is not an answer; an empty answer is "" unless there are calls or a refusal', () => {
    const empty = createCompletionAssembler();
    empty.push([part(0, { role: 'assistant', content: '' }), part(0, {}, 'length')]);
    expect(empty.result().choices[0]?.message).toEqual({ role: 'assistant', content: '', refusal: null });
    const anthropicLike = createCompletionAssembler({ contentWithoutText: 'null' });
    anthropicLike.push([part(0, { role: 'assistant', content: '' }), part(0, {}, 'stop')]);
    expect(anthropicLike.result().choices[0]?.message.content).toBeNull();
  });

  it('takes the last usage and fingerprint, and says stop when no finish_reason came', () => {
    const a = createCompletionAssembler();
    a.push([
      { ...part(0, { content: 'x' }), system_fingerprint: 'fp_a' },
      { choices: [], usage: tokensOf({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) },
    ]);
    expect(a.result()).toEqual({
      choices: [{ index: 0, message: { role: 'assistant', content: 'x', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: tokensOf({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }),
      system_fingerprint: 'fp_a',
    });
  });
});
