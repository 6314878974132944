import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * A stream longer than the function's own timeout: modelmux stops the upstream at the deadline
 * (timeout less the settle reserve), ends the stream with an error event, and bills what was
 * produced — instead of Lambda killing the invocation with nothing billed and no end signalled.
 */

let gw: RunningGateway;

beforeAll(async () => {
  // 6.5 s function timeout − 5 s reserve = a 1.5 s deadline; the reply takes ~12 s at 300 ms a chunk.
  gw = await startGateway({ tablePrefix: `deadline-${process.pid}`, chatTimeoutMs: 6_500, simulator: { chunkDelayMs: 300, replyWords: 40 } });
});

afterAll(async () => {
  await gw?.close();
});

describe('function deadline', () => {
  it('ends an over-long stream with an error event before the function times out, and bills it as partial', async () => {
    const started = Date.now();
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a very long answer please' }] }),
    });
    const body = await res.text();
    const elapsed = Date.now() - started;
    const events = body.split('\n\n').filter((e) => e.startsWith('data: '));
    const last = JSON.parse(events.at(-1)?.slice(6) ?? '{}') as { error?: { message: string } };
    expect(res.status).toBe(200);
    expect(events.length).toBeGreaterThan(2);
    expect(last.error?.message).toMatch(/failed mid-stream \(timeout\)/);
    expect(body).not.toContain('[DONE]');
    expect(elapsed).toBeLessThan(6_500);

    const { documentClient } = await import('../../functions/shared/store/dynamo');
    const { tableNames } = await import('../../functions/shared/store/tables');
    const requestId = res.headers.get('x-request-id');
    let item: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && !item; i++) {
      item = (await documentClient().send(new GetCommand({ TableName: tableNames().ledger, Key: { accountId: gw.accountId, requestId } }))).Item;
      if (!item) await new Promise((r) => setTimeout(r, 30));
    }
    expect(item).toMatchObject({ status: 'partial', usageEstimated: true });
    expect(item?.completionTokens).toBeGreaterThan(0);
  });
});
