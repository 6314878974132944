import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, config, loadConfig, reloadConfig, setting } from '../../functions/shared/config/env';
import { UPSTREAM_ENV_VARS } from '../../functions/shared/providers/manifest';

/**
 * README variables the functions' schema does not hold, and why: read by `npm start`, the tests or the
 * bench (not by a function), by the AWS SDK or Powertools themselves, or credentials (the upstream keys
 * and base URLs, config/upstream-credentials.ts; the Stripe keys, payments/stripe-client.ts).
 */
const NOT_FUNCTION_SETTINGS = new Set<string>([
  'PORT',
  'SIM_CHUNK_DELAY_MS',
  'COGNITO_LOCAL_PORT',
  'CHROMIUM_PATH',
  'DEV_CREDIT_USD',
  'STRIPE_SECRET_KEY',
  'STRIPE_WEBHOOK_SECRET',
  'POWERTOOLS_LOG_LEVEL',
  'POWERTOOLS_METRICS_DISABLED',
  ...UPSTREAM_ENV_VARS,
]);

/** The backticked names in the first column of the README's Configuration table. */
function readmeVariables(): Set<string> {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.split('\n## Configuration\n')[1]?.split('\n## ')[0] ?? '';
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    const first = line.startsWith('| `') ? (line.split('|')[1] ?? '') : '';
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(m[1] as string);
  }
  return names;
}

/** process.env as this file found it: every test's changes are undone after it, then the config reloaded. */
const envBefore = { ...process.env };

afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in envBefore)) delete process.env[name];
  Object.assign(process.env, envBefore);
  reloadConfig();
});

describe('loadConfig', () => {
  it('gives every default when nothing is set', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      KEYS_TABLE: 'modelmux-keys',
      RESPONSES_TABLE: 'modelmux-responses',
      DYNAMODB_REQUEST_TIMEOUT_MS: 3_000,
      SQS_REQUEST_TIMEOUT_MS: 1_000,
      RATE_LIMIT_RPM: 600,
      RATE_LIMIT_CONCURRENT: 50,
      RATE_LIMIT_FREE_RPM: 20,
      RATE_LIMIT_FREE_CONCURRENT: 5,
      HOLD_SWEEP_GRACE_MS: 120_000,
      ACCOUNT_CACHE_TTL_MS: 5_000,
      KEY_CACHE_TTL_MS: 30_000,
      BYOK_CACHE_TTL_MS: 5_000,
      BUFFERED_CHAT_BUDGET_MS: 55_000,
      STREAM_COMMIT_AFTER_MS: 10_000,
      RESPONSE_RETENTION_DAYS: 30,
      POWERTOOLS_SERVICE_NAME: 'modelmux',
      POWERTOOLS_TRACE_ENABLED: false,
    });
    expect(c.PUBLIC_BASE_URL).toBeUndefined();
    expect(c.SETTLE_QUEUE_URL).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('treats empty and blank values as unset, and trims', () => {
    expect(loadConfig({ RATE_LIMIT_RPM: '', STREAM_COMMIT_AFTER_MS: '  ', KEY_CACHE_TTL_MS: ' 150 ' })).toMatchObject({
      RATE_LIMIT_RPM: 600,
      STREAM_COMMIT_AFTER_MS: 10_000,
      KEY_CACHE_TTL_MS: 150,
    });
    expect(loadConfig({ RATE_LIMIT_RPM: '0', RESPONSE_RETENTION_DAYS: '0' })).toMatchObject({ RATE_LIMIT_RPM: 0, RESPONSE_RETENTION_DAYS: 0 });
  });

  it('names the variable, what it expects and what it got when a value is unusable', () => {
    expect(() => loadConfig({ RATE_LIMIT_RPM: 'x' })).toThrow(new ConfigError('RATE_LIMIT_RPM', 'a non-negative integer', 'x'));
    expect(() => loadConfig({ RATE_LIMIT_RPM: 'x' })).toThrow("RATE_LIMIT_RPM must be a non-negative integer, got 'x'.");
    for (const bad of ['abc', '-5', '1.5', '10s']) {
      expect(() => loadConfig({ STREAM_COMMIT_AFTER_MS: bad })).toThrow(/^STREAM_COMMIT_AFTER_MS must be a non-negative integer of milliseconds/);
    }
    expect(() => loadConfig({ BUFFERED_CHAT_BUDGET_MS: '0' })).toThrow(/BUFFERED_CHAT_BUDGET_MS must be a positive integer/);
    expect(() => loadConfig({ RESPONSE_RETENTION_DAYS: '400' })).toThrow(/RESPONSE_RETENTION_DAYS must be an integer from 0 to 365/);
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://x' })).toThrow(/PUBLIC_BASE_URL must be an http\(s\) URL, got 'ftp:\/\/x'/);
    expect(() => loadConfig({ POWERTOOLS_TRACE_ENABLED: 'yes' })).toThrow(/POWERTOOLS_TRACE_ENABLED/);
    const err = (() => {
      try {
        loadConfig({ HOLD_SWEEP_GRACE_MS: '2m' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('HOLD_SWEEP_GRACE_MS');
  });
});

describe('config', () => {
  it('parses process.env once, until reloaded', () => {
    process.env.STREAM_COMMIT_AFTER_MS = '1234';
    reloadConfig();
    const first = config();
    expect(first.STREAM_COMMIT_AFTER_MS).toBe(1234);
    process.env.STREAM_COMMIT_AFTER_MS = '99';
    expect(config()).toBe(first);
    reloadConfig();
    expect(config().STREAM_COMMIT_AFTER_MS).toBe(99);
  });

  it('fails naming the variable when process.env holds a bad value', () => {
    process.env.RATE_LIMIT_FREE_RPM = 'lots';
    reloadConfig();
    expect(() => config()).toThrow("RATE_LIMIT_FREE_RPM must be a non-negative integer, got 'lots'.");
  });

  it('leaves process.env as the file found it after each test (no setting leaks into the next)', () => {
    expect(process.env.RATE_LIMIT_FREE_RPM).toBe(envBefore.RATE_LIMIT_FREE_RPM);
    expect(process.env.STREAM_COMMIT_AFTER_MS).toBe(envBefore.STREAM_COMMIT_AFTER_MS);
  });
});

describe('setting', () => {
  it('reads one variable by its own schema, its default applied, and ignores the others', () => {
    expect(setting('POWERTOOLS_SERVICE_NAME', {})).toBe('modelmux');
    expect(setting('POWERTOOLS_SERVICE_NAME', { POWERTOOLS_SERVICE_NAME: ' my-stack ', RATE_LIMIT_RPM: 'many' })).toBe('my-stack');
    expect(setting('RATE_LIMIT_RPM', { RATE_LIMIT_RPM: '7' })).toBe(7);
  });

  it('names the variable when its value is unusable', () => {
    expect(() => setting('RATE_LIMIT_RPM', { RATE_LIMIT_RPM: 'many' })).toThrow(ConfigError);
    expect(() => setting('RATE_LIMIT_RPM', { RATE_LIMIT_RPM: 'many' })).toThrow(/RATE_LIMIT_RPM must be/);
  });
});

describe('the README Configuration table', () => {
  it('names every variable of the schema, and the schema holds every function setting it names', () => {
    const readme = readmeVariables();
    expect(CONFIG_VARIABLES.filter((v) => !readme.has(v))).toEqual([]);
    expect([...readme].filter((v) => !NOT_FUNCTION_SETTINGS.has(v) && !(CONFIG_VARIABLES as readonly string[]).includes(v))).toEqual([]);
  });
});
