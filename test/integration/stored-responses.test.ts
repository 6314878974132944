import { randomBytes } from 'node:crypto';
import { DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDocumentClient, documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { RESPONSES_TABLE_ACTIONS } from '../../lib/constructs/data-tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { schemaErrors } from '../support/openapi/validator';

/**
 * Stored responses (`store: true`, OpenAI's default) through the official openai SDK, the real
 * handlers, DynamoDB Local and the simulator: `previous_response_id` over two and three turns,
 * buffered, streamed and held past the buffered budget; what is not stored (`store: false`) and what
 * is not yours (another account's ids) answered with OpenAI's errors; `responses.retrieve`,
 * `.inputItems.list` and `.delete`; and the stored item itself: its TTL, its account key, its parts
 * when large, the IAM actions its code uses, and no word of it in the logs (at DEBUG).
 */

let gw: RunningGateway;
let client: OpenAI;
let other: OpenAI;
let otherAccountId: string;
const logLines: string[] = [];
let restoreStdout: (() => void) | undefined;
/** `responses <IAM action>` for every call the code made on the responses table. */
const used = new Set<string>();
/** The test's own reads of the table: its own client, so they are not counted as the code's. */
let direct: ReturnType<typeof createDocumentClient>;

/** Words that appear only in conversations of this file: never in a log line. */
const SECRET = ['zanzibar', 'quokka', 'marmalade', 'pangolin'];
/** The buffered budget here (ms): a paced answer outlasts it and is held (app/chat-answer.ts `heldJson`). */
const BUDGET_MS = 1_500;

const ACTION_OF_COMMAND: Record<string, string> = {
  GetItemCommand: 'dynamodb:GetItem',
  BatchGetItemCommand: 'dynamodb:BatchGetItem',
  PutItemCommand: 'dynamodb:PutItem',
  DeleteItemCommand: 'dynamodb:DeleteItem',
  QueryCommand: 'dynamodb:Query',
  ScanCommand: 'dynamodb:Scan',
  UpdateItemCommand: 'dynamodb:UpdateItem',
  BatchWriteItemCommand: 'dynamodb:BatchWriteItem',
};

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
  process.env.BUFFERED_CHAT_BUDGET_MS = String(BUDGET_MS);
  gw = await startGateway({ tablePrefix: `stored-${process.pid}`, devFreeTokens: 100_000_000 });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
  direct = createDocumentClient({ endpoint: gw.dynamodbEndpoint });
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  otherAccountId = (await createAccount({ freeTokens: 10_000_000 })).accountId;
  other = new OpenAI({ baseURL: gw.baseUrl, apiKey: (await createKey(otherAccountId, 'other')).key, maxRetries: 0 });
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logLines.push(
      ...String(chunk)
        .split('\n')
        .filter((l) => l.startsWith('{')),
    );
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  restoreStdout = () => void (process.stdout.write = write);
  documentClient().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; RequestItems?: Record<string, unknown> };
      const tables = input.TableName !== undefined ? [input.TableName] : Object.keys(input.RequestItems ?? {});
      if (tables.includes(tableNames().responses)) used.add(`responses ${ACTION_OF_COMMAND[String(context.commandName)] ?? String(context.commandName)}`);
      return next(args);
    },
    { step: 'initialize', name: `recordResponsesTableUse${randomBytes(4).toString('hex')}` },
  );
});

afterAll(async () => {
  restoreStdout?.();
  direct?.destroy();
  await gw?.close();
});

beforeEach(() => sim().reset());

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

