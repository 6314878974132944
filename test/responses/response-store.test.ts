import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../functions/shared/errors/gateway-errors';
import { conversationInput, MAX_REFERENCED_RESPONSES } from '../../functions/shared/responses/conversation-state';
import type { InputItem } from '../../functions/shared/responses/request';
import { inputItemId, outputItemId, requestIdOfResponse, responseIdOf, responseIdOfItem } from '../../functions/shared/responses/response-ids';
import type { ResponseObject } from '../../functions/shared/responses/response-object';
import { deleteStoredResponse, getStoredResponses, putStoredResponse, StoredReadTooLargeError } from '../../functions/shared/responses/response-store';
import { loadConfig } from '../../functions/shared/config/env';
import { joinBytes, MAX_STORED_BYTES, splitBytes } from '../../functions/shared/responses/stored-codec';
import { responseSaver } from '../../functions/shared/responses/stored-response-writer';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { createTestTables } from '../support/tables';

/**
 * The stored-responses store on its own, against DynamoDB Local: ids, the item layout (one item, or
 * parts), expiry, the account key, read budgets, the size bound, and the writer's failure mode.
 */

beforeAll(async () => {
  await createTestTables('resp-store');
});

let seq = 0;
/** A response object as the Responses layer makes it, with one message of `text`. */
function response(text: string, extra: Partial<ResponseObject> = {}): ResponseObject {
  const requestId = `req_${Date.now()}_${(seq++).toString(16).padStart(16, '0')}`;
  return {
    id: responseIdOf(requestId),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    completed_at: Math.floor(Date.now() / 1000),
    error: null,
    incomplete_details: null,
    model: 'gpt-4o',
    output: [
      {
        type: 'message',
        id: outputItemId('message', requestId, 0),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [], logprobs: [{ token: 'x', logprob: -1, bytes: [120], top_logprobs: [] }] }],
      },
    ],
    ...extra,
  };
}

const user = (text: string): InputItem => ({ type: 'message', role: 'user', content: text });
const account = (): string => `acct_${randomBytes(12).toString('hex')}`;

async function item(accountId: string, responseId: string): Promise<Record<string, unknown> | undefined> {
  return (await documentClient().send(new GetCommand({ TableName: tableNames().responses, Key: { accountId, responseId }, ConsistentRead: true }))).Item;
}

describe('ids', () => {
  it('derive every output item id from its response id, and back', () => {
    const rid = 'req_1735689600000_9f86d081884c7d65';
    expect(responseIdOf(rid)).toBe('resp_req_1735689600000_9f86d081884c7d65');
    expect(requestIdOfResponse('resp_req_1735689600000_9f86d081884c7d65')).toBe(rid);
    for (const type of ['message', 'reasoning', 'function_call'] as const) expect(responseIdOfItem(outputItemId(type, rid, 12))).toBe(responseIdOf(rid));
    expect(outputItemId('function_call', rid, 2)).toBe('fc_req_1735689600000_9f86d081884c7d65_2');
    // Not ours, or not an output item: no response to read.
    for (const id of ['msg_1', 'msg_abc', inputItemId('message', rid, 0), 'msg_req_1/../x_1', 'resp_req_1']) expect(responseIdOfItem(id), id).toBeUndefined();
    expect(requestIdOfResponse('resp_a b')).toBeUndefined();
  });
});

