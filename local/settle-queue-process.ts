/**
 * The local settle queue in its own OS process, so what is queued outlives a crash of the gateway
 * process (with the emulator inside `npm start`, a kill once lost every queued settle, which then
 * ended as an orphan). The SQS emulator (`fauxqs`, in memory) runs in a detached child; its endpoint
 * and pid go to a state file, and the next start reuses a child that still answers, whose poller then
 * settles what the dead gateway queued. A clean stop ends the child; a crash leaves it running.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';

/** A running queue process. */
export interface QueueProcess {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  pid: number;
  /** True when a queue process left by an earlier (crashed) gateway was reused. */
  reused: boolean;
  /** Ends the process (and forgets its state file). */
  stop(): Promise<void>;
}

interface QueueState {
  endpoint: string;
  pid: number;
}

/** Whether an SQS endpoint answers (ListQueues within 2 s). */
async function answers(endpoint: string): Promise<boolean> {
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  try {
    await sqs.send(new ListQueuesCommand({}), { abortSignal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  } finally {
    sqs.destroy();
  }
}

function readState(file: string | undefined): QueueState | undefined {
  if (file === undefined || !existsSync(file)) return undefined;
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as Partial<QueueState>;
    return typeof s.endpoint === 'string' && typeof s.pid === 'number' ? { endpoint: s.endpoint, pid: s.pid } : undefined;
  } catch {
    return undefined;
  }
}

/** Spawns the emulator in a detached child and reads its endpoint from its first line of output. */
function spawnEmulator(): Promise<QueueState> {
  // Evaluated in the repository root, where `fauxqs` resolves from node_modules.
  const root = fileURLToPath(new URL('..', import.meta.url));
  const script = `const { startFauxqs } = await import('fauxqs'); const s = await startFauxqs({ port: 0, logger: false }); process.stdout.write(s.address + '\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error('the SQS emulator process did not start within 30 s')), 30_000);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      child.kill();
      reject(err);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`the SQS emulator process exited (${String(code)})`)));
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const line = out.split('\n')[0];
      if (!out.includes('\n') || line === undefined) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout.destroy();
      child.unref();
      resolve({ endpoint: line.trim(), pid: child.pid as number });
    });
  });
}

/**
 * Starts the queue process, or reuses the one `stateFile` names when it still answers.
 * @param stateFile where the endpoint and pid are kept between starts (none: always a new process).
 * @throws Error when the emulator process cannot be started.
 */
export async function startQueueProcess(stateFile?: string): Promise<QueueProcess> {
  const left = readState(stateFile);
  const reused = left !== undefined && (await answers(left.endpoint));
  const state = reused ? left : await spawnEmulator();
  if (stateFile !== undefined) {
    mkdirSync(dirname(stateFile), { recursive: true });
    writeFileSync(stateFile, `${JSON.stringify(state)}\n`);
  }
  return {
    ...state,
    reused,
    stop: async () => {
      try {
        process.kill(state.pid);
      } catch {
        // already gone
      }
      if (stateFile !== undefined) rmSync(stateFile, { force: true });
    },
  };
}