/** The chat messages the upstream received for the last request. */
function upstreamMessages(): Array<{ role: string; content: unknown }> {
  return (sim().requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
}

async function refusal(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

async function headItem(accountId: string, responseId: string): Promise<Record<string, unknown> | undefined> {
  return (await direct.send(new GetCommand({ TableName: tableNames().responses, Key: { accountId, responseId }, ConsistentRead: true }))).Item;
}

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe('previous_response_id', () => {
  it('continues a conversation over two and three turns: earlier input and output, not earlier instructions', async () => {
    const r1 = await client.responses.create({ model: 'gpt-4o', instructions: 'Be brief.', input: 'Tell me about zanzibar' });
    const r2 = await client.responses.create({ model: 'gpt-4o', previous_response_id: r1.id, input: 'And about quokkas?' });
    expect(r2.previous_response_id).toBe(r1.id);
    expect(r2.output_text).toMatch(/^Echo: And about quokkas\?/);
    expect(upstreamMessages()).toEqual([
      { role: 'user', content: 'Tell me about zanzibar' },
      { role: 'assistant', content: r1.output_text },
      { role: 'user', content: 'And about quokkas?' },
    ]);
    const r3 = await client.responses.create({
      model: 'gpt-4o',
      previous_response_id: r2.id,
      instructions: 'Answer in French.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'And marmalade?' }] }],
    });
    expect(r3.output_text).toMatch(/^Echo: And marmalade\?/);
    expect(upstreamMessages()).toEqual([
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'Tell me about zanzibar' },
      { role: 'assistant', content: r1.output_text },
      { role: 'user', content: 'And about quokkas?' },
      { role: 'assistant', content: r2.output_text },
      { role: 'user', content: [{ type: 'text', text: 'And marmalade?' }] },
    ]);
  });

  it('stores a streamed response before response.completed, so the next turn sent at once continues it', async () => {
    const stream = await client.responses.create({ model: 'claude-3-5-sonnet', input: 'Stream about the pangolin', stream: true });
    let completed: Extract<ResponseStreamEvent, { type: 'response.completed' }> | undefined;
    let storedAtCompleted: Record<string, unknown> | undefined;
    for await (const event of stream) {
      if (event.type !== 'response.completed') continue;
      completed = event;
      storedAtCompleted = await headItem(gw.accountId, event.response.id);
    }
    if (completed === undefined) throw new Error('no response.completed');
    expect(storedAtCompleted).toMatchObject({ responseId: completed.response.id, status: 'completed', model: 'claude-3-5-sonnet' });
    const next = await client.responses.create({ model: 'claude-3-5-sonnet', previous_response_id: completed.response.id, input: 'Go on', stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of next) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { previous_response_id: completed.response.id } });
    const text = completed.response.output
      .flatMap((o) => (o.type === 'message' ? o.content : []))
      .map((c) => (c.type === 'output_text' ? c.text : ''))
      .join('');
    const anthropic = sim().requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(anthropic.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(anthropic.messages[1]?.content)).toContain(JSON.stringify(text).slice(1, -1));
  });

  it('continues a function-call round trip: the function_call_output alone, after the stored call', async () => {
    const r1 = await client.responses.create({ model: 'gemini-2.0-flash', input: 'What is the weather in Paris?', tools: [weather] });
    const call = r1.output.find((o) => o.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no call');
    const r2 = await client.responses.create({
      model: 'gemini-2.0-flash',
      previous_response_id: r1.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp_c":21}' }],
      tools: [weather],
    });
    expect(r2.output_text).toBe('Tool said: {"temp_c":21}');
  });

  it('keeps an incomplete response (max_output_tokens) and continues it, as OpenAI does', async () => {
    const r1 = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say many words please', max_output_tokens: 3 });
    expect(r1.status).toBe('incomplete');
    const r2 = await client.responses.create({ model: 'gpt-4o-mini', previous_response_id: r1.id, input: 'continue' });
    expect(upstreamMessages().map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(r2.status).toBe('completed');
  });

  it('stores a buffered answer held past the budget before its body is written', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'paced', everyMs: 100, words: 30 }, { times: 1 });
    const res = await fetch(`${gw.baseUrl}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', input: 'a slow answer please' }),
    });
    const text = await res.text();
    expect(text.startsWith('\n')).toBe(true); // held: JSON-whitespace beats before the body
    const body = JSON.parse(text) as { id: string; status: string };
    expect(body.status).toBe('completed');
    const next = await client.responses.create({ model: 'gpt-4o', previous_response_id: body.id, input: 'thanks' });
    expect(next.status).toBe('completed');
  });
});

describe('what is not stored, and what is not yours', () => {
  it('store: false stores nothing: a continuation is 400 previous_response_not_found, its items 404, retrieve 404', async () => {
    const r = await client.responses.create({ model: 'gpt-4o', input: 'not to be kept', store: false });
    expect(await headItem(gw.accountId, r.id)).toBeUndefined();
    const cont = await refusal(client.responses.create({ model: 'gpt-4o', previous_response_id: r.id, input: 'hi' }));
    expect(cont).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
      error: { message: `Previous response with id '${r.id}' not found.` },
    });
    const messageId = r.output[0]?.id ?? '';
    const ref = await refusal(
      client.responses.create({
        model: 'gpt-4o',
        input: [
          { role: 'user', content: 'hi' },
          { type: 'item_reference', id: messageId },
        ],
      }),
    );
    expect(ref).toBeInstanceOf(OpenAI.NotFoundError);
    expect(ref.message).toContain(`Item with id '${messageId}' not found. Items are not persisted when \`store\` is set to false.`);
    expect(await refusal(client.responses.retrieve(r.id))).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("answers another account's response id as unknown: no continuation, reference, retrieval, listing or deletion", async () => {
    const mine = await client.responses.create({ model: 'gpt-4o', input: 'only mine' });
    const msg = mine.output[0]?.id ?? '';
    expect(await refusal(other.responses.create({ model: 'gpt-4o', previous_response_id: mine.id, input: 'steal' }))).toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
    });
    expect(await refusal(other.responses.create({ model: 'gpt-4o', input: [{ type: 'item_reference', id: msg }] }))).toMatchObject({ status: 404 });
    expect(await refusal(other.responses.retrieve(mine.id))).toMatchObject({ status: 404, error: { message: `Response with id '${mine.id}' not found.` } });
    expect(await refusal(other.responses.inputItems.list(mine.id))).toMatchObject({ status: 404 });
    expect(await refusal(other.responses.delete(mine.id))).toMatchObject({ status: 404 });
    // Still there for its owner, and no item of it under the other account.
    expect((await client.responses.retrieve(mine.id)).id).toBe(mine.id);
    expect(await headItem(otherAccountId, mine.id)).toBeUndefined();
  });

  it("refuses ids modelmux never made with OpenAI's errors, before reading anything", async () => {
    expect(await refusal(client.responses.create({ model: 'gpt-4o', previous_response_id: 'resp_123', input: 'hi' }))).toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
    });
    expect(await refusal(client.responses.create({ model: 'gpt-4o', input: [{ type: 'item_reference', id: 'msg_1' }] }))).toMatchObject({
      status: 404,
      param: 'input',
    });
    expect(await refusal(client.responses.retrieve('resp_../../x'))).toMatchObject({ status: 404 });
  });
});

