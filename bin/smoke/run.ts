/**
 * The smoke test's steps against one deployment, in order: the dashboard's config, a new user signed up
 * through Cognito, its account, an API key, the four calls, the ledger and the balance, then the key and
 * the user deleted again. A step that fails does not stop the steps that do not need it (the clean-up
 * always runs for what was made).
 */
import type { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { AccountApi, siteConfig, type AccountInfo, type SiteConfig } from './account-api';
import { chatBuffered, chatStreamed, clientsFor, embeddings, messages, type Answered, type Clients } from './calls';
import { cognitoClient, deleteUser, newPassword, signUp, type ConfirmMode, type SmokeUser } from './cognito';
import { checkActivity, checkBalance, generations, nudgeFunctions, type Generation } from './ledger';
import { runSteps, type Step, type StepResult } from './report';

/** What one run needs. */
export interface SmokeOptions {
  /** The OpenAI base URL, ending in /v1 (the BaseUrl output). */
  baseUrl: string;
  /** Origin of `/config.json` and the account API (the CloudFront URL, or the AccountUrl output). */
  accountOrigin: string;
  email: string;
  confirm: ConfirmMode;
  /** Asks for the code Cognito mailed (with `confirm: 'code'`). */
  askCode: (email: string) => Promise<string>;
  /** The pool instead of `/config.json`'s. */
  pool?: SiteConfig;
  chatModel: string;
  embeddingModel: string;
  messagesModel: string;
  /** How long the requests' ledger entries may take to show, ms. */
  ledgerTimeoutMs: number;
  /** How long the balance may take to move (leases returned), ms. */
  settleTimeoutMs: number;
  /** Prints one line. */
  write: (line: string) => void;
}

/** What the steps make and hand on. */
interface State {
  config?: SiteConfig;
  cognito?: CognitoIdentityProviderClient;
  user?: SmokeUser;
  api?: AccountApi;
  before?: AccountInfo;
  key?: { key: string; hash: string };
  clients?: Clients;
  answered: Answered[];
  entries?: Generation[];
}

/** `value`, or an Error saying which earlier step should have made it. */
function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

/** The config from the flags, else `/config.json`. */
async function configStep(o: SmokeOptions, s: State): Promise<string> {
  s.config = o.pool ?? (await siteConfig(o.accountOrigin));
  s.cognito = cognitoClient(s.config);
  const from = o.pool ? 'the flags' : `${o.accountOrigin}/config.json`;
  return `user pool ${s.config.userPoolId}, app client ${s.config.userPoolClientId}, region ${s.config.region} (from ${from})`;
}

/** The account the account API makes on first call, checked to be able to pay for the calls. */
async function accountStep(s: State): Promise<string> {
  s.before = await need(s.api, 'account API').account();
  const b = s.before;
  if (b.free_tokens === 0 && b.credit_nano_usd === 0) {
    throw new Error(
      `the new account ${b.id} has no free tokens (${b.free_grant_withheld ?? 'none granted'}) and no credit, so every call would be refused: ` +
        'sign up with another mailbox (the grant is once per person, +tags included), or with --confirm admin and its random default address',
    );
  }
  return `account ${b.id} (${b.email ?? 'no email'}): ${b.free_tokens} free tokens, ${b.credit_nano_usd} nano-USD credit`;
}

/** A call step: runs it and keeps its request id for the ledger. */
function callStep(name: string, call: (c: Clients) => Promise<Answered>, s: State): Step {
  return {
    name,
    needs: ['create key'],
    run: async () => {
      const answered = await call(need(s.clients, 'key'));
      s.answered.push(answered);
      return `${answered.detail} (${answered.requestId})`;
    },
  };
}

/** The steps in order, over one shared state. */
function smokeSteps(o: SmokeOptions, s: State): Step[] {
  const ledgerDeadline = () => Date.now() + o.ledgerTimeoutMs;
  return [
    { name: 'config', run: () => configStep(o, s) },
    {
      name: 'sign up',
      needs: ['config'],
      run: async () => {
        const { user, how } = await signUp(need(s.cognito, 'Cognito'), need(s.config, 'config'), { ...o, password: newPassword() });
        s.user = user;
        s.api = new AccountApi(o.accountOrigin, () => user.accessToken);
        return `${user.email} signed up, ${how}, signed in (sub ${user.sub})`;
      },
    },
    { name: 'account', needs: ['sign up'], run: () => accountStep(s) },
    {
      name: 'create key',
      needs: ['account'],
      run: async () => {
        s.key = await need(s.api, 'account API').createKey(`smoke ${new Date().toISOString()}`);
        s.clients = clientsFor(o.baseUrl, s.key.key);
        return `POST /v1/keys made key ${s.key.hash.slice(0, 12)}…`;
      },
    },
    callStep('chat', (c) => chatBuffered(c, o.chatModel), s),
    callStep('chat stream', (c) => chatStreamed(c, o.chatModel), s),
    callStep('embeddings', (c) => embeddings(c, o.embeddingModel), s),
    callStep('messages', (c) => messages(c, o.messagesModel), s),
    {
      name: 'ledger',
      needs: ['create key'],
      run: async () => {
        if (s.answered.length === 0) throw new Error('no call answered: nothing to look for');
        const key = need(s.key, 'key');
        s.entries = await generations(o.baseUrl, key.key, s.answered, ledgerDeadline());
        return checkActivity(need(s.api, 'account API'), key.hash, s.entries, ledgerDeadline());
      },
    },
    {
      name: 'balance',
      needs: ['ledger'],
      run: () => {
        const key = need(s.key, 'key').key;
        return checkBalance(need(s.api, 'account API'), need(s.before, 'account'), need(s.entries, 'entries'), Date.now() + o.settleTimeoutMs, {
          onWait: () =>
            o.write(
              `      waiting for the balance: function instances return their leases when idle (on AWS up to ~13 min, the orphan sweep; --settle-timeout ${o.settleTimeoutMs / 1000})`,
            ),
          nudge: () => nudgeFunctions(o.baseUrl, key),
        });
      },
    },
    {
      name: 'delete key',
      needs: ['create key'],
      run: async () => {
        const api = need(s.api, 'account API');
        const hash = need(s.key, 'key').hash;
        await api.deleteKey(hash);
        if ((await api.keyHashes()).includes(hash)) throw new Error(`GET /v1/keys still lists ${hash.slice(0, 12)}… after DELETE`);
        return `DELETE /v1/keys/${hash.slice(0, 12)}…; GET /v1/keys no longer lists it`;
      },
    },
    {
      name: 'delete user',
      needs: ['sign up'],
      run: async () => {
        await deleteUser(need(s.cognito, 'Cognito'), need(s.user, 'user'));
        return `Cognito DeleteUser ${need(s.user, 'user').email} (its account ${need(s.user, 'user').sub} stays: the account API deletes no account)`;
      },
    },
  ];
}

/** Runs every step, printing each verdict. @returns the results (the run failed when any is FAIL). */
export async function runSmoke(o: SmokeOptions): Promise<StepResult[]> {
  const state: State = { answered: [] };
  try {
    return await runSteps(smokeSteps(o, state), o.write);
  } finally {
    state.cognito?.destroy();
  }
}
