/**
 * `npm run smoke -- --base-url https://…/v1`: does a deployment work end to end, as a new user sees it?
 * Signs up a user through the dashboard's Cognito pool, makes an API key through the account API,
 * calls chat (buffered and streamed), embeddings and `/v1/messages` with the official SDKs, checks the
 * ledger and the balance through the API, then deletes the key and the user. One PASS/FAIL/SKIP line
 * per step (bin/smoke/run.ts); exit 0 when every step passed, 1 when one failed, 2 for a bad command line.
 *
 *   --base-url URL          the BaseUrl output (…/v1; required)
 *   --account-url URL       where /config.json and the account API are (default: the base URL's origin,
 *                           as CloudFront routes them; with -c cloudfront=false the AccountUrl output)
 *   --email ADDRESS         the address to sign up (default modelmux-smoke-<random>@example.com; needed
 *                           with --confirm code except against npm start on this machine)
 *   --confirm code|admin    code (default): type the code Cognito mailed when asked (npm start prints it);
 *                           admin: AdminConfirmSignUp with your AWS credentials (no mailbox needed)
 *   --user-pool-id ID --client-id ID [--region R] [--cognito-endpoint URL]
 *                           the pool (the UserPoolId and UserPoolClientId outputs) instead of
 *                           /config.json's; the endpoint only for a Cognito that is not AWS's
 *   --chat-model M          default gpt-4o-mini (also the /v1/messages model unless --messages-model)
 *   --embedding-model M     default text-embedding-3-small
 *   --messages-model M      default: the chat model
 *   --ledger-timeout S      seconds the requests' ledger entries may take to show (default 120)
 *   --settle-timeout S      seconds the balance may take to move (default 900: see bin/smoke/ledger.ts)
 */
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { runSmoke, type SmokeOptions } from './smoke/run';
import { summary } from './smoke/report';

// The SDK warns once per process that Node 20 support ends in 2027; in a CLI that is noise on every run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = 'usage: npm run smoke -- --base-url https://<host>/v1 [--account-url URL] [--email ADDRESS] [--confirm code|admin] (see bin/smoke.ts)';

const OPTIONS = {
  'base-url': { type: 'string' },
  'account-url': { type: 'string' },
  email: { type: 'string' },
  confirm: { type: 'string', default: 'code' },
  'user-pool-id': { type: 'string' },
  'client-id': { type: 'string' },
  region: { type: 'string' },
  'cognito-endpoint': { type: 'string' },
  'chat-model': { type: 'string', default: 'gpt-4o-mini' },
  'embedding-model': { type: 'string', default: 'text-embedding-3-small' },
  'messages-model': { type: 'string' },
  'ledger-timeout': { type: 'string', default: '120' },
  'settle-timeout': { type: 'string', default: '900' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A bad command line. */
class UsageError extends Error {}

/** An http(s) URL without its trailing slashes. @throws UsageError. */
function url(flag: string, value: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new UsageError(`--${flag} is not a URL: ${value}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new UsageError(`--${flag} must be http(s): ${value}`);
  return value.replace(/\/+$/, '');
}

/** True for `npm start` on this machine, whose Cognito emulator prints each code instead of mailing it. */
function isLoopback(baseUrl: string): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(baseUrl).hostname);
}

/** Whole seconds → ms. @throws UsageError. */
function seconds(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} must be a whole number of seconds ≥ 1: ${value}`);
  return n * 1000;
}

/** The options of a run from the command line (everything but the I/O). @throws UsageError. */
function parseOptions(argv: string[]): Omit<SmokeOptions, 'askCode' | 'write'> | 'help' {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return 'help';
  if (values['base-url'] === undefined) throw new UsageError('--base-url is required (the BaseUrl output)');
  const base = url('base-url', values['base-url']);
  const baseUrl = base.endsWith('/v1') ? base : `${base}/v1`;
  if (values.confirm !== 'code' && values.confirm !== 'admin') throw new UsageError(`--confirm must be code or admin: ${values.confirm}`);
  const [poolId, clientId] = [values['user-pool-id'], values['client-id']];
  if ((poolId === undefined) !== (clientId === undefined)) throw new UsageError('--user-pool-id and --client-id go together');
  if (values.confirm === 'code' && values.email === undefined && !isLoopback(baseUrl)) {
    throw new UsageError('--confirm code needs --email: an address whose mail you can read (or --confirm admin with AWS credentials)');
  }
  const region = values.region ?? poolId?.split('_')[0];
  if (poolId !== undefined && !region) throw new UsageError('--region is needed: the pool id does not start with one');
  const endpoint = values['cognito-endpoint'];
  if (endpoint !== undefined && poolId === undefined) throw new UsageError('--cognito-endpoint goes with --user-pool-id and --client-id');
  return {
    baseUrl,
    accountOrigin: values['account-url'] === undefined ? new URL(baseUrl).origin : url('account-url', values['account-url']),
    email: values.email ?? `modelmux-smoke-${randomBytes(6).toString('hex')}@example.com`,
    confirm: values.confirm,
    ...(poolId === undefined || clientId === undefined
      ? {}
      : {
          pool: {
            userPoolId: poolId,
            userPoolClientId: clientId,
            region: region as string,
            ...(endpoint === undefined ? {} : { cognitoEndpoint: url('cognito-endpoint', endpoint) }),
          },
        }),
    chatModel: values['chat-model'],
    embeddingModel: values['embedding-model'],
    messagesModel: values['messages-model'] ?? values['chat-model'],
    ledgerTimeoutMs: seconds('ledger-timeout', values['ledger-timeout']),
    settleTimeoutMs: seconds('settle-timeout', values['settle-timeout']),
  };
}

/** Asks for the confirmation code on stdin (one line). @throws Error when stdin ends first. */
function askCodeOnStdin(email: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: false });
  return new Promise((resolve, reject) => {
    rl.once('close', () => reject(new Error(`stdin ended before the confirmation code for ${email} was given`)));
    rl.question(`Confirmation code Cognito sent to ${email}: `, (answer) => {
      if (!process.stdin.isTTY) process.stdout.write('\n'); // a terminal echoed the typed line's end; a pipe does not
      resolve(answer);
      rl.close();
      process.stdin.destroy(); // nothing more is read: an open stdin would keep the process alive
    });
  });
}

async function main(argv: string[]): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const write = (line: string) => process.stdout.write(`${line}\n`);
  write(`modelmux smoke test of ${options.baseUrl} (account API ${options.accountOrigin})`);
  const results = await runSmoke({ ...options, askCode: askCodeOnStdin, write });
  const failed = results.some((r) => r.verdict === 'FAIL');
  write(`${summary(results)}: ${failed ? 'FAIL' : 'PASS'}`);
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