describe('retrieve, input items, delete', () => {
  it('retrieves a stored response as it was returned, buffered and streamed', async () => {
    const created = await client.responses.create({ model: 'deepseek-r1', input: 'Think about it' });
    const { output_text: _created, ...createdBody } = created;
    const { output_text: _got, ...got } = await client.responses.retrieve(created.id);
    expect(got).toEqual(createdBody);
    expect(schemaErrors('Response', got)).toEqual([]);
    const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'streamed then read', stream: true });
    let last: ResponseStreamEvent | undefined;
    for await (const e of stream) last = e;
    if (last?.type !== 'response.completed') throw new Error('no response.completed');
    const { output_text: _s, ...read } = await client.responses.retrieve(last.response.id);
    expect(read).toEqual(last.response);
  });

  it('lists input items newest first, in pages, with ids (earlier output under its own id)', async () => {
    const r1 = await client.responses.create({
      model: 'gpt-4o',
      input: [
        { role: 'developer', content: 'Be kind.' },
        { role: 'user', content: 'one' },
      ],
    });
    const r2 = await client.responses.create({ model: 'gpt-4o', previous_response_id: r1.id, input: 'two' });
    const requestId = r2.id.slice('resp_'.length);
    const raw = await fetch(`${gw.baseUrl}/responses/${r2.id}/input_items?limit=2`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    const page = (await raw.json()) as { data: Array<{ id: string }>; has_more: boolean; first_id: string; last_id: string };
    expect(schemaErrors('ResponseItemList', page)).toEqual([]);
    expect(page).toMatchObject({ has_more: true, first_id: `msg_${requestId}_in3`, last_id: r1.output[0]?.id });
    const all = [];
    for await (const item of client.responses.inputItems.list(r2.id, { limit: 2 })) all.push(item);
    expect(all.map((i) => i.id)).toEqual([`msg_${requestId}_in3`, r1.output[0]?.id, `msg_${requestId}_in1`, `msg_${requestId}_in0`]);
    expect(all[0]).toMatchObject({ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'two' }] });
    expect(all[1]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: r1.output_text }] });
    const asc = await client.responses.inputItems.list(r2.id, { order: 'asc', limit: 100 });
    expect(asc.data.map((i) => i.id)).toEqual([...all.map((i) => i.id)].reverse());
  });

  it('deletes a stored response: gone for retrieval, continuation and references; a second delete is 404', async () => {
    const r = await client.responses.create({ model: 'gpt-4o', input: 'delete me' });
    const raw = await fetch(`${gw.baseUrl}/responses/${r.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(await raw.json()).toEqual({ id: r.id, object: 'response', deleted: true });
    expect(await headItem(gw.accountId, r.id)).toBeUndefined();
    expect(await refusal(client.responses.retrieve(r.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await refusal(client.responses.create({ model: 'gpt-4o', previous_response_id: r.id, input: 'hi' }))).toMatchObject({
      code: 'previous_response_not_found',
    });
    expect(await refusal(client.responses.create({ model: 'gpt-4o', input: [{ type: 'item_reference', id: r.output[0]?.id ?? '' }] }))).toMatchObject({
      status: 404,
    });
    expect(await refusal(client.responses.delete(r.id))).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('answers 405 for other methods and 404 for other paths under a response', async () => {
    const r = await client.responses.create({ model: 'gpt-4o', input: 'methods' });
    const put = await fetch(`${gw.baseUrl}/responses/${r.id}`, { method: 'PUT', headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, DELETE');
    const cancel = await fetch(`${gw.baseUrl}/responses/${r.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(cancel.status).toBe(404);
    expect(await refusal(client.responses.retrieve(r.id, { stream: true }) as Promise<unknown>)).toMatchObject({ status: 400, param: 'stream' });
  });
});

