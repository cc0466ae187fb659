/**
 * Phase 2, load: locate the sources (downloading `s3://` ones into the scratch folder; a sources
 * file's database extracts start and are loaded as each dataset is written), open the run's
 * DuckDB sized by the estimated load, and load the datasets the selected controls read
 * (CONTRACT §2–§3) — unless the results cache holds an evaluation of exactly these inputs (an
 * unchanged rerun: the load's kept result is taken instead, results-cache.ts). Fault points
 * `extracting` (sources file), `loading` (DuckDB open, nothing read) and `computing` (loaded).
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadCommonSql } from '../controls/common-sql.js';
import { datasetsRead } from '../controls/selection.js';
import { estimateLoadBytes, openEngine, type Engine } from '../load/engine.js';
import { digestInputs, withLoadHashes, type InputDigest } from '../load/input-digest.js';
import { loadSources, type LoadProgress, type LoadResult } from '../load/load.js';
import type { LocatedSources } from '../sources/locate.js';
import { controlsEscaped, strayRootEntries, type StrayEntry } from '../sources/files.js';
import { DATASETS } from '../contract/datasets.js';
import { checkInterrupt, onInterrupt } from '../core/interrupt.js';
import { silentProgress, type ProgressTask } from '../core/progress.js';
import { labelDatasetLoads, labelQuarantine } from '../sources/postgres/label.js';
import { timed, type LoadedInputs, type RunContext } from './context.js';
import { LANES_BELOW_BYTES } from './control-lanes.js';
import { emptyWindowNote } from './window-census.js';
import { cacheConfig, ResultsReuse, type EvaluationEngine, type InputsKeyed } from './results-cache.js';

/**
 * Loads the run's inputs; the engine and connection are kept in `ctx.open` for release. Sources
 * without a sources file are listed first; when the results cache holds an evaluation of the same
 * listing, they are hashed and the cache looked up by them (results-cache.ts): on a hit the load's
 * result is the kept one and nothing is loaded. Otherwise the lookup would miss: the load hashes
 * each file as it reads it, and the inputs are keyed by its hashes (timing `inputs_hash_ms` only
 * when they were hashed first).
 */
export async function loadInputs(ctx: RunContext): Promise<LoadedInputs> {
  const { req, timings } = ctx;
  ctx.logger.info(`loading ${req.sources}`, { phase: 'load' });
  const located = await timed(timings, 'locate_ms', () => ctx.sources.locate(ctx.scratch));
  const notes = [...(ctx.cacheNote ? [ctx.cacheNote] : []), ...await strayNotes(ctx, located)];
  const reads = datasetsRead(req.controls.selected);
  const { engine, conn } = await timed(timings, 'engine_ms', async () => {
    const e = await openEngine(ctx.scratch, await estimateLoadBytes(located.root, reads, located.estimatedBytes), req.settings.duckdb);
    ctx.open.engine = e;
    const c = await e.instance.connect();
    ctx.open.conn = c;
    // An interrupt stops the statement running now; the run stops at its next safe point. Released, the run has unset it.
    onInterrupt(ctx.interrupt, () => { if (ctx.open.conn === c) c.interrupt(); });
    await c.run(`SET TimeZone = 'UTC'`);
    return { engine: e, conn: c };
  });
  await ctx.fault('loading');
  const { loaded, reuse } = await timed(timings, 'load_ms', async () => {
    const common = (await loadCommonSql()).files;
    const keyed = await timed(timings, 'inputs_ms', () => inputsKeyed(ctx, located, reads, { engine, conn }, common));
    if (keyed && 'listed' in keyed) {
      const l = await loadAll(ctx, located, engine, conn, reads);
      const inputs = withLoadHashes(keyed.listed.inputs, l.datasets);
      return { loaded: l, reuse: inputs && await ResultsReuse.open(ctx, { engine, conn }, { ...keyed.listed, inputs }, common) };
    }
    const reuse = keyed && await ResultsReuse.open(ctx, { engine, conn }, keyed, common);
    if (reuse?.loaded) reportKeptLoad(ctx, reuse.loaded);
    return { loaded: reuse?.loaded ?? await loadAll(ctx, located, engine, conn, reads, keyed?.inputs.hashed), reuse };
  });
  const records = loaded.datasets.reduce((n, d) => n + d.records_read, 0);
  const how = reuse?.loaded ? ' (the load skipped: every input as the reused results\' run read it)' : '';
  ctx.logger.info(`loaded ${loaded.datasets.length} dataset(s): ${records} record(s) read, ${loaded.quarantine.length} quarantined, in ${((timings.load_ms ?? 0) / 1000).toFixed(1)} s${how}`, { phase: 'load', records_read: records, quarantined: loaded.quarantine.length });
  // A load skipped for the results cache repeats the note its first run gave (its tables are not loaded here).
  const empty = reuse?.loaded ? reuse.keptWindowNote : await emptyWindowNote(conn, req.window, loaded.datasets);
  if (reuse && !reuse.loaded) reuse.windowNote = empty;
  if (empty) {
    ctx.logger.warn(empty, { phase: 'load' });
    notes.push(empty);
  }
  await ctx.fault('computing');
  for (const f of loaded.datasets.flatMap((d) => d.files)) {
    if (f.cache_refused) ctx.logger.warn(`delivery cache entry of ${f.path} refused and the file checked again: ${f.cache_refused}`, { phase: 'load', file: f.path });
  }
  // The side files as the loader read them (regular files inside the source root only), for local sources.
  const controlFiles = located.remote ? {} : Object.fromEntries(loaded.datasets.map((d) => [d.dataset, d.control_files]));
  return { located, loaded, loads: new Map(loaded.datasets.map((d) => [d.dataset, d])), controlFiles, engine, conn, notes, ...(reuse ? { reuse } : {}) };
}

