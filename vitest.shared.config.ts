import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// The shared suite (`npm run test:shared`): checks against ../shared (the public conformance cases
// and the provider-format corpus), which only the project's own machines have beside the
// repository. Never part of `npm test`; without the folder every block is skipped and says so.
const shared = resolve(import.meta.dirname, '..', 'shared');
if (!existsSync(shared)) console.warn(`reckon: no shared folder at ${shared}: the shared suite is skipped (npm test does not need it)`);

export default defineConfig({
  test: {
    include: ['test/shared/**/*.test.ts'],
    // A test is stopped only when it hangs: on a machine shared with other work (load 20 on the
    // two cores) the slowest test took 424 s.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