describe('the stored item', () => {
  it('expires after 30 days by DynamoDB TTL, and is keyed by its account', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await client.responses.create({ model: 'gpt-4o', input: 'how long do you keep this?' });
    const item = await headItem(gw.accountId, r.id);
    expect(item?.['expiresAt']).toBeGreaterThanOrEqual(before + 30 * 86_400);
    expect(item?.['expiresAt']).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 30 * 86_400);
    expect(item?.['createdAt']).toBeGreaterThanOrEqual(before);
    const ttl = await direct.send(new DescribeTimeToLiveCommand({ TableName: tableNames().responses }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
    // Only its account's partition holds it.
    const mine = await direct.send(
      new QueryCommand({
        TableName: tableNames().responses,
        KeyConditionExpression: 'accountId = :a AND responseId = :r',
        ExpressionAttributeValues: { ':a': gw.accountId, ':r': r.id },
      }),
    );
    expect(mine.Items).toHaveLength(1);
    expect(await headItem(otherAccountId, r.id)).toBeUndefined();
  });

  it('stores a large input in parts and gives it back whole (continuation and listing)', async () => {
    // ~600 KB of incompressible base64: over one item, so the input goes to part items.
    const image = `data:image/png;base64,${randomBytes(450_000).toString('base64')}`;
    const r1 = await client.responses.create({
      model: 'gpt-4o',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: image, detail: 'low' },
          ],
        },
      ],
    });
    const head = await headItem(gw.accountId, r1.id);
    expect(head?.['inParts']).toBe(2);
    expect(await headItem(gw.accountId, `${r1.id}#i2`)).toMatchObject({ expiresAt: head?.['expiresAt'] });
    await client.responses.create({ model: 'gpt-4o', previous_response_id: r1.id, input: 'and now?' });
    const first = upstreamMessages()[0]?.content as Array<{ type: string; image_url?: { url: string } }>;
    expect(first[1]?.image_url?.url).toBe(image);
    const listed = await client.responses.inputItems.list(r1.id);
    expect(JSON.stringify(listed.data[0])).toContain(image);
    await client.responses.delete(r1.id);
    expect(await headItem(gw.accountId, `${r1.id}#i1`)).toBeUndefined();
    expect(await headItem(gw.accountId, `${r1.id}#i2`)).toBeUndefined();
  });

  it('stores a stream that failed after its first token as failed, as OpenAI keeps failed responses', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'error-event-after-chunks', chunks: 3 }, { times: 2 });
    const stream = await client.responses.create({ model: 'gpt-4o', input: 'fail midway', stream: true });
    let last: ResponseStreamEvent | undefined;
    for await (const e of stream) last = e;
    if (last?.type !== 'response.failed') throw new Error('no response.failed');
    expect(await client.responses.retrieve(last.response.id)).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
  });

  it('never writes a word of the conversation to the logs (at DEBUG)', async () => {
    expect(logLines.length).toBeGreaterThan(10);
    const all = logLines.join('\n');
    for (const word of SECRET) expect(all).not.toContain(word);
  });

  it('is reached only with the actions granted to the chat function', () => {
    expect([...used].sort()).toEqual(RESPONSES_TABLE_ACTIONS.map((a) => `responses ${a}`).sort());
  });
});
