import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/shared/store/dynamo';
import type { TableNames } from '../../functions/shared/store/tables';
import { createTestTables } from '../support/tables';

/**
 * The store's client keeps its connections alive (functions/shared/store/dynamo.ts,
 * DYNAMODB_AGENT_OPTIONS): a container pays TCP (and, against AWS, TLS) setup once, not per call.
 * Counted where it happens: a TCP proxy in front of DynamoDB Local counts the connections it accepts,
 * and what the client signs comes through it too.
 */

interface CountingProxy {
  endpoint: string;
  /** Connections accepted so far. */
  connections: number;
  /** Connections the client has not ended yet (no FIN received from it). */
  open: number;
  /** Every request's Authorization header value, in order. */
  authorizations: string[];
  close(): Promise<void>;
}

async function countingProxy(target: string): Promise<CountingProxy> {
  const targetPort = Number(new URL(target).port);
  const sockets = new Set<Socket>();
  const state = { connections: 0, open: 0, authorizations: [] as string[] };
  const server: Server = createServer((client) => {
    state.connections++;
    state.open++;
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    let ended = false;
    const gone = () => void (ended || ((ended = true), state.open--));
    client.on('end', gone);
    client.on('close', gone);
    client.on('data', (chunk: Buffer) => {
      for (const m of chunk.toString('latin1').matchAll(/^authorization: (.*)\r$/gim)) state.authorizations.push(m[1] ?? '');
    });
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return Object.assign(state, {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  });
}

let tables: TableNames;
let proxy: CountingProxy;
beforeAll(async () => {
  tables = await createTestTables('reuse');
  proxy = await countingProxy(process.env.DYNAMODB_ENDPOINT ?? '');
});
afterAll(async () => proxy?.close());

describe('the store client and its connections', () => {
  it('sends 50 calls one after another over one TCP connection, and 50 more, 5 at a time, over at most 5', async () => {
    const client = createDocumentClient({ endpoint: proxy.endpoint });
    const before = proxy.connections;
    try {
      await client.send(new PutCommand({ TableName: tables.keys, Item: { keyHash: 'reuse', n: 0 } }));
      for (let i = 0; i < 49; i++) await client.send(new GetCommand({ TableName: tables.keys, Key: { keyHash: 'reuse' } }));
      expect(proxy.connections - before).toBe(1);

      for (let round = 0; round < 10; round++) {
        await Promise.all(Array.from({ length: 5 }, () => client.send(new GetCommand({ TableName: tables.keys, Key: { keyHash: 'reuse' } }))));
      }
      expect(proxy.connections - before).toBeGreaterThanOrEqual(1);
      expect(proxy.connections - before).toBeLessThanOrEqual(5);
    } finally {
      client.destroy();
    }
    // destroy() closes the pool: no connection is left open behind the client.
    await expect.poll(() => proxy.open, { timeout: 1_000, interval: 10 }).toBe(0);
  });

  it('reads the credentials from the environment once per client, not at every call', async () => {
    const saved = process.env.AWS_ACCESS_KEY_ID;
    const client = createDocumentClient({ endpoint: proxy.endpoint });
    const seen = proxy.authorizations.length;
    try {
      process.env.AWS_ACCESS_KEY_ID = 'firstKey';
      await client.send(new GetCommand({ TableName: tables.keys, Key: { keyHash: 'reuse' } }));
      process.env.AWS_ACCESS_KEY_ID = 'changedKey';
      await client.send(new GetCommand({ TableName: tables.keys, Key: { keyHash: 'reuse' } }));
    } finally {
      process.env.AWS_ACCESS_KEY_ID = saved;
      client.destroy();
    }
    const signed = proxy.authorizations.slice(seen);
    expect(signed).toHaveLength(2);
    for (const a of signed) expect(a).toMatch(/Credential=firstKey\//);
  });
});
