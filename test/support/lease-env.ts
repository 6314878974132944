/** The setting every credit-lease test file runs in (billing/lease.ts), registered as vitest hooks. */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { clearViews } from '../../functions/shared/billing/account-state';
import { abandonLeasesForTests, returnAllLeases } from '../../functions/shared/billing/lease';
import { reloadConfig } from '../../functions/shared/config/env';
import { createTestTables } from './tables';

/**
 * Before all: the file's own tables (`tablePrefix`), leases on with a 60-s validity and idle time,
 * rate limits off, plus `env`. Before each: this instance's leases returned, then forgotten, and its
 * account views cleared. After all: the environment as it was.
 */
export function useLeaseTestEnv(tablePrefix: string, env: Readonly<Record<string, string>> = {}): void {
  const saved = { ...process.env };
  beforeAll(async () => {
    await createTestTables(tablePrefix);
    Object.assign(process.env, {
      CREDIT_LEASE_VALIDITY_MS: '60000',
      CREDIT_LEASE_IDLE_MS: '60000',
      RATE_LIMIT_RPM: '0',
      RATE_LIMIT_CONCURRENT: '0',
      RATE_LIMIT_FREE_RPM: '0',
      RATE_LIMIT_FREE_CONCURRENT: '0',
      ...env,
    });
    reloadConfig();
  });
  beforeEach(async () => {
    await returnAllLeases();
    abandonLeasesForTests();
    clearViews();
  });
  afterAll(() => {
    process.env = { ...saved };
    reloadConfig();
  });
}
