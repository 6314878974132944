/**
 * The pure parts: reply planning, stream chunking, schema-built tool arguments, embeddings and the
 * token-counting rule.
 */
import { describe, expect, it } from 'vitest';
import { splitArguments, splitText } from '../../../local/simulator/deliver.js';
import { embed, toBase64 } from '../../../local/simulator/embeddings.js';
import { countWords, promptTokens } from '../../../local/simulator/json-narrowing.js';
import { baseReplyText, compactResult, type Conversation, firstNWords, OVERREPORT_FACTOR, planReply, RUNAWAY_WORDS } from '../../../local/simulator/reply.js';
import { argsFromSchema } from '../../../local/simulator/schema-value.js';

const conv = (over: Partial<Conversation> = {}): Conversation => ({
  messageTexts: ['one two three'],
  lastTurn: { kind: 'user', text: 'one two three', images: 0 },
  lastUserText: 'one two three',
  tools: [],
  stop: [],
  reasoning: false,
  ...over,
});

describe('reply planning', () => {
  it('echoes the first 8 user words and pads with the filler list to replyWords', () => {
    expect(baseReplyText('a b c d e f g h i j', 0, 12)).toBe('Echo: a b c d e f g h alpha beta gamma');
    expect(baseReplyText('', 0, 3)).toBe('Echo: alpha beta');
    expect(baseReplyText('x', 2, 1)).toBe('I see 2 images. Echo: x');
  });

  it('counts prompt tokens as words + 4 per message and completion tokens as reply words', () => {
    const plan = planReply(conv({ messageTexts: ['sys tem', 'one two three'] }), { replyWords: 12 });
    expect(plan.promptTokens).toBe(4 + 2 + 4 + 3);
    expect(plan.completionTokens).toBe(12);
    expect(plan.finish).toBe('stop');
  });

  it('cuts at the earliest stop sequence, but the token limit wins when it bites first', () => {
    const stopped = planReply(conv({ stop: ['gamma', 'two'] }), { replyWords: 12 });
    expect(stopped).toMatchObject({ text: 'Echo: one ', finish: 'stop_sequence', stopSequence: 'two', completionTokens: 2 });
    const limited = planReply(conv({ stop: ['gamma'], maxTokens: 2 }), { replyWords: 12 });
    expect(limited).toMatchObject({ text: 'Echo: one', finish: 'length' });
  });

  it('calls a tool on a user turn that asks for one, reports tool results on a tool turn', () => {
    const tools = [{ name: 't', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }];
    expect(planReply(conv({ tools }), { replyWords: 12 })).toMatchObject({ finish: 'stop', toolCalls: [] });
    const asked = { kind: 'user' as const, text: 'use a tool', images: 0 };
    expect(planReply(conv({ tools, lastTurn: asked }), { replyWords: 12 })).toMatchObject({
      finish: 'tool_calls',
      text: '',
      toolCalls: [{ name: 't', argsJson: '{"q":"Paris"}' }],
    });
    expect(planReply(conv({ tools, toolForced: true }), { replyWords: 12 })).toMatchObject({ finish: 'tool_calls' });
    const after = planReply(conv({ tools, lastTurn: { kind: 'tool-result', results: ['{"a":1}', 'ok'] } }), { replyWords: 12 });
    expect(after).toMatchObject({ text: 'Tool said: {"a":1}; ok', finish: 'stop', toolCalls: [] });
  });

  it('adds reasoning words to completion tokens', () => {
    const plan = planReply(conv({ reasoning: true }), { replyWords: 12 });
    expect(plan.reasoning).toBe('Thinking: the user wrote one two three; I will echo it back.');
    expect(plan.completionTokens).toBe(12 + plan.reasoningTokens);
  });

  it('[runaway] ignores the output limit (reply and reasoning); [overreport] multiplies the usage it reports', () => {
    const text = 'go [runaway]';
    const runaway = planReply(conv({ lastTurn: { kind: 'user', text, images: 0 }, lastUserText: text, maxTokens: 1, reasoning: true }), { replyWords: 12 });
    expect(countWords(runaway.text)).toBe(RUNAWAY_WORDS);
    expect(runaway.reasoningTokens).toBe(RUNAWAY_WORDS);
    expect(runaway).toMatchObject({ finish: 'stop', completionTokens: 2 * RUNAWAY_WORDS });
    const over = 'go [overreport]';
    const honest = planReply(conv({ lastTurn: { kind: 'user', text: 'go overreport', images: 0 }, lastUserText: 'go overreport', maxTokens: 5 }), {
      replyWords: 12,
    });
    const lying = planReply(conv({ lastTurn: { kind: 'user', text: over, images: 0 }, lastUserText: over, maxTokens: 5 }), { replyWords: 12 });
    expect(lying.text).toBe(honest.text.replace('overreport', '[overreport]'));
    expect(lying).toMatchObject({ finish: 'length', promptTokens: honest.promptTokens * OVERREPORT_FACTOR, completionTokens: 5 * OVERREPORT_FACTOR });
  });

  it('compacts tool results', () => {
    expect(compactResult('{ "a" : [1, 2] }')).toBe('{"a":[1,2]}');
    expect(compactResult('  sunny  and \n warm ')).toBe('sunny and');
    expect(compactResult('Chunk ID: 1\nProcess exited with code 0\nOutput:\nThe first line\nThe second\n')).toBe('The first line');
  });

  it('keeps the first n words', () => {
    expect(firstNWords('a  b c', 2)).toBe('a  b');
    expect(firstNWords('a b', 5)).toBe('a b');
    expect(firstNWords('a b', 0)).toBe('');
  });
});

