/**
 * The Cognito emulator (npm `cognito-local`) for `npm start` and the tests: started as a child process
 * on loopback (a free port unless one is given), its state in `dataDir` (the emulator keeps `.cognito/`
 * under its working directory), and the user pool and dashboard app client created through the real
 * `@aws-sdk/client-cognito-identity-provider` against it — with the settings the CDK stack gives the
 * real pool (lib/constructs/identity.ts).
 *
 * Sign-up codes: the emulator "sends" the confirmation code by printing it; its entry point here also
 * appends each code to `codes.jsonl` (cognito-local-main.mjs), which this module reads to report each
 * code (`onCode`: `npm start` prints it) and to answer `confirmationCode(email)`, so a test or a local
 * dashboard session can confirm without a mailbox.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import {
  CognitoIdentityProviderClient,
  CreateUserPoolClientCommand,
  CreateUserPoolCommand,
  DescribeUserPoolCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { DASHBOARD_CLIENT_SETTINGS, USER_POOL_SETTINGS } from '../lib/constructs/identity-settings';
import { retrying, type RetryPolicy } from '../functions/shared/retry/retry';

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

/** A free port found, then lost to another process before the emulator bound it: try another (3 tries). */
const LOST_PORT: RetryPolicy = { maxAttempts: 3, delayMs: (err) => (err instanceof Error && err.message.includes('EADDRINUSE') ? 0 : undefined) };

/**
 * Starts the emulator and makes sure the pool and client exist. Without `opts.port`, a port another
 * process took between {@link freePort} and the emulator's listen is replaced by a new one.
 * @throws Error when it does not start.
 */
export async function startCognitoLocal(opts: CognitoLocalOptions): Promise<RunningCognitoLocal> {
  return opts.port ? startOn(opts, opts.port) : retrying(async () => startOn(opts, await freePort()), LOST_PORT);
}

async function startOn(opts: CognitoLocalOptions, port: number): Promise<RunningCognitoLocal> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const endpoint = `http://127.0.0.1:${port}`;
  const codesFile = join(dataDir, 'codes.jsonl');
  writeFileSync(codesFile, '');
  const child = spawn(process.execPath, [fileURLToPath(new URL('./cognito-local-main.mjs', import.meta.url))], {
    cwd: dataDir,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let tail = '';
  const keepTail = (chunk: string) => (tail = (tail + chunk).slice(-4_000));
  child.stdout?.setEncoding('utf8').on('data', keepTail); // drained, so a full pipe never blocks the emulator
  child.stderr?.setEncoding('utf8').on('data', keepTail);
  const codes = new CodeReader(codesFile, opts.onCode);
  const watcher = setInterval(() => codes.poll(), 250);
  watcher.unref();
  const stop = async () => {
    clearInterval(watcher);
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
      confirmationCode: (email, timeoutMs = 5_000) => codes.waitFor(email, timeoutMs),
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

/**
 * The confirmation codes the emulator "sent", from the JSON lines its entry point appends to
 * `codes.jsonl` (local/cognito-local-main.mjs). Each code is handed out once.
 */
class CodeReader {
  private offset = 0;
  private readonly latest = new Map<string, string>();

  constructor(
    private readonly file: string,
    private readonly onCode: ((email: string, code: string) => void) | undefined,
  ) {}

  /** Reads lines appended since the last call. */
  poll(): void {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return;
    }
    const end = text.lastIndexOf('\n') + 1;
    for (const line of text.slice(this.offset, end).split('\n')) {
      if (line === '') continue;
      const { destination, code } = JSON.parse(line) as { destination: string; code: string };
      this.latest.set(destination.toLowerCase(), code);
      this.onCode?.(destination, code);
    }
    this.offset = Math.max(this.offset, end);
  }

  /** The latest unused code sent to `email`, waiting up to `timeoutMs`. */
  async waitFor(email: string, timeoutMs: number): Promise<string> {
    const key = email.toLowerCase();
    for (const deadline = Date.now() + timeoutMs; ;) {
      this.poll();
      const code = this.latest.get(key);
      if (code !== undefined) {
        this.latest.delete(key);
        return code;
      }
      if (Date.now() > deadline) throw new Error(`no confirmation code for ${email} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
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
