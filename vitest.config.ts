import { defineConfig } from 'vitest/config';

/**
 * One DynamoDB Local for the whole run (test/support/global-setup.ts); every test file makes its own
 * tables with unique names, so files run in parallel without sharing state.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/worker-env.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
