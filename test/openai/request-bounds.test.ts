import { describe, expect, it } from 'vitest';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { parseJsonBody } from '../../functions/shared/openai/parse-body';
import { MAX_ARRAY_LENGTH, MAX_JSON_VALUES, MAX_KEY_LENGTH, MAX_OBJECT_MEMBERS, assertRequestBounds } from '../../functions/shared/openai/request-bounds';

const code = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
};

describe('request bounds: one linear scan', () => {
  it('counts array elements and object members by their own opener, even inside strings with escapes', () => {
    const arr = (n: number) => `{"a":[${Array.from({ length: n }, () => '"\\"],{"').join(',')}]}`;
    expect(code(() => assertRequestBounds(arr(MAX_OBJECT_MEMBERS + 5)))).toBeUndefined(); // an array past the member bound is fine
    expect(code(() => assertRequestBounds(arr(MAX_ARRAY_LENGTH + 1)))).toBe('request_too_complex');
    const obj = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":[1,2]`).join(',')}}`;
    expect(code(() => assertRequestBounds(obj(MAX_OBJECT_MEMBERS)))).toBeUndefined();
    expect(code(() => assertRequestBounds(obj(MAX_OBJECT_MEMBERS + 1)))).toBe('request_too_complex');
  });

  it('refuses a long object key (echoed in an unknown-argument 400) but not a long string value', () => {
    expect(code(() => assertRequestBounds(`{"${'k'.repeat(MAX_KEY_LENGTH + 1)}" : 1}`))).toBe('request_too_complex');
    expect(code(() => assertRequestBounds(`{"k":"${'v'.repeat(1_000_000)}"}`))).toBeUndefined();
    expect(code(() => assertRequestBounds(`["${'v'.repeat(MAX_KEY_LENGTH + 1)}", 1]`))).toBeUndefined();
  });

  it('refuses more values in all than the budget, spread over arrays each within its own bound', () => {
    const per = 50_000;
    const parts = Math.ceil(MAX_JSON_VALUES / per) + 1;
    const body = `{"a":[${Array.from({ length: parts }, () => `[${'1,'.repeat(per - 1)}1]`).join(',')}]}`;
    expect(code(() => assertRequestBounds(body))).toBe('request_too_complex');
  });

  it('refuses a body whose check outlives its time budget, with the same 400', () => {
    const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(200_000) }] });
    expect(code(() => parseJsonBody(body, chatCompletionRequest))).toBeUndefined();
    expect(code(() => parseJsonBody(body, chatCompletionRequest, undefined, { at: performance.now() - 1 }))).toBe('request_too_complex');
  });
});
