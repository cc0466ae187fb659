import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/helpers/sequencer.js';

// One delivery cache per test run (issue 20): runs in the tests share it, as runs on one machine
// do, but no test run reads entries another left behind.
process.env.RECKON_CACHE_DIR ??= mkdtempSync(join(tmpdir(), 'reckon-test-cache-'));


// Tests run real DuckDB, real files and real child processes: generous timeouts, and at most two
// test files at once on the 2-core machine (forks: the files run in two worker processes, so a
// test that kills or crashes a child cannot take the test run with it).
//
// isolate: false: a worker runs its files one after another with the modules it imported kept,
// instead of a fresh process importing pipeline/ again for every file (about 0.5 s of CPU a file,
// a quarter of a small file's time). The CLI's main() is written to be called many times in one
// process (pipeline/cli/main.ts); no test file changes process state it does not restore.
//
// The slow files start first (test/helpers/sequencer.ts), so both workers finish together.
//
// Vitest 4, not 3: in Vitest 3 a worker's RPC calls to the main process (onTaskUpdate) time out
// after a fixed 60 s that no option changes, and a test that blocks its worker's event loop for
// longer (a synchronous CLI run on a loaded machine) made a green run exit 1 with "Timeout calling
// onTaskUpdate". Vitest 4 has no such timeout (vitest-dev/vitest#8297).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/shared/**'], // the shared suite: vitest.shared.config.ts, npm run test:shared
    // A test is stopped only when it hangs: on a machine shared with other work (load 20 on the
    // two cores) the slowest test took 424 s.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 2,
    isolate: false,
    sequence: { sequencer: SlowFirstSequencer },
    reporters: ['default'],
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
