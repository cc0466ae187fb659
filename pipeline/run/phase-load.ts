/**
 * Phase 2, load: locate the sources (downloading `s3://` ones into the scratch folder; a sources
 * file's database extracts start and are loaded as each dataset is written), open the run's
 * DuckDB sized by the estimated load, and load the datasets the selected controls read
 * (CONTRACT §2–§3). Fault points `extracting` (sources file), `loading` (DuckDB open, nothing
 * read) and `computing` (loaded).
 */
import { dirname, join } from 'node:path';
import { datasetsRead } from '../controls/selection.js';
import { estimateLoadBytes, openEngine } from '../load/engine.js';
import type { DeliveryCacheConfig } from '../load/delivery-cache.js';
import { loadSources, type LoadProgress } from '../load/load.js';
import { silentProgress, type ProgressTask } from '../core/progress.js';
import { labelDatasetLoads, labelQuarantine } from '../sources/postgres/label.js';
import { timed, type LoadedInputs, type RunContext } from './context.js';

/** The delivery cache of the run's settings: its folder (by default `reckon-cache` beside the scratch folder) and bound; none when off. */
export function cacheConfig(ctx: RunContext): DeliveryCacheConfig | undefined {
  const c = ctx.req.settings.cache;
  return c.enabled ? { dir: c.dir ?? join(dirname(ctx.scratch), 'reckon-cache'), maxBytes: c.maxBytes } : undefined;
}

/** Loads the run's inputs; the engine and connection are kept in `ctx.open` for release. */
export async function loadInputs(ctx: RunContext): Promise<LoadedInputs> {
  const { req, timings } = ctx;
  ctx.logger.info(`loading ${req.sources}`, { phase: 'load' });
  const located = await timed(timings, 'locate_ms', () => ctx.sources.locate(ctx.scratch));
  const reads = datasetsRead(req.controls.selected);
  const { engine, conn } = await timed(timings, 'engine_ms', async () => {
    const e = await openEngine(ctx.scratch, await estimateLoadBytes(located.root, reads, located.estimatedBytes), req.settings.duckdb);
    ctx.open.engine = e;
    const c = await e.instance.connect();
    ctx.open.conn = c;
    await c.run(`SET TimeZone = 'UTC'`);
    return { engine: e, conn: c };
  });
  await ctx.fault('loading');
  // Views over checked Parquet files for datasets without derived columns (load/views.ts).
  const onProgress = datasetProgress(ctx);
  const { loaded, controlFiles } = await timed(timings, 'load_ms', async () => {
    const l = await loadSources(conn, located.root, req.config.config, join(ctx.scratch, 'links'), { datasets: reads, views: true, faults: located.plan?.faults, ready: located.ready, written: located.written, cache: cacheConfig(ctx), onProgress });
    // Database extracts load while the next ones are read; every snapshot has committed here.
    await located.settled;
    // Tables in a DuckDB file: write what the load left in memory (added columns, collapsed
    // duplicates) into the file, so the controls find the buffer pool free for their joins.
    if (engine.storage === 'file') await conn.run('CHECKPOINT');
    // Database extracts are named by database and dataset, not by their scratch file.
    const labelled = { ...l, quarantine: labelQuarantine(l.quarantine, located.plan), datasets: labelDatasetLoads(l.datasets, located.plan) };
    // The side files as the loader read them (regular files inside the source root only), for local sources.
    return { loaded: labelled, controlFiles: located.remote ? {} : Object.fromEntries(labelled.datasets.map((d) => [d.dataset, d.control_files])) };
  });
  const records = loaded.datasets.reduce((n, d) => n + d.records_read, 0);
  ctx.logger.info(`loaded ${loaded.datasets.length} dataset(s): ${records} record(s) read, ${loaded.quarantine.length} quarantined, in ${((timings.load_ms ?? 0) / 1000).toFixed(1)} s`, { phase: 'load', records_read: records, quarantined: loaded.quarantine.length });
  await ctx.fault('computing');
  for (const f of loaded.datasets.flatMap((d) => d.files)) {
    if (f.cache_refused) ctx.logger.warn(`delivery cache entry of ${f.path} refused and the file checked again: ${f.cache_refused}`, { phase: 'load', file: f.path });
  }
  return { located, loaded, loads: new Map(loaded.datasets.map((d) => [d.dataset, d])), controlFiles, engine, conn };
}

/** Progress of each dataset's load on the run's reporter (core/progress.ts). */
function datasetProgress(ctx: RunContext): (p: LoadProgress) => void {
  const reporter = ctx.req.progress ?? silentProgress;
  let task: ProgressTask | undefined;
  return (p) => {
    if (p.stage === 'start') task = reporter.begin('load', p.dataset, ctx.logger);
    else if (p.stage === 'records') task?.update({ records_read: p.records_read, files: p.files });
    else task?.done({ records_read: p.records_read, files: p.files, quarantined: p.quarantined });
  };
}
