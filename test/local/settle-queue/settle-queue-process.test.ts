import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { startQueueProcess, type QueueProcess } from '../../../local/settle-queue-process';

/**
 * The local settle queue lives outside the gateway process, so what a crashed gateway
 * queued is still there for the next start.
 */
const dir = mkdtempSync(join(tmpdir(), 'settle-queue-'));
const started: QueueProcess[] = [];

afterAll(async () => {
  for (const q of started) await q.stop();
  rmSync(dir, { recursive: true, force: true });
});

const client = (endpoint: string) => new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

describe('the settle queue process', () => {
  it('runs in another process; a gateway that dies without stopping it leaves its messages to the next start', async () => {
    const file = join(dir, 'settle-queue.json');
    const first = await startQueueProcess(file);
    started.push(first);
    expect(first.pid).not.toBe(process.pid);
    expect(first.reused).toBe(false);
    const sqs = client(first.endpoint);
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'modelmux-settle', Attributes: { VisibilityTimeout: '5' } }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: '{"requestId":"req_queued_before_the_crash"}' }));
    sqs.destroy();

    // The gateway is killed here: it never stops the queue process. The next start finds it.
    const second = await startQueueProcess(file);
    started.push(second);
    expect(second).toMatchObject({ reused: true, endpoint: first.endpoint, pid: first.pid });
    const again = client(second.endpoint);
    const { QueueUrl: same } = await again.send(new CreateQueueCommand({ QueueName: 'modelmux-settle', Attributes: { VisibilityTimeout: '5' } }));
    const got = await again.send(new ReceiveMessageCommand({ QueueUrl: same, WaitTimeSeconds: 1 }));
    expect(got.Messages?.map((m) => m.Body)).toEqual(['{"requestId":"req_queued_before_the_crash"}']);
    again.destroy();

    // A clean stop ends it; the next start spawns a new one.
    await second.stop();
    const third = await startQueueProcess(file);
    started.push(third);
    expect(third.reused).toBe(false);
    expect(third.pid).not.toBe(first.pid);
  }, 90_000);
});
