import { defineConfig } from 'vitest/config';

// Tests run real DuckDB, real files and real child processes: generous timeouts, and at most two
// test files at once on the 2-core machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default'],
  },
});