describe('the stored item', () => {
  it('is one item for a small response: compressed, without log probabilities, with a 30-day TTL, under its account only', async () => {
    const acct = account();
    const r = response('hello there');
    const now = Date.now();
    expect(await putStoredResponse(acct, r, [user('hi')], 30, now)).toBe('stored');
    const head = await item(acct, r.id);
    expect(head).toMatchObject({ status: 'completed', model: 'gpt-4o', createdAt: Math.floor(now / 1000), expiresAt: Math.floor(now / 1000) + 30 * 86_400 });
    expect(head?.['out']).toBeInstanceOf(Uint8Array);
    expect(head?.['in']).toBeInstanceOf(Uint8Array);
    expect(head?.['inParts']).toBeUndefined();
    const got = (await getStoredResponses(acct, [r.id], 'all')).get(r.id);
    expect(got?.input).toEqual([user('hi')]);
    expect(got?.response.output[0]).toMatchObject({ content: [{ text: 'hello there', logprobs: [] }] });
    expect((await getStoredResponses(account(), [r.id], 'all')).size).toBe(0);
  });

  it('splits a large input into part items, reads only the head for a reference, and deletes the parts with it', async () => {
    const acct = account();
    const r = response('big one');
    const image = randomBytes(500_000).toString('base64');
    expect(await putStoredResponse(acct, r, [user(image)], 30)).toBe('stored');
    const head = await item(acct, r.id);
    expect(head?.['in']).toBeUndefined();
    expect(head?.['inParts']).toBe(2);
    expect((head?.['out'] as Uint8Array).length).toBeLessThan(4096);
    const onlyResponse = (await getStoredResponses(acct, [r.id], 'response')).get(r.id);
    expect(onlyResponse?.input).toBeUndefined();
    expect((await getStoredResponses(acct, [r.id], 'all')).get(r.id)?.input).toEqual([user(image)]);
    expect(await deleteStoredResponse(acct, r.id)).toBe(true);
    expect(await item(acct, `${r.id}#i1`)).toBeUndefined();
    expect(await item(acct, `${r.id}#i2`)).toBeUndefined();
    expect(await deleteStoredResponse(acct, r.id)).toBe(false);
  });

  it('keeps the response but not an input over the size bound, and says so', async () => {
    const acct = account();
    const r = response('huge input');
    // Random bytes do not compress: base64 of them compresses to about 3/4 of its length.
    const huge = randomBytes(Math.ceil(MAX_STORED_BYTES * 1.05)).toString('base64');
    expect(await putStoredResponse(acct, r, [user(huge)], 30)).toBe('input-omitted');
    const got = (await getStoredResponses(acct, [r.id], 'all')).get(r.id);
    expect(got).toMatchObject({ inputOmitted: true, input: undefined });
    expect(got?.response.id).toBe(r.id);
    await expect(conversationInput(acct, { input: 'next', previous_response_id: r.id })).rejects.toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
      message: expect.stringMatching(/stored without its input/),
    });
  });

  it('treats an expired item as gone before DynamoDB deletes it', async () => {
    const acct = account();
    const r = response('old');
    const longAgo = Date.now() - 31 * 86_400_000;
    await putStoredResponse(acct, r, [user('hi')], 30, longAgo);
    expect(await item(acct, r.id)).toBeDefined();
    expect((await getStoredResponses(acct, [r.id], 'all')).size).toBe(0);
    await expect(conversationInput(acct, { input: 'x', previous_response_id: r.id })).rejects.toMatchObject({ code: 'previous_response_not_found' });
    expect(await deleteStoredResponse(acct, r.id)).toBe(false);
  });

  it('reads many responses in batches of 100, and stops at its byte budget', async () => {
    const acct = account();
    const stored = await Promise.all(
      Array.from({ length: 130 }, async (_, i) => {
        const r = response(`answer ${i}`);
        await putStoredResponse(acct, r, [user(`q ${i}`)], 30);
        return r;
      }),
    );
    const got = await getStoredResponses(
      acct,
      stored.map((r) => r.id),
      'response',
    );
    expect(got.size).toBe(130);
    await expect(
      getStoredResponses(
        acct,
        stored.map((r) => r.id),
        'response',
        Date.now(),
        1_000,
      ),
    ).rejects.toBeInstanceOf(StoredReadTooLargeError);
  });
});

