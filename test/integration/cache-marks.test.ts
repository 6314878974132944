import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * Where clients put `cache_control` on chat completions, through the whole gateway with the openai SDK
 * against the simulator: on the message object and inside `tool_calls[]` (opencode, @ai-sdk/openai-compatible),
 * on a content part; each reaches Anthropic as a breakpoint on the right block (read from the request the
 * simulator received), at most four, the last ones kept; none reaches an OpenAI upstream.
 */

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `cachemarks-${process.pid}` });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(() => {
  sim().reset();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

const mark = { type: 'ephemeral' } as const;

/** opencode's shape, marked on the message objects (system, both user turns, the tool result) and on a tool call: five marks. */
function opencodeMessages(): unknown[] {
  return [
    { role: 'system', content: 'You are a coding agent.', cache_control: mark },
    { role: 'user', content: 'Read a.txt', cache_control: mark },
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' }, cache_control: mark }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'first line', cache_control: mark },
    { role: 'user', content: [{ type: 'text', text: 'What is its first line?' }], cache_control: mark },
  ];
}

const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

interface Block {
  type: string;
  cache_control?: unknown;
}
type AnthropicBody = { system?: string | Block[]; messages: Array<{ role: string; content: string | Block[] }> };

const create = (model: string, messages: unknown[]) =>
  client.chat.completions.create({ model, messages, tools } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);

describe('cache_control wherever clients put it', () => {
  it('message-level and tool-call marks become Anthropic breakpoints; beyond four, the last four are kept', async () => {
    await create('claude-sonnet-4-6', opencodeMessages());
    const body = sim().requests.at(-1)?.body as AnthropicBody;
    const blocks = body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
    const marked = blocks.filter((b) => b.cache_control !== undefined).map((b) => b.type);
    // Five marks were sent: the system's, the earliest in Anthropic's prefix order, is dropped.
    expect(marked).toEqual(['text', 'tool_use', 'tool_result', 'text']);
    expect(Array.isArray(body.system) ? body.system.some((b) => b.cache_control !== undefined) : false).toBe(false);

    // Within the limit, the system prompt's mark is kept on its block.
    await create('claude-sonnet-4-6', [opencodeMessages()[0], { role: 'user', content: 'hi', cache_control: mark }]);
    const small = sim().requests.at(-1)?.body as AnthropicBody;
    expect(small.system).toEqual([{ type: 'text', text: 'You are a coding agent.', cache_control: mark }]);
    expect(small.messages.at(-1)?.content).toEqual([{ type: 'text', text: 'hi', cache_control: mark }]);
  });

  it('a message-level 1-hour mark is held at the 1-hour write price, as a mark on a part is', async () => {
    const { response } = await client.chat.completions
      .create({
        model: 'claude-sonnet-4-6',
        messages: [{ role: 'user', content: 'hello', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    const entry = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    const plain = await client.chat.completions.create({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hello' }] }).withResponse();
    const plainEntry = await pollLedgerEntry(gw.accountId, plain.response.headers.get('x-request-id'));
    expect(entry?.holdInputPrice).toBe(2 * (plainEntry?.holdInputPrice as number));
  });

  it('no cache_control reaches an OpenAI upstream, on messages, tool calls or parts', async () => {
    await create('gpt-4o', opencodeMessages());
    const sent = JSON.stringify(sim().requests.at(-1)?.body);
    expect(sent).not.toContain('cache_control');
  });
});