describe('chunking', () => {
  it('splits text into 1-2 word pieces that join back exactly', () => {
    const text = '  Echo: a  b\nc d e ';
    const pieces = splitText(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((p) => countWords(p) >= 1 && countWords(p) <= 2)).toBe(true);
    expect(splitText('')).toEqual([]);
  });

  it('splits arguments into 2-3 fragments', () => {
    const json = '{"city":"Paris","days":1}';
    expect(splitArguments(json)).toHaveLength(3);
    expect(splitArguments(json).join('')).toBe(json);
    expect(splitArguments('{}')).toEqual(['{', '}']);
  });
});

describe('tool arguments from JSON Schema', () => {
  it('fills required properties only, by type, recursively', () => {
    expect(
      argsFromSchema({
        type: 'object',
        properties: {
          city: { type: 'string' },
          n: { type: 'number' },
          i: { type: ['integer', 'null'] },
          ok: { type: 'boolean' },
          unit: { type: 'string', enum: ['c', 'f'] },
          tags: { type: 'array', items: { type: 'string' } },
          where: { type: 'object', properties: { lat: { type: 'number' } }, required: ['lat'] },
          optional: { type: 'string' },
        },
        required: ['city', 'n', 'i', 'ok', 'unit', 'tags', 'where'],
      }),
    ).toEqual({ city: 'Paris', n: 1, i: 1, ok: true, unit: 'c', tags: ['Paris'], where: { lat: 1 } });
  });

  it('accepts Gemini upper-case types and tolerates missing schemas', () => {
    expect(argsFromSchema({ type: 'OBJECT', properties: { c: { type: 'STRING' } }, required: ['c'] })).toEqual({ c: 'Paris' });
    expect(argsFromSchema(undefined)).toEqual({});
  });
});

describe('embeddings and token counting', () => {
  it('is a deterministic unit vector per text, of the requested dimension', () => {
    const v = embed('hello');
    expect(v).toHaveLength(8);
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(embed('hello')).toEqual(v);
    expect(embed('hello!')).not.toEqual(v);
    expect(embed('hello', 100)).toHaveLength(100);
  });

  it('encodes base64 as little-endian float32', () => {
    const v = embed('x', 3);
    const buf = Buffer.from(toBase64(v), 'base64');
    expect([0, 1, 2].map((i) => buf.readFloatLE(i * 4))).toEqual(v);
  });

  it('counts whitespace-separated words', () => {
    expect(countWords('  a b\n\tc ')).toBe(3);
    expect(promptTokens(['', 'a b'])).toBe(10);
  });
});