describe('conversation state', () => {
  it('replaces references with the stored items, keeps them as references in what is stored, and prepends a previous response', async () => {
    const acct = account();
    const r1 = response('first answer');
    await putStoredResponse(acct, r1, [user('first')], 30);
    const msg = r1.output[0]?.id ?? '';
    const refs = await conversationInput(acct, { input: [user('first'), { type: 'item_reference', id: msg }, user('second')] });
    expect(refs.stored[1]).toEqual({ type: 'item_reference', id: msg });
    expect(refs.resolved[1]).toMatchObject({ type: 'message', role: 'assistant', id: msg, content: [{ type: 'output_text', text: 'first answer' }] });
    const prev = await conversationInput(acct, { input: 'second', previous_response_id: r1.id });
    expect(prev.resolved.map((i) => (i.type === 'message' ? i.role : i.type))).toEqual(['user', 'assistant', 'user']);
  });

  it(`refuses more than ${MAX_REFERENCED_RESPONSES} referenced responses before reading any`, async () => {
    const input: InputItem[] = Array.from({ length: MAX_REFERENCED_RESPONSES + 1 }, (_, i) => ({
      type: 'item_reference',
      id: outputItemId('message', `req_${i}`, 0),
    }));
    await expect(conversationInput(account(), { input })).rejects.toMatchObject({ status: 400, param: 'input' });
  });

  it('answers an item no response of this account holds with a 404', async () => {
    const err = await conversationInput(account(), { input: [{ type: 'item_reference', id: outputItemId('message', 'req_1_0000000000000000', 0) }] }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({
      status: 404,
      param: 'input',
      message: expect.stringMatching(/^Item with id 'msg_req_1_0000000000000000_0' not found\. Items are not persisted when `store` is set to false\./),
    });
  });
});

describe('settings and the writer', () => {
  it('reads RESPONSE_RETENTION_DAYS: 30 by default, 0 turns storing off, anything else a clear error', () => {
    const responseRetentionDays = (raw: string | undefined) => loadConfig({ RESPONSE_RETENTION_DAYS: raw }).RESPONSE_RETENTION_DAYS;
    expect(responseRetentionDays(undefined)).toBe(30);
    expect(responseRetentionDays('7')).toBe(7);
    expect(responseRetentionDays('0')).toBe(0);
    expect(() => responseRetentionDays('thirty')).toThrow(/RESPONSE_RETENTION_DAYS must be an integer from 0 to 365/);
    expect(() => responseRetentionDays('400')).toThrow(/RESPONSE_RETENTION_DAYS/);
  });

  it('stores nothing with store false or a retention of 0 days', () => {
    expect(responseSaver('a', { store: false }, [], 'req_1')).toBeUndefined();
    expect(responseSaver('a', { store: true }, [], 'req_1', { retentionDays: 0 })).toBeUndefined();
    expect(responseSaver('a', {}, [], 'req_1')).toBeInstanceOf(Function);
  });

  it('never throws when DynamoDB refuses the write: the answer goes out, the response is just not stored', async () => {
    const acct = account();
    const r = response('unlucky');
    const name = `refusePut${randomBytes(4).toString('hex')}`;
    documentClient().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand') throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      await expect(responseSaver(acct, {}, [user('hi')], 'req_x')?.(r)).resolves.toBeUndefined();
    } finally {
      documentClient().middlewareStack.remove(name);
    }
    expect(await item(acct, r.id)).toBeUndefined();
  });

  it('waits for a slow write only until the request deadline, and writes nothing once it has passed', async () => {
    const acct = account();
    const slow = response('slow table');
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let puts = 0;
    const name = `holdPut${randomBytes(4).toString('hex')}`;
    documentClient().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand') {
          puts++;
          await gate;
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      // The write is still held back when the save returns: the answer does not wait for it.
      await expect(responseSaver(acct, {}, [user('hi')], 'req_slow', { deadline: Date.now() + 100 })?.(slow)).resolves.toBeUndefined();
      expect(puts).toBe(1);
      expect(await item(acct, slow.id)).toBeUndefined();
      // Past the deadline nothing is written at all.
      const late = response('too late');
      await responseSaver(acct, {}, [user('hi')], 'req_late', { deadline: Date.now() - 1 })?.(late);
      expect(puts).toBe(1);
    } finally {
      release();
      documentClient().middlewareStack.remove(name);
    }
  });

  it('cuts and joins bytes losslessly', () => {
    const bytes = new Uint8Array(randomBytes(1_000));
    expect(splitBytes(bytes, 300).map((p) => p.length)).toEqual([300, 300, 300, 100]);
    expect(joinBytes(splitBytes(bytes, 300))).toEqual(bytes);
    expect(splitBytes(new Uint8Array(0))).toHaveLength(1);
  });
});
