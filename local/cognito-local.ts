/**
 * The Cognito emulator (npm `cognito-local`) for `npm start` and the tests: started as a child process
 * on loopback (a free port unless one is given), its state in `dataDir` (the emulator keeps `.cognito/`
 * under its working directory), and the user pool and dashboard app client created through the real
 * `@aws-sdk/client-cognito-identity-provider` against it — with the settings the CDK stack gives the
 * real pool (lib/constructs/identity.ts).
 *
 * Sign-up codes: the emulator "sends" the confirmation code by printing it; this module reads it from
 * the emulator's output, prints one plain line per code (`onCode`), and answers `confirmationCode(email)`
 * so a test or a local dashboard session can confirm without a mailbox.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import {
  CognitoIdentityProviderClient, CreateUserPoolClientCommand, CreateUserPoolCommand, DescribeUserPoolCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { DASHBOARD_CLIENT_SETTINGS, USER_POOL_SETTINGS } from '../lib/constructs/identity-settings';

/** Options of {@link startCognitoLocal}. */
export interface CognitoLocalOptions {
  /** TCP port on 127.0.0.1; 0 or omitted = a free port. */
  port?: number;
  /** Where the emulator keeps its state (and `pool.json`, the ids of the pool and client). Required. */
  dataDir: string;
  /** Called with each confirmation code the emulator "sends". */
  onCode?: (email: string, code: string) => void;
  /** How long to wait for the emulator to answer, ms (default 20,000). */
  startTimeoutMs?: number;
}

/** A running emulator with the pool and client in it. */
export interface RunningCognitoLocal {
  /** e.g. `http://127.0.0.1:41234`. */
  endpoint: string;
  userPoolId: string;
  userPoolClientId: string;
  /** `COGNITO_*` variables pointing the functions at this pool (identity-config.ts). */
  env: Record<string, string>;
  /** The latest confirmation code sent to `email`, waiting for it up to `timeoutMs` (default 5,000). */
  confirmationCode(email: string, timeoutMs?: number): Promise<string>;
  /** Stops the emulator. Idempotent. */
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** Starts the emulator and makes sure the pool and client exist. @throws Error when it does not start. */
export async function startCognitoLocal(opts: CognitoLocalOptions): Promise<RunningCognitoLocal> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const port = opts.port || (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  const codes = new Map<string, string>();
  const waiters = new Set<() => void>();
  const child = spawn(process.execPath, [require.resolve('cognito-local/lib/bin/start.js')], {
    cwd: dataDir,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let tail = '';
  const read = (chunk: Buffer) => {
    tail = (tail + stripAnsi(chunk.toString('utf8'))).slice(-20_000);
    for (const { email, code } of extractCodes(tail)) {
      if (codes.get(email.toLowerCase()) === code) continue;
      codes.set(email.toLowerCase(), code);
      opts.onCode?.(email, code);
      for (const wake of waiters) wake();
    }
  };
  child.stdout?.on('data', read);
  child.stderr?.on('data', read);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await stopChild(child);
  };
  try {
    await waitForHealth(endpoint, child, opts.startTimeoutMs ?? 20_000);
    const ids = await ensurePoolAndClient(endpoint, join(dataDir, 'pool.json'));
    return {
      endpoint,
      ...ids,
      env: {
        COGNITO_USER_POOL_ID: ids.userPoolId,
        COGNITO_CLIENT_ID: ids.userPoolClientId,
        COGNITO_ISSUER: `${endpoint}/${ids.userPoolId}`,
        COGNITO_JWKS_URI: `${endpoint}/${ids.userPoolId}/.well-known/jwks.json`,
        COGNITO_ENDPOINT: endpoint,
      },
      confirmationCode: (email, timeoutMs = 5_000) => waitForCode(codes, waiters, email, timeoutMs),
      stop,
    };
  } catch (err) {
    await stop();
    throw new Error(`The Cognito emulator did not start on ${endpoint}: ${(err as Error).message}\n${tail.slice(-2_000)}`);
  }
}

/** The pool and client from `file` when the emulator still has them, else new ones (saved to `file`). */
async function ensurePoolAndClient(endpoint: string, file: string): Promise<{ userPoolId: string; userPoolClientId: string }> {
  const client = new CognitoIdentityProviderClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    if (existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as { userPoolId: string; userPoolClientId: string };
      const found = await client.send(new DescribeUserPoolCommand({ UserPoolId: saved.userPoolId })).catch(() => undefined);
      if (found?.UserPool) return saved;
    }
    const pool = await client.send(new CreateUserPoolCommand({ PoolName: 'modelmux-users', ...USER_POOL_SETTINGS }));
    const userPoolId = pool.UserPool?.Id;
    if (!userPoolId) throw new Error('CreateUserPool returned no id');
    const app = await client.send(new CreateUserPoolClientCommand({ UserPoolId: userPoolId, ClientName: 'modelmux-dashboard', ...DASHBOARD_CLIENT_SETTINGS }));
    const userPoolClientId = app.UserPoolClient?.ClientId;
    if (!userPoolClientId) throw new Error('CreateUserPoolClient returned no id');
    writeFileSync(file, JSON.stringify({ userPoolId, userPoolClientId }, null, 2));
    return { userPoolId, userPoolClientId };
  } finally {
    client.destroy();
  }
}

/** Removes terminal colour codes. */
function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

/** The (email, code) pairs of every "Confirmation Code Delivery" box in `text` (the emulator's console sender). */
export function extractCodes(text: string): Array<{ email: string; code: string }> {
  const found: Array<{ email: string; code: string }> = [];
  for (const box of text.split('Confirmation Code Delivery').slice(1)) {
    const email = /Destination:\s+(\S+@\S+?)\s*│/.exec(box)?.[1];
    const code = /Code:\s+(\d{4,8})\s*│/.exec(box)?.[1];
    if (email && code) found.push({ email, code });
  }
  return found;
}

function waitForCode(codes: Map<string, string>, waiters: Set<() => void>, email: string, timeoutMs: number): Promise<string> {
  const key = email.toLowerCase();
  return new Promise((resolvePromise, reject) => {
    const check = () => {
      const code = codes.get(key);
      if (code === undefined) return;
      codes.delete(key);
      cleanup();
      resolvePromise(code);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no confirmation code for ${email} within ${timeoutMs} ms`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      waiters.delete(check);
    };
    waiters.add(check);
    check();
  });
}

async function waitForHealth(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the emulator exited with code ${child.exitCode}`);
    try {
      const r = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1_000) });
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

/** A TCP port that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}
