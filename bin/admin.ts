/**
 * The admin CLI: accounts, API keys, credit and usage, straight against the DynamoDB tables.
 *
 *   npm run admin -- accounts create [--free-tokens N] [--credit-usd X] [--id ID]
 *   npm run admin -- accounts show --account ID
 *   npm run admin -- keys create --account ID [--name NAME]      (prints the key once)
 *   npm run admin -- keys list --account ID
 *   npm run admin -- keys revoke --account ID --key HINT|HASH-PREFIX
 *   npm run admin -- credit add --account ID --usd X
 *   npm run admin -- usage --account ID | --key sk-mux-… [--since ISO-8601]
 *   npm run admin -- accounts shards --account ID --count S
 *   npm run admin -- holds list [--expired]
 *   npm run admin -- holds settle --request REQUEST-ID | --expired
 *   npm run admin -- grants backfill (free-grant markers of accounts from before the email normal form; once)
 *   npm run admin -- health          (tables, secrets, pending holds; exit 1 when a check fails)
 *   --account takes an account id or a sign-in email (self-serve accounts, via the `byEmail` index).
 *   add --json for machine-readable output.
 *
 * Tables from KEYS_TABLE / ACCOUNTS_TABLE / LEDGER_TABLE (defaults: modelmux-keys …); DynamoDB Local when
 * DYNAMODB_ENDPOINT is set, else — when `npm start` is running here — the store it wrote to
 * `.local/state.json`, else the AWS default credential chain and AWS_REGION.
 * Exit codes: 0 done, 1 the operation failed, 2 bad command line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { addCredit, createAccount, getAccount } from '../functions/shared/accounts/account-store';
import { findAccountIdsByEmail } from '../functions/shared/accounts/self-serve-account';
import { backfillGrantMarkers } from '../functions/shared/accounts/grant-backfill';
import { createKey, listKeys } from '../functions/shared/accounts/keys/api-key-store';
import { authenticate } from '../functions/shared/accounts/authenticate';
import { revokeKey } from '../functions/shared/accounts/keys/api-key-update';
import { accountTotals } from '../functions/shared/billing/account-state';
import { usageSummary, type UsageTotals } from '../functions/shared/billing/ledger';
import { setShards } from '../functions/shared/billing/shards';
import { listPendingHolds, orphanOutcome } from '../functions/shared/billing/sweep';
import { settleHold } from '../functions/shared/billing/settle';
import { formatNanoUsd, usdToNanoUsd } from '../functions/shared/money/money';
import { GatewayError, NotFoundError } from '../functions/shared/errors/gateway-errors';
import { tableNames } from '../functions/shared/store/tables';
import { formatHealth, runHealth } from './admin-health';
import { reloadConfig } from '../functions/shared/config/env';

// The SDK warns once per process that Node 20 support ends in 2027; in a CLI that is noise on every run.
// (Read when the first client is created, which happens after this line.)
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * The store `npm start` is using, when it runs from this directory and nothing else was set: it writes
 * `.local/state.json` (local/gateway.ts) with its DynamoDB Local endpoint and table names.
 */
function useLocalStateIfAny(): void {
  if (process.env.DYNAMODB_ENDPOINT || process.env.ACCOUNTS_TABLE) return;
  const file = join(process.cwd(), '.local', 'state.json');
  if (!existsSync(file)) return;
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as { dynamodbEndpoint?: string; tables?: { keys?: string; accounts?: string; ledger?: string } };
    if (state.dynamodbEndpoint) process.env.DYNAMODB_ENDPOINT = state.dynamodbEndpoint;
    if (state.tables?.keys) process.env.KEYS_TABLE = state.tables.keys;
    if (state.tables?.accounts) process.env.ACCOUNTS_TABLE = state.tables.accounts;
    if (state.tables?.ledger) process.env.LEDGER_TABLE = state.tables.ledger;
    process.env.AWS_REGION ??= 'us-east-1';
    reloadConfig(); // the settings were parsed at import (config/env.ts): read the names just set
  } catch {
    // an unreadable state file: fall back to the defaults
  }
}

const USAGE = `usage: npm run admin -- <command> [options] [--json]
  accounts create [--free-tokens N] [--credit-usd X] [--id ID]
  accounts show   --account ID|EMAIL
  keys create     --account ID|EMAIL [--name NAME]
  keys list       --account ID|EMAIL
  keys revoke     --account ID|EMAIL --key HINT|HASH-PREFIX
  credit add      --account ID|EMAIL --usd X
  usage           --account ID|EMAIL | --key sk-mux-… [--since ISO-8601]
  accounts shards --account ID|EMAIL --count S  (fund shards for a hot account; only upward)
  holds list      [--expired]                   (holds not settled yet)
  holds settle    --request REQUEST-ID | --expired   (as orphaned: the hold's prompt estimate, no completion)
  grants backfill (once after upgrading: free-grant markers on the email normal form for older accounts)
  health`;

