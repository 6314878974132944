import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { MAX_RUN, estimateTextTokens, loadedCounter, messageText, utf8TokenBound, warmTokenizer } from '../../functions/shared/usage/estimate';

/** Our own token counts (usage/estimate.ts): the hold's bound before the tokenizer loads, and the estimates billed when an upstream reports none. */

describe('before the tokenizer is loaded', () => {
  // First in the file: the module is fresh (vitest isolates each test file), so nothing has loaded it.
  it('is not loaded at import (cold start stays light); warmTokenizer loads it', async () => {
    expect(loadedCounter()).toBeUndefined();
    await warmTokenizer();
    expect(loadedCounter()?.('hello world')).toBe(2);
  });
});

describe('utf8TokenBound', () => {
  it('is the UTF-8 byte length: at least the token count of any byte-level tokenizer', () => {
    expect(utf8TokenBound('')).toBe(0);
    expect(utf8TokenBound('abc')).toBe(3);
    expect(utf8TokenBound('é')).toBe(2);
    expect(utf8TokenBound('世界')).toBe(6);
    expect(utf8TokenBound('🙂')).toBe(4);
    for (const text of ['The quick brown fox.', '  spaced\n\ttext  ', '数学の問題を解いてください', 'emoji 🙂🙂🙂 and ✓']) {
      expect(utf8TokenBound(text)).toBeGreaterThanOrEqual(countTokens(text));
    }
  });
});

describe('estimateTextTokens', () => {
  it('counts with o200k_base, and 0 for nothing', async () => {
    expect(await estimateTextTokens('')).toBe(0);
    expect(await estimateTextTokens('hello world')).toBe(2);
    const text = 'Tokenizers split text into sub-word pieces; 数字 and emoji 🙂 cost more.';
    expect(await estimateTextTokens(text)).toBe(countTokens(text));
  });

  it(`cuts runs longer than ${MAX_RUN} characters, which can only add tokens (an over-count, never an under-count)`, async () => {
    for (const run of ['a'.repeat(MAX_RUN * 5 + 3), ' '.repeat(MAX_RUN * 3), `x${'\u00e9'.repeat(MAX_RUN * 2)}`]) {
      const estimate = await estimateTextTokens(run);
      expect(estimate).toBeGreaterThanOrEqual(countTokens(run));
      expect(estimate).toBeLessThanOrEqual(utf8TokenBound(run) + Math.ceil(run.length / MAX_RUN));
    }
    // A run at the limit is left whole.
    const atLimit = 'b'.repeat(MAX_RUN - 1);
    expect(await estimateTextTokens(atLimit)).toBe(countTokens(atLimit));
  });

  it("counts a 100,000-character run (a client's CPU attack on BPE) as at least one token per cut", async () => {
    const estimate = await estimateTextTokens('a'.repeat(100_000));
    expect(estimate).toBeGreaterThanOrEqual(100_000 / MAX_RUN);
    expect(estimate).toBeLessThanOrEqual(100_000);
  });
});

describe('messageText', () => {
  it('reads the text of a string or of text parts only', () => {
    expect(messageText('plain')).toBe('plain');
    expect(messageText([{ type: 'text', text: 'a' }, { type: 'input_audio', input_audio: { data: 'xx' } }, { type: 'text', text: 'b' }, null, 'loose'])).toBe(
      'ab',
    );
    expect(messageText(undefined)).toBe('');
    expect(messageText({ text: 'not an array' })).toBe('');
  });
});