/**
 * The manifest notes (and stderr warnings) for entries at the source roots that are no dataset's
 * folder: never read, and named, since a typo'd folder leaves its dataset empty.
 */
async function strayNotes(ctx: RunContext, located: LocatedSources): Promise<string[]> {
  // A database's extract folder is the run's own (and written while this runs), an S3 location's
  // staging folder holds only datasets: neither is listed; an S3 location's listing named its own.
  const root = located.root;
  const local = typeof root === 'string' ? (located.remote ? [] : [root])
    : [...root].filter(([d]) => !['database', 's3'].includes(located.plan?.origins.get(d)?.kind ?? '')).map(([, r]) => r);
  const names = DATASETS.map((d) => d.name);
  const found: [string, readonly StrayEntry[]][] = [];
  const unlisted: string[] = [];
  // One folder named two ways (a link, `./a/../a`) is listed once; with several, each note names its root.
  const real = [...new Set(await Promise.all(local.map((r) => realpath(r).catch(() => r))))];
  for (const r of real) {
    const at = real.length > 1 ? ` ${controlsEscaped(r)}` : '';
    await strayRootEntries(r, names).then((entries) => found.push([at, entries]),
      (e: NodeJS.ErrnoException) => unlisted.push(`sources: the source root ${controlsEscaped(r)} cannot be listed (${e.code ?? e.message}): entries in it that are no dataset's folder cannot be named`));
  }
  for (const [location, entries] of located.strayRemote ?? []) found.push([` ${location}`, entries]);
  // Quoted, so that a name with a trailing space (`'orders '`) shows what is wrong with it.
  const notes = [...unlisted, ...found.flatMap(([at, entries]) => entries.map((e) =>
    `sources: the ${e.kind} '${e.name}' at the source root${at} is no dataset's folder and was not read${e.nearest ? ` (did you mean ${e.nearest}?)` : ''}`))];
  for (const n of notes.slice(0, STRAY_WARNINGS)) ctx.logger.warn(n, { phase: 'load' });
  if (notes.length > STRAY_WARNINGS) ctx.logger.warn(`sources: ${notes.length - STRAY_WARNINGS} more entries at the source root are no dataset's folder and were not read (the manifest's notes list every one)`, { phase: 'load' });
  return notes;
}

/** Stray entries warned of one by one on stderr; the manifest's notes list them all. */
const STRAY_WARNINGS = 20;

/**
 * The load keyed by its inputs (results-cache.ts KeyedLoad), hashed now when the results cache
 * holds an evaluation of their listing, else only `listed` (to be keyed by the load's hashes);
 * none with the cache off, for a sources file (database extracts are taken per run: keyed after
 * the load), or when an input cannot be hashed (the load reports it).
 */