/** A command-line mistake: printed with the usage, exit code 2. */
class UsageError extends Error {}

const OPTIONS = {
  account: { type: 'string' },
  'free-tokens': { type: 'string' },
  'credit-usd': { type: 'string' },
  id: { type: 'string' },
  name: { type: 'string' },
  key: { type: 'string' },
  usd: { type: 'string' },
  since: { type: 'string' },
  count: { type: 'string' },
  request: { type: 'string' },
  expired: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function required(values: Values, name: 'account' | 'key' | 'usd' | 'count'): string {
  const v = values[name];
  if (!v) throw new UsageError(`--${name} is required.`);
  return v;
}

/**
 * The account `--account` names: an id as given, or the one account whose sign-in email it is.
 * @throws NotFoundError when no account has that email; UsageError when several do (give the id).
 */
async function accountRef(values: Values): Promise<string> {
  const ref = required(values, 'account');
  if (!ref.includes('@')) return ref;
  const ids = await findAccountIdsByEmail(ref);
  if (ids.length === 0) throw new NotFoundError(`No account with the email ${ref}.`);
  if (ids.length > 1) throw new UsageError(`${ids.length} accounts have the email ${ref} (${ids.join(', ')}); give --account <id>.`);
  return ids[0] as string;
}

function dollars(text: string, flag: string): number {
  try {
    return usdToNanoUsd(text);
  } catch {
    throw new UsageError(`${flag} must be a non-negative dollar amount with at most 9 decimals, got "${text}".`);
  }
}

function tokens(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw new UsageError(`--free-tokens must be a whole number, got "${text}".`);
  return n;
}

/** Aligned `label  value` lines. */
function lines(rows: Array<[string, string | number]>): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}

const count = (n: number) => n.toLocaleString('en-US');

/** Runs one command; returns [JSON result, human text, exit code (default 0)]. */
async function run(command: string, values: Values): Promise<[unknown, string, number?]> {
  switch (command) {
    case 'health': {
      const checks = await runHealth();
      return [checks, formatHealth(checks), checks.some((c) => c.status === 'fail') ? 1 : 0];
    }
    case 'accounts create': {
      const a = await createAccount({
        ...(values.id ? { accountId: values.id } : {}),
        ...(values['free-tokens'] !== undefined ? { freeTokens: tokens(values['free-tokens']) } : {}),
        ...(values['credit-usd'] !== undefined ? { creditNanoUsd: dollars(values['credit-usd'], '--credit-usd') } : {}),
      });
      return [
        a,
        lines([
          ['account', a.accountId],
          ['free tokens', count(a.freeTokens)],
          ['credit', formatNanoUsd(a.creditNanoUsd)],
        ]),
      ];
    }
    case 'accounts show':
      return showAccount(values);
    case 'keys create': {
      const k = await createKey(await accountRef(values), values.name ?? 'default');
      const text =
        `${k.key}\n\nThis is the only time the key is shown; store it now.\n` +
        lines([
          ['name', k.name],
          ['hint', k.hint],
          ['hash prefix', k.keyHash.slice(0, 12)],
          ['created', k.createdAt],
        ]);
      return [k, text];
    }
    case 'keys list': {
      const keys = await listKeys(await accountRef(values));
      const text = keys.length === 0 ? 'No keys.' : keys.map((k) => [k.keyHashPrefix, k.status.padEnd(7), k.hint, k.createdAt, k.name].join('  ')).join('\n');
      return [keys, text];
    }
    case 'keys revoke': {
      const k = await revokeKey(await accountRef(values), required(values, 'key'));
      return [
        k,
        `Deleted ${k.hint} (${k.keyHashPrefix}, "${k.name}"). Its entry on the account is gone, so holds refuse it at once; warm gateways' key caches forget it within KEY_CACHE_TTL_MS (default 30 s).`,
      ];
    }
    case 'credit add': {
      const a = await addCredit(await accountRef(values), dollars(required(values, 'usd'), '--usd'));
      return [
        a,
        lines([
          ['account', a.accountId],
          ['credit', formatNanoUsd(a.creditNanoUsd)],
        ]),
      ];
    }
    case 'usage': {
      const accountId = values.key?.startsWith('sk-mux-') ? (await authenticate(values.key)).accountId : await accountRef(values);
      const s = await usageSummary(accountId, values.since ? { since: values.since } : {});
      const row = (label: string, t: UsageTotals) =>
        [
          label.padEnd(20),
          `${count(t.requests)} req`,
          `${count(t.promptTokens)} in`,
          `${count(t.completionTokens)} out`,
          `${count(t.freeTokensUsed)} free`,
          formatNanoUsd(t.costNanoUsd),
        ].join('  ');
      const text = [row('total', s), ...Object.entries(s.byModel).map(([m, t]) => row(m, t))].join('\n');
      return [{ ...s, costUsd: formatNanoUsd(s.costNanoUsd) }, `${s.since ? `since ${s.since}\n` : ''}${text}`];
    }
    case 'accounts shards': {
      const count = Number(required(values, 'count'));
      const id = await accountRef(values);
      const n = await setShards(id, count);
      return [{ accountId: id, shards: n }, `account ${id} now has ${n} fund shard${n === 1 ? '' : 's'}`];
    }
    case 'holds list':
    case 'holds settle':
      return runHolds(command, values);
    case 'grants backfill': {
      const r = await backfillGrantMarkers();
      return [r, `${count(r.accounts)} accounts with an email; ${count(r.written)} grant markers written`];
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : 'No command given.');
  }
}

