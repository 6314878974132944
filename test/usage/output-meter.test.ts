import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { tokenUsage } from '../../functions/shared/usage/token-usage';
import type { ChunkParts } from '../../functions/shared/openai/chat-response';
import { warmTokenizer } from '../../functions/shared/usage/estimate';
import { outputCutAt, outputMeter } from '../../functions/shared/usage/output-meter';

/** The output meter (usage/output-meter.ts): an answer cut where its held output runs out. */

beforeAll(async () => {
  await warmTokenizer();
});

const text = (index: number, content: string, finish: ChunkParts['choices'][number]['finish_reason'] = null): ChunkParts => ({
  choices: [{ index, delta: { content }, finish_reason: finish }],
});
const args = (index: number, fragment: string): ChunkParts => ({
  choices: [{ index, delta: { tool_calls: [{ index: 0, function: { arguments: fragment } }] }, finish_reason: null }],
});

/** Every text the parts carry, by choice. */
function joined(parts: readonly ChunkParts[]): string[] {
  const out: string[] = [];
  for (const p of parts) {
    for (const c of p.choices)
      out[c.index] =
        (out[c.index] ?? '') +
        (c.delta.content ?? '') +
        (c.delta.reasoning_content ?? '') +
        (c.delta.tool_calls?.map((t) => t.function?.arguments ?? '').join('') ?? '');
  }
  return out;
}

describe('outputMeter', () => {
  it('passes an answer within its budget through untouched, finish and usage included', () => {
    const meter = outputMeter(20, 1);
    const batch = [text(0, 'Hello there, how '), text(0, 'are you?', 'stop'), { choices: [], usage: tokenUsage({ prompt: 3, completion: 7 }) }];
    expect(meter.admit(batch)).toEqual(batch);
    expect(meter.spent).toBe(false);
    // Counted as the upstream produced it, the pieces joined (the trailing space joins the next word).
    expect(meter.counted).toBe(countTokens('Hello there, how are you?'));
  });

  it('cuts the piece that crosses the budget (plus its tokenizer margin) and ends the answer with length', () => {
    const meter = outputMeter(1, 1);
    const huge = `{"x":[${Array.from({ length: 20_000 }, () => '"a b c d e f g h i j"').join(',')}]}`;
    const out = meter.admit([args(0, huge.slice(0, 200_000)), args(0, huge.slice(200_000))]);
    expect(meter.spent).toBe(true);
    expect(meter.counted).toBeLessThanOrEqual(outputCutAt(1));
    const [delivered] = joined(out);
    expect(huge.startsWith(delivered ?? 'x')).toBe(true);
    expect(countTokens(delivered ?? '')).toBeLessThanOrEqual(outputCutAt(1));
    expect(out.at(-1)).toEqual({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }] });
    expect(meter.admit([text(0, 'more')])).toEqual([]);
  });

  it('counts reasoning, refusals and every choice together; ends only the choices still open', () => {
    const meter = outputMeter(10, 3);
    const out = meter.admit([
      text(1, 'done', 'stop'),
      { choices: [{ index: 0, delta: { reasoning_content: 'think '.repeat(10) }, finish_reason: null }] },
      { choices: [{ index: 2, delta: { refusal: 'no '.repeat(100) }, finish_reason: null }] },
      text(0, 'never delivered'),
    ]);
    expect(meter.spent).toBe(true);
    expect(meter.counted).toBeLessThanOrEqual(outputCutAt(10));
    expect(meter.counted).toBeGreaterThanOrEqual(outputCutAt(10) - 2); // the cut piece fills what is left
    expect(joined(out)[0]).toBe('think '.repeat(10));
    expect(out.at(-1)).toEqual({ choices: [0, 2].map((index) => ({ index, delta: {}, finish_reason: 'length' })) });
    expect(out.flatMap((p) => p.choices).some((c) => c.delta.content === 'never delivered')).toBe(false);
  });

  it('counts the pieces it let through by their bound once a later batch comes near the limit', () => {
    const meter = outputMeter(20, 1); // cuts at 43 tokens
    const first = [text(0, 'Hello there, how ')];
    expect(meter.admit(first)).toBe(first); // far from the limit by its bytes: passed through as it is
    const out = meter.admit([text(0, 'word '.repeat(100))]);
    expect(meter.spent).toBe(true);
    // The first piece was counted when the second came near the limit, as if counted on arrival.
    const delivered = joined(out)[0] ?? '';
    expect(meter.counted).toBe(countTokens('Hello there, how ') + countTokens(delivered));
    expect(meter.counted).toBeLessThanOrEqual(outputCutAt(20));
    expect(meter.counted).toBeGreaterThanOrEqual(outputCutAt(20) - 2);
  });

  it('never splits a surrogate pair', () => {
    const meter = outputMeter(0, 1);
    const out = meter.admit([text(0, '😀'.repeat(200))]);
    const [delivered = ''] = joined(out);
    expect(delivered).toBe('😀'.repeat(delivered.length / 2));
    expect(countTokens(delivered)).toBeLessThanOrEqual(outputCutAt(0));
  });
});
