/**
 * The DuckDB connections the controls are evaluated on (docs/performance.md "Sample day"). A run
 * awaits its statements one after another, and on a small day each is a few milliseconds of
 * planning and execution on one DuckDB thread: a second connection of the same instance lets a
 * second control's statements run meanwhile, on the second core. So does a mid-sized day in memory
 * (LANES_BELOW_BYTES). A large day keeps the one connection, and with it the memory of one
 * control at a time.
 *
 * The loaded datasets and sql/common's tables and macros live in the main catalog, which both
 * connections see. What a control creates is TEMP (its `rcNN_…` objects, the run's totals and
 * records tables) and its session variables, and those belong to one connection: each control
 * runs wholly on one lane, and when the lanes are done the second connection's rows of the run's
 * tables are moved into the first's, which the later phases read (every reader orders its rows).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { ensureRecordsTable, DIFFERENCE_RECORDS_TABLE } from '../controls/records.js';
import { ensureTotalsTables, INLINE_TOTALS_TABLE, LARGE_TOTALS_TABLE } from '../controls/totals.js';
import { onInterrupt } from '../core/interrupt.js';
import { mapOnLanes } from '../core/lanes.js';
import type { Engine } from '../load/engine.js';

/** Connections the controls of a small day (DuckDB on one thread) are evaluated on. */
export const SMALL_DAY_LANES = 2;

/**
 * Below this estimated in-memory size of the records to load, a day with its tables in memory gets
 * SMALL_DAY_LANES lanes too, though DuckDB runs on two threads: most of its control statements
 * (10–200 ms each at 100k orders, estimated 0.26 GiB) run on one core, so a second control's run
 * meanwhile on the other (controls 2.25–2.36 s → 1.93–2.02 s, docs/performance.md). A 1M-order day
 * (about 2.6 GiB) keeps one lane, and with it the memory of one control at a time.
 */
export const LANES_BELOW_BYTES = 1024 ** 3;

/** Whether the controls of a run on `engine` are evaluated on SMALL_DAY_LANES connections. */
export const usesLanes = (engine: Engine): boolean => engine.threads === 1 || (engine.storage === 'memory' && engine.estimated_bytes < LANES_BELOW_BYTES);

/** The run's temp tables a control adds rows to, moved from a second lane into the first. */
const RUN_TABLES = [INLINE_TOTALS_TABLE, LARGE_TOTALS_TABLE, DIFFERENCE_RECORDS_TABLE] as const;

/**
 * Runs `fn` on every item (the selected controls) on the lanes of `engine` (the run's connection
 * `conn` alone on a large day; SMALL_DAY_LANES connections, the others UTC like the run's, when
 * usesLanes), each item wholly on one connection; returns the results in the
 * items' order (core/lanes.ts). The other lanes' rows of the run's tables are then in `conn`'s,
 * and the other connections closed. Throws what `fn` throws for the first failed item. An
 * `interrupt` stops the statement each other connection runs (the run's own is the run's to stop).
 */
export async function onControlLanes<T, R>(engine: Engine, conn: DuckDBConnection, items: readonly T[], fn: (item: T, conn: DuckDBConnection) => Promise<R>, interrupt?: AbortSignal): Promise<R[]> {
  const extra: DuckDBConnection[] = [];
  const unlisten: (() => void)[] = [];
  try {
    for (let i = 1; usesLanes(engine) && i < Math.min(SMALL_DAY_LANES, items.length); i++) {
      const c = await engine.instance.connect();
      extra.push(c);
      if (interrupt) unlisten.push(onInterrupt(interrupt, () => c.interrupt()));
      await c.run(`SET TimeZone = 'UTC'`);
    }
    const results = await mapOnLanes(items, [conn, ...extra], fn);
    await mergeLanes(conn, extra);
    return results;
  } finally {
    for (const u of unlisten) u();
    for (const c of extra) c.closeSync();
  }
}

/** Moves the rows of RUN_TABLES from each of `others` into `first`, through a main-catalog table both see. */
async function mergeLanes(first: DuckDBConnection, others: readonly DuckDBConnection[]): Promise<void> {
  if (!others.length) return;
  await ensureTotalsTables(first);
  await ensureRecordsTable(first);
  for (const c of others) {
    await ensureTotalsTables(c);
    await ensureRecordsTable(c);
    await c.run(RUN_TABLES.map((t) => `CREATE OR REPLACE TABLE ${t}_lane AS SELECT * FROM temp.main.${t}`).join(';\n'));
    await first.run(RUN_TABLES.map((t) => `INSERT INTO temp.main.${t} SELECT * FROM ${t}_lane; DROP TABLE ${t}_lane`).join(';\n'));
  }
}