async function inputsKeyed(ctx: RunContext, located: LocatedSources, reads: readonly string[], at: EvaluationEngine, common: readonly { path: string; sha256: string }[]): Promise<InputsKeyed | { listed: InputsKeyed } | undefined> {
  if (!cacheConfig(ctx) || located.plan) return undefined;
  const rules = ctx.req.config.config;
  const roots = typeof located.root === 'string' ? [located.root] : [...located.root.values()];
  const keyed = (inputs: InputDigest): InputsKeyed => ({ inputs, remote: Boolean(located.remote), paths: [...roots, ...inputs.realPaths] });
  const listing = await digestInputs(located.root, reads, rules, false);
  if (!listing) return undefined;
  if (!(await ResultsReuse.listingKept(ctx, at, keyed(listing), common))) return { listed: keyed(listing) };
  const inputs = await timed(ctx.timings, 'inputs_hash_ms', () => digestInputs(located.root, reads, rules));
  return inputs && keyed(inputs);
}

/** Loads the datasets `reads` (with the files hashed before, `hashed`); database extracts named by their labels. */
async function loadAll(ctx: RunContext, located: LocatedSources, engine: Engine, conn: DuckDBConnection, reads: readonly string[], hashed?: InputDigest['hashed']): Promise<LoadResult> {
  const { req } = ctx;
  const lanes = await loadLanes(ctx, engine);
  let l: LoadResult;
  try {
    // Views over checked Parquet files for datasets without derived columns (load/views.ts).
    l = await loadSources(conn, located.root, req.config.config, join(ctx.scratch, 'links'), {
      datasets: reads, views: true, faults: located.plan?.faults, ready: located.ready, written: located.written, cache: cacheConfig(ctx), onProgress: datasetProgress(ctx), hashed,
      checkpoint: () => checkInterrupt(ctx.interrupt), lanes: lanes.conns,
    });
  } finally {
    lanes.close();
  }
  // Database extracts load while the next ones are read; every snapshot has committed here.
  await located.settled;
  // Tables in a DuckDB file: write what the load left in memory (added columns, collapsed
  // duplicates) into the file, so the controls find the buffer pool free for their joins.
  if (engine.storage === 'file') await conn.run('CHECKPOINT');
  // Database extracts are named by database and dataset, not by their scratch file.
  return { ...l, quarantine: labelQuarantine(l.quarantine, located.plan), datasets: labelDatasetLoads(l.datasets, located.plan) };
}

/**
 * The extra connection a mid-sized day in memory loads its datasets on (load.ts onLoadLanes): its
 * checking statements mostly run on one core (a file of up to about 120,000 rows is one Parquet
 * row group), so a second dataset's load meanwhile uses the other. A small day (DuckDB on one
 * thread, where hidden costs are start-up) and a large one (its memory) keep the one connection.
 * Each connection is UTC like the run's, and stopped by the run's interrupt.
 */
async function loadLanes(ctx: RunContext, engine: Engine): Promise<{ conns: DuckDBConnection[]; close: () => void }> {
  const on = engine.threads > 1 && engine.storage === 'memory' && engine.estimated_bytes < LANES_BELOW_BYTES;
  if (!on) return { conns: [], close: () => undefined };
  const c = await engine.instance.connect();
  const unlisten = onInterrupt(ctx.interrupt, () => c.interrupt());
  await c.run(`SET TimeZone = 'UTC'`);
  return { conns: [c], close: () => { unlisten(); c.closeSync(); } };
}

/** A kept load on the run's reporter as a load would report it: each dataset started and done, with its counts. */
function reportKeptLoad(ctx: RunContext, loaded: LoadResult): void {
  const onProgress = datasetProgress(ctx);
  for (const d of loaded.datasets) {
    const at = { dataset: d.dataset, files: d.files.length, records_read: d.records_read, quarantined: d.quarantined };
    onProgress({ ...at, stage: 'start', records_read: 0, quarantined: 0 });
    onProgress({ ...at, stage: 'done' });
  }
}

/** Progress of each dataset's load on the run's reporter (core/progress.ts); an interrupted run stops at each report too. */
function datasetProgress(ctx: RunContext): (p: LoadProgress) => void {
  const reporter = ctx.req.progress ?? silentProgress;
  // By dataset: two datasets load at once on a mid-sized day (loadLanes).
  const tasks = new Map<string, ProgressTask>();
  return (p) => {
    checkInterrupt(ctx.interrupt);
    if (p.stage === 'start') tasks.set(p.dataset, reporter.begin('load', p.dataset, ctx.logger));
    else if (p.stage === 'records') tasks.get(p.dataset)?.update({ records_read: p.records_read, files: p.files });
    else tasks.get(p.dataset)?.done({ records_read: p.records_read, files: p.files, quarantined: p.quarantined });
  };
}
