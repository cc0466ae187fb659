/**
 * Phase 2, load: locate the sources (downloading `s3://` ones into the scratch folder), open the
 * run's DuckDB sized by the estimated load, and load the datasets the selected controls read
 * (CONTRACT §2–§3). Fault points `loading` (DuckDB open, nothing read) and `computing` (loaded).
 */
import { join } from 'node:path';
import { datasetsRead } from '../controls/selection.js';
import { estimateLoadBytes, openEngine } from '../load/engine.js';
import { loadSources } from '../load/load.js';
import { controlFileHashes } from '../publish/fingerprint.js';
import { locateSources } from '../sources/locate.js';
import { timed, type LoadedInputs, type RunContext } from './context.js';

/** Loads the run's inputs; the engine and connection are kept in `ctx.open` for release. */
export async function loadInputs(ctx: RunContext): Promise<LoadedInputs> {
  const { req, timings } = ctx;
  ctx.logger.info(`loading ${req.sources}`, { phase: 'load' });
  const located = await timed(timings, 'locate_ms', () => locateSources(req.sources, join(ctx.scratch, 'sources'), req.settings.s3));
  const reads = datasetsRead(req.controls.selected);
  const engine = await openEngine(ctx.scratch, await estimateLoadBytes(located.root, reads), req.settings.duckdb);
  ctx.open.engine = engine;
  const conn = await engine.instance.connect();
  ctx.open.conn = conn;
  await conn.run(`SET TimeZone = 'UTC'`);
  await ctx.fault('loading');
  // Views over checked Parquet files for datasets without derived columns (load/views.ts).
  const loaded = await timed(timings, 'load_ms', async () => {
    const l = await loadSources(conn, located.root, req.config.config, join(ctx.scratch, 'links'), { datasets: reads, views: true });
    // Tables in a DuckDB file: write what the load left in memory (added columns, collapsed
    // duplicates) into the file, so the controls find the buffer pool free for their joins.
    if (engine.storage === 'file') await conn.run('CHECKPOINT');
    return l;
  });
  await ctx.fault('computing');
  const controlFiles = located.remote ? {} : await controlFileHashes(located.root);
  return { located, loaded, loads: new Map(loaded.datasets.map((d) => [d.dataset, d])), controlFiles, engine, conn };
}