/** `accounts show`: the account with its balances summed over its fund shards. */
async function showAccount(values: Values): Promise<[unknown, string]> {
  const id = await accountRef(values);
  const a = await getAccount(id, { consistent: true });
  if (!a) throw new NotFoundError(`No account ${id}.`);
  // Balances summed over the account's fund shards (the root item alone when it has one).
  const t = await accountTotals(a);
  const shown = { ...a, ...t };
  return [
    shown,
    lines([
      ['account', a.accountId],
      ['email', a.email ?? '-'],
      ['keys', a.keyCount],
      ['free tokens', `${count(t.freeTokens)} (${count(t.heldFreeTokens)} held)`],
      ['credit', `${formatNanoUsd(t.creditNanoUsd)} (${formatNanoUsd(t.heldNanoUsd)} held)`],
      ['used', formatNanoUsd(t.usedNanoUsd)],
      ['shards', a.shards],
      ['created', a.createdAt],
    ]),
  ];
}

/** The `holds` commands (list, settle), as {@link run} returns them. */
async function runHolds(command: string, values: Values): Promise<[unknown, string, number?]> {
  if (command === 'holds list') {
    const holds = await listPendingHolds(values.expired ? Date.now() : undefined);
    const text =
      holds.length === 0
        ? 'No holds pending.'
        : holds
            .map((h) =>
              [
                h.requestId,
                h.ownerAccountId,
                h.publicModel,
                formatNanoUsd(h.holdNanoUsd),
                `${count(h.holdFreeTokens)} free`,
                `expires ${new Date(h.holdExpiresAt).toISOString()}`,
              ].join('  '),
            )
            .join('\n');
    return [holds, text];
  }
  const all = await listPendingHolds(values.expired ? Date.now() : undefined);
  const chosen = values.request ? all.filter((h) => h.requestId === values.request) : values.expired ? all : [];
  if (!values.request && !values.expired) throw new UsageError('holds settle needs --request REQUEST-ID or --expired.');
  if (values.request && chosen.length === 0) throw new NotFoundError(`No pending hold ${values.request}.`);
  const results = [];
  for (const h of chosen) results.push({ requestId: h.requestId, ...(await settleHold(h, orphanOutcome(h))) });
  return [
    results,
    results
      .map(
        (r) =>
          `${r.requestId}  ${r.alreadySettled ? 'already settled' : `settled as orphaned: ${formatNanoUsd(r.costNanoUsd)}, ${count(r.freeTokensUsed)} free tokens`}`,
      )
      .join('\n') || 'Nothing to settle.',
  ];
}

async function main(argv: string[]): Promise<number> {
  useLocalStateIfAny();
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const [result, text, code = 0] = await run(positionals.join(' '), values);
    process.stdout.write(`${values.json ? JSON.stringify(result, null, 2) : text}\n`);
    return code;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      return 2;
    }
    const where = `(tables ${Object.values(tableNames()).join(', ')}; ${process.env.DYNAMODB_ENDPOINT ?? 'AWS DynamoDB'})`;
    const message = err instanceof GatewayError ? `${err.message} [${err.code ?? err.type}]` : String(err);
    process.stderr.write(`error: ${message}\n${err instanceof GatewayError && err.status === 503 ? `${where}\n` : ''}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
