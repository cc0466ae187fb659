/**
 * How long the slowest test files take (ms, one whole `npm test` on the 2-core machine), for the
 * sequencer (test/helpers/sequencer.ts) that starts them first. Only the order matters: refresh the
 * numbers when a file gets much faster or slower, add a file that takes more than about 8 s.
 */
export const SLOW_FILES: Readonly<Record<string, number>> = {
  'test/fuzz-input.test.ts': 41809,
  'test/load-fastpath.test.ts': 38118,
  'test/delivery-cache.test.ts': 37458,
  'test/s3-run.test.ts': 30033,
  'test/ops-crash.test.ts': 28850,
  'test/postgres-source.test.ts': 28771,
  'test/hostile-load.test.ts': 28719,
  'test/console-chromium.test.ts': 22028,
  'test/breaks-crash.test.ts': 21702,
  'test/store-integrity.test.ts': 19505,
  'test/evidence-bag.test.ts': 18222,
  'test/records.test.ts': 15283,
  'test/engine-storage.test.ts': 13882,
  'test/generate.test.ts': 13786,
  'test/store-signing.test.ts': 13749,
  'test/rc04-differences.test.ts': 12154,
  'test/hostile-attack.test.ts': 11779,
  'test/breaks-cli.test.ts': 11080,
  'test/view-files-changed.test.ts': 10344,
  'test/report-chromium.test.ts': 10270,
  'test/s3-store.test.ts': 9797,
  'test/rc05-differences.test.ts': 7829,
  'test/hostile-cli.test.ts': 6931,
  'test/rc06-differences.test.ts': 5895,
  'test/load-parquet-large.test.ts': 2765,
};
