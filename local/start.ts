// Lambda runs Node 24; the AWS SDK's notice about Node 20 support is noise in local development.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The EMF metric line each invocation prints in Lambda (functions/shared/observability/metrics.ts) is
// noise on a developer's console; POWERTOOLS_METRICS_DISABLED=false npm start shows them.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
import { join } from 'node:path';
import { CATALOGUE } from '../functions/shared/catalogue/catalogue';
import { HOLD_SWEEP_INTERVAL_MINUTES } from '../functions/shared/config/stack-contract';
import { rateLimitsFor } from '../functions/shared/config/env';
import { formatNanoUsd, usdToNanoUsd } from '../functions/shared/money/money';
import { STRIPE_WEBHOOK_PATH } from '../functions/shared/account-api/paths';
import { LOCAL_STATE_DIR, startGateway } from './gateway';
import { AlreadyRunningError, acquireStartLock } from './start-lock';
import { buildWebSync } from '../web/build';

/**
 * `npm start`: the gateway on http://127.0.0.1:$PORT (default 8080) with DynamoDB Local keeping its
 * data in .local/dynamodb (git-ignored), the dev key in .local/dev-api-key, the Cognito emulator's
 * users in .local/cognito and the BYOK key-encryption key in .local/byok-kek, so all survive restarts.
 * Ctrl-C stops everything. .local/npm-start.pid holds the running start's pid (local/start-lock.ts).
 */
// One start per checkout: a second would empty the first's Cognito code file and fight over DynamoDB
// Local's data, so it refuses before touching .local (or web/dist).
try {
  acquireStartLock(LOCAL_STATE_DIR);
} catch (err) {
  if (!(err instanceof AlreadyRunningError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
const port = Number(process.env.PORT ?? 8080);
// The dashboard is served from web/dist at `/`: build it first so it matches the sources.
const web = buildWebSync();
/**
 * The dev account is the operator's own: a paid account with simulated credit ($100 unless
 * DEV_CREDIT_USD says otherwise), so its key has the paid tier's rate limits, not the free tier's
 * 20 requests a minute (which the SDKs would meet with quiet retries).
 */
/** STRIPE_WEBHOOK_SECRET from the env is used as is; otherwise one is generated once into .local/. */
const webhookSecretFromEnv = Boolean(process.env.STRIPE_WEBHOOK_SECRET?.trim());
const devCreditNanoUsd = usdToNanoUsd(process.env.DEV_CREDIT_USD ?? '100');
const cognitoPort = process.env.COGNITO_LOCAL_PORT ? Number(process.env.COGNITO_LOCAL_PORT) : undefined;
const gateway = await startGateway({
  port,
  dataDir: join(LOCAL_STATE_DIR, 'dynamodb'),
  devKeyFile: join(LOCAL_STATE_DIR, 'dev-api-key'),
  stateFile: join(LOCAL_STATE_DIR, 'state.json'),
  cognito: {
    dataDir: join(LOCAL_STATE_DIR, 'cognito'),
    ...(cognitoPort === undefined ? {} : { port: cognitoPort }),
    // The emulator has no mail server: the sign-up code is printed here.
    onCode: (email, code) => process.stdout.write(`[cognito] confirmation code for ${email}: ${code}\n`),
  },
  byokKekFile: join(LOCAL_STATE_DIR, 'byok-kek'),
  // Payments against the local Stripe stand-in (or the Stripe of STRIPE_SECRET_KEY when set).
  stripe: { webhookSecretFile: join(LOCAL_STATE_DIR, 'stripe-webhook-secret') },
  // Account emails (low balance, spend limit, auto top-up failed) through the SES stand-in into .local/mail/.
  mail: { dir: join(LOCAL_STATE_DIR, 'mail') },
  devCreditNanoUsd,
  // The settle queue runs in its own process: a crash of this one loses nothing queued (the next start reuses it).
  settle: { queueStateFile: join(LOCAL_STATE_DIR, 'settle-queue.json') },
  simulator: { chunkDelayMs: Number(process.env.SIM_CHUNK_DELAY_MS ?? 20) },
  // Locally a client that leaves stops its upstream request (saves real tokens); Lambda cannot.
  signalClientDisconnect: true,
});

/** How many catalogue models a provider serves (a provider just added may serve none yet). */
const modelsServedBy = (provider: string): number => [...CATALOGUE.values()].filter((e) => e.targets.some((t) => t.provider === provider)).length;
const paidLimits = rateLimitsFor(devCreditNanoUsd);
const limitText = (n: number, unit: string) => (n === 0 ? `no ${unit} limit` : `${n} ${unit}`);
const rows = Object.entries(gateway.providers).map(([name, how]) => {
  const served = modelsServedBy(name.toLowerCase());
  return `  ${name.toLowerCase().padEnd(10)} ${how.padEnd(10)} ${served === 0 ? 'no catalogue model uses it' : `serves ${served} model${served === 1 ? '' : 's'}`}`;
});
process.stdout.write(
  [
    '',
    'modelmux is running.',
    `  base URL   ${gateway.baseUrl}`,
    `  API key    ${gateway.apiKey}`,
    `  account    ${gateway.accountId}   (the dev account: npm run admin -- accounts show --account ${gateway.accountId})`,
    `  tier       paid (simulated credit: ${formatNanoUsd(devCreditNanoUsd)} at creation); ${limitText(paidLimits.rpm, 'requests a minute')}, ${limitText(paidLimits.concurrent, 'at a time')}`,
    `  dashboard  ${gateway.origin}/  (sign up there; ${(web.jsBytes / 1024).toFixed(1)} KB of JavaScript, built from web/)`,
    `  Cognito    ${gateway.cognito?.endpoint ?? '-'}  (emulator: pool ${gateway.cognito?.userPoolId ?? '-'}, client ${gateway.cognito?.userPoolClientId ?? '-'}; sign-up codes are printed below)`,
    `  DynamoDB   ${gateway.dynamodbEndpoint}   (the admin CLI finds it through .local/state.json)`,
    `  Stripe     ${gateway.stripe?.standIn ? `${gateway.stripe.standIn.url}  (local stand-in: "Add credit" in the dashboard opens its checkout page)` : 'the Stripe of STRIPE_SECRET_KEY'}`,
    `             webhook ${gateway.origin}${STRIPE_WEBHOOK_PATH}, signing secret ${gateway.stripe?.webhookSecret ?? '-'}${webhookSecretFromEnv ? ' (from STRIPE_WEBHOOK_SECRET)' : ' (.local/stripe-webhook-secret)'}`,
    `  email      ${gateway.mail ? `${gateway.mail.dir}/*.eml  (SES stand-in ${gateway.mail.sesUrl} → SMTP catch-all on 127.0.0.1:${gateway.mail.smtpPort}; from ${process.env.EMAIL_FROM})` : 'off'}`,
    `  settle     queue ${gateway.settle.queueUrl} (SQS emulator), orphan sweep every ${HOLD_SWEEP_INTERVAL_MINUTES} minutes`,
    'Providers (real when <NAME>_API_KEY is set):',
    ...rows,
    '',
    'Try it:',
    `  curl ${gateway.baseUrl}/chat/completions -H "Authorization: Bearer ${gateway.apiKey}" \\`,
    `    -H "Content-Type: application/json" -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'`,
    '',
  ].join('\n'),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void gateway.close().then(() => process.exit(0));
  });
}
