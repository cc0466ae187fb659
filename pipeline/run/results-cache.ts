/**
 * The results cache (issue 20): an unchanged rerun reuses its evaluated control results. Same code
 * and same inputs give the same totals and differences (CONTRACT §6), so a run whose evaluation
 * key equals an earlier run's may take that evaluation's products instead of running the control
 * SQL again. The key (`evaluationKey`) is made of everything evaluation reads: the code (the build's
 * fingerprint and the pipeline's code as it runs), DuckDB, Node and time zone data, the whole
 * configuration but its alerts (params, timing rules, rounding mode, …; cachedConfig), the settings that reach evaluation
 * (inline total keys, DuckDB memory, storage and threads), the window, every selected control's
 * definition and SQL, sql/common, and the load. The load enters the key in one of two ways
 * (KeyedLoad). Sources without a sources file are keyed by the load's inputs, hashed before
 * loading (load/input-digest.ts: every object's name, size and SHA-256, the side files, the folder
 * listings): the load's result is a function of those, the code and the configuration, so a hit
 * skips the load too — the entry keeps the load's result (`load.json`, load/kept-load.ts) and the
 * run restores it instead of loading. A sources file's runs (database extracts are taken per run)
 * are keyed after the load, by every loaded dataset's objects (names as records name them, size,
 * SHA-256, records, loaded, quarantined), side files, watermark and cutoff mappings. The control
 * SQL reads nothing else: no clock, no random function (checked in sql/), and the session
 * variables are set from the window, params and watermarks (phase-evaluate.ts).
 *
 * Kept per control: what `evaluateControl` returned (totals, large totals, differences, records
 * listed, readiness, wide), and the DuckDB tables later phases read (INLINE_TOTALS_TABLE,
 * LARGE_TOTALS_TABLE, DIFFERENCE_RECORDS_TABLE) as Parquet; keyed by inputs, the load's result.
 * Statuses, timing rules, dispositions, breaks, outputs, manifest and alerts are always computed
 * by the run itself. No later phase reads a dataset's table (outputs and breaks read the totals and
 * records tables), so a run that skipped the load has every table it needs.
 *
 * Storage, verification, bound and concurrency are the delivery cache's (load/delivery-cache.ts),
 * in the folder `results/` of the delivery cache's folder: an entry whose body or data files do
 * not match their SHA-256 is refused, reported and replaced, never trusted. Off with the delivery
 * cache (`RECKON_CACHE=off`).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { EvaluationSource } from '../../manifests/v1/schema.js';
import type { ControlDefinition } from '../controls/definitions.js';
import type { ControlEvaluation } from '../controls/evaluation.js';
import { DIFFERENCE_RECORDS_TABLE, ensureRecordsTable, type DifferenceRecords } from '../controls/records.js';
import { ensureTotalsTables, INLINE_TOTALS_TABLE, LARGE_TOTALS_TABLE } from '../controls/totals.js';
import { scratchLiteral } from '../load/cached-load.js';
import { refusedEntryNote } from '../load/cache-folder.js';
import { cachedConfig, DeliveryCache, runningCodeDigest, type DeliveryCacheConfig, type VerifiedEntry } from '../load/delivery-cache.js';
import type { Engine } from '../load/engine.js';
import { listingOf, loadMatchesDigest, type InputDigest } from '../load/input-digest.js';
import { keptLoadJson, restoreKeptLoad } from '../load/kept-load.js';
import type { DatasetLoad, LoadResult } from '../load/load.js';
import { codeFingerprint } from '../publish/fingerprint.js';
import type { EvaluationReuse, RunContext } from './context.js';

/** Version of the results entry's content; a change of layout or meaning raises it. */
export const RESULTS_FORMAT = 3;

/** The delivery cache of the run: its folder (checked at preparation, phase-prepare.ts) and bound; none when off or when the folder may not be used. */
export function cacheConfig(ctx: RunContext): DeliveryCacheConfig | undefined {
  const c = ctx.req.settings.cache;
  return c.enabled && ctx.cacheDir ? { dir: ctx.cacheDir, maxBytes: c.maxBytes } : undefined;
}

/**
 * How the load enters the evaluation key: by its inputs hashed before loading (`inputs`, with the
 * folders and files whose absolute names must not be kept in a reused quarantine message), or by
 * its result (`loaded`).
 */
export type KeyedLoad = InputsKeyed | { readonly loaded: LoadResult };

/** The load keyed by its inputs (KeyedLoad). */
export interface InputsKeyed {
  readonly inputs: InputDigest;
  readonly remote: boolean;
  readonly paths: readonly string[];
}

/** The run's DuckDB as the key and the restore take it. */
export interface EvaluationEngine {
  readonly engine: Pick<Engine, 'threads' | 'memory_limit' | 'storage'>;
  readonly conn: DuckDBConnection;
}

/** The DuckDB tables kept with an evaluation, by data file name. */
const TABLES: Readonly<Record<string, string>> = {
  'inline_totals.parquet': INLINE_TOTALS_TABLE, 'large_totals.parquet': LARGE_TOTALS_TABLE, 'difference_records.parquet': DIFFERENCE_RECORDS_TABLE,
};
const EVALUATION_FILE = 'evaluation.json';
/** The load's result, in an entry keyed by the load's inputs. */
const LOAD_FILE = 'load.json';

/** One control's evaluation as kept (records as [differenceKey, records] pairs). */
interface KeptEvaluation extends Omit<ControlEvaluation, 'records'> {
  readonly control_id: string;
  readonly records: readonly (readonly [string, DifferenceRecords])[];
}

/** The body of a results entry (its evaluations are the data file EVALUATION_FILE). */
interface ResultsBody {
  readonly first_run: string;
  readonly first_started_at: string;
  readonly controls: readonly string[];
  /** Keyed by inputs: the key of their listing (listingKey), which `listingKept` looks for. */
  readonly listing?: string;
  /** The first run's empty-window note (run/window-census.ts), which a run that skips the load repeats. */
  readonly window_note?: string;
}

/** A dataset's load as the key takes it: what decides the loaded tables and the session variables. */
function datasetPart(d: DatasetLoad) {
  return {
    dataset: d.dataset, present: d.present, records_read: d.records_read, records_loaded: d.records_loaded, duplicates: d.duplicates, quarantined: d.quarantined,
    files: d.files.map((f) => ({ path: f.path, format: f.format, size: f.size, sha256: f.sha256, rows: f.rows, loaded: f.loaded, quarantined: f.quarantined })),
    watermark: { source: d.watermark.source, value: d.watermark.value, complete: d.watermark.complete ?? null, sequence: d.watermark.sequence ?? null },
    control_files: d.control_files, extra_columns_count: d.extra_columns_count,
  };
}

/** The load's part of the key: its inputs, or what its result decides. */
function loadPart(load: KeyedLoad) {
  if ('inputs' in load) return { inputs: { remote: load.remote, datasets: load.inputs.datasets } };
  return { datasets: load.loaded.datasets.map(datasetPart), cutoff_mappings: load.loaded.cutoffMappings, quarantine: load.loaded.quarantine.length };
}

/** The key's own parts (beside the delivery cache's environment: loader, rules, currency table, DuckDB, Node, tz). */
async function evaluationKeyParts(ctx: RunContext, at: EvaluationEngine, load: KeyedLoad, common: readonly { path: string; sha256: string }[], memoDir: string) {
  const { req } = ctx;
  return {
    format: RESULTS_FORMAT, code: await codeFingerprint(), running_code: await runningCodeDigest(memoDir), config: cachedConfig(req.config.config),
    settings: { inline_total_keys: req.settings.inlineTotalKeys, duckdb: req.settings.duckdb },
    engine: { threads: at.engine.threads, memory_limit: at.engine.memory_limit, storage: at.engine.storage },
    window: { start: req.window.start, end: req.window.end },
    controls: req.controls.selected, common: common.map((f) => ({ path: f.path, sha256: f.sha256 })),
    ...loadPart(load),
  };
}

type KeyParts = Awaited<ReturnType<typeof evaluationKeyParts>>;

/**
 * The key of the listing of an evaluation keyed by inputs: its key with every data file's SHA-256
 * left null (input-digest.ts listingOf), known before any data file is read. Undefined keyed by a load.
 */
function listingKey(cache: DeliveryCache, parts: KeyParts): string | undefined {
  const inputs = 'inputs' in parts ? parts.inputs : undefined;
  return inputs && cache.keyOf({ results: { ...parts, inputs: { ...inputs, datasets: listingOf(inputs.datasets) } } });
}

/** The results cache of the run (none when off or its folder cannot be made) and the key parts of `load`; undefined for a key part that is not JSON. */
async function openResults(ctx: RunContext, at: EvaluationEngine, load: KeyedLoad, common: readonly { path: string; sha256: string }[]): Promise<{ cache: DeliveryCache; parts: { results: KeyParts } } | undefined> {
  const config = cacheConfig(ctx);
  const dir = config && join(config.dir, 'results');
  const cache = dir ? await DeliveryCache.open({ ...config, dir }, at.conn, ctx.req.config.config, join(ctx.scratch, 'results-links')) : undefined;
  try {
    return cache && { cache, parts: { results: await evaluationKeyParts(ctx, at, load, common, dir!) } };
  } catch {
    return undefined;
  }
}

/**
 * True when a load's result may be kept for runs that skip the load: it read what the key's
 * digest hashed, and no quarantine message names this run's scratch folder or an absolute path
 * of the sources (a later run would repeat another run's paths).
 */
function keepableLoad(load: InputsKeyed, loaded: LoadResult, scratch: string): boolean {
  if (!loadMatchesDigest(load.inputs, loaded.datasets)) return false;
  const paths = [scratch, ...load.paths];
  return loaded.quarantine.every((q) => !paths.some((p) => q.message.includes(p)));
}

/**
 * A run's use of the results cache. `open` finds and verifies the entry of the run's evaluation
 * key and, on a hit, fills the run's totals and records tables from it; `evaluate` gives each
 * control's evaluation (kept, or computed now by the caller's function); `finish` keeps a miss's
 * evaluation. Never throws for the cache itself: a cache that cannot be used costs an evaluation.
 */
export class ResultsReuse implements EvaluationReuse {
  private readonly computed = new Map<string, ControlEvaluation>();
  /** The empty-window note of this run's load, kept with its evaluation (phase-load.ts). */
  windowNote: string | null = null;

  private constructor(
    private readonly ctx: RunContext,
    private readonly conn: DuckDBConnection,
    private readonly use?: { readonly cache: DeliveryCache; readonly key: string; readonly parts: Record<string, unknown>; readonly load: KeyedLoad; readonly listing?: string },
    private readonly kept?: { readonly body: ResultsBody; readonly evaluations: ReadonlyMap<string, ControlEvaluation>; readonly loaded?: LoadResult },
    private readonly refused?: string,
  ) {}

  /**
   * Opens the cache (off with the delivery cache), computes the key of `load` and looks it up; see
   * the class comment. Keyed by inputs, a hit holds the load's result too (`loaded`).
   */
  static async open(ctx: RunContext, at: EvaluationEngine, load: KeyedLoad, common: readonly { path: string; sha256: string }[]): Promise<ResultsReuse> {
    const opened = await openResults(ctx, at, load, common);
    if (!opened) return new ResultsReuse(ctx, at.conn); // off, no cache folder, or a key part that is not JSON
    const { cache, parts } = opened;
    const key = cache.keyOf(parts);
    const found = await cache.lookupEntry<ResultsBody>(key);
    const use = { cache, key, parts, load, listing: listingKey(cache, parts.results) };
    if (!found) return new ResultsReuse(ctx, at.conn, use);
    const refuse = (why: string) => {
      ctx.logger.warn(`results cache entry ${key.slice(0, 12)}… refused and the controls evaluated again: ${why}`, { phase: 'evaluate' });
      return new ResultsReuse(ctx, at.conn, use, undefined, why);
    };
    if ('refused' in found) return refuse(found.refused);
    const kept = await restore(at.conn, ctx, found.entry, 'inputs' in load);
    return typeof kept === 'string' ? refuse(kept) : new ResultsReuse(ctx, at.conn, use, { body: found.entry.body, ...kept });
  }

  /**
   * True when an evaluation of inputs with the listing `listed` (InputsKeyed whose digest is a
   * listing: no data file's SHA-256) may be kept: some entry has its listing key. False (and with
   * the cache off) when `open` by the hashed inputs would miss: they need not be hashed first.
   */
  static async listingKept(ctx: RunContext, at: EvaluationEngine, listed: InputsKeyed, common: readonly { path: string; sha256: string }[]): Promise<boolean> {
    const opened = await openResults(ctx, at, listed, common);
    const want = opened && listingKey(opened.cache, opened.parts.results);
    return Boolean(want && await opened.cache.someEntry((body) => body.listing === want));
  }

  /** True when every selected control's evaluation is read from the cache (the shared SQL need not run). */
  get hit(): boolean {
    return this.kept !== undefined;
  }

  /** On a hit keyed by the load's inputs: the kept load's result (the run need not load). */
  get loaded(): LoadResult | undefined {
    return this.kept?.loaded;
  }

  /** The kept evaluation of `def` on a hit, else `run()`'s (kept by `finish`). */
  async evaluate(def: ControlDefinition, run: () => Promise<ControlEvaluation>): Promise<ControlEvaluation> {
    const kept = this.kept?.evaluations.get(def.control_id);
    if (kept) return kept;
    const ev = await run();
    this.computed.set(def.control_id, ev);
    return ev;
  }

  /**
   * After every control of a miss was evaluated (and before anything relabels the tables): keeps
   * the evaluation, and keyed by inputs the load's result `loaded` (not kept when it did not read
   * what was hashed: nothing is then kept). Never throws.
   */
  async finish(loaded: LoadResult): Promise<void> {
    if (!this.use || this.kept) return;
    const ids = this.ctx.req.controls.selected.map((d) => d.control_id);
    if (ids.some((id) => !this.computed.has(id))) return;
    const load = this.use.load;
    if ('inputs' in load && !keepableLoad(load, loaded, this.ctx.scratch)) return;
    try {
      const out = join(this.ctx.scratch, 'results-out');
      await mkdir(out, { recursive: true });
      await ensureTotalsTables(this.conn);
      const files: Record<string, string> = {};
      for (const [name, table] of Object.entries(TABLES)) {
        files[name] = join(out, name);
        await this.conn.run(`COPY (SELECT * FROM ${table}) TO ${scratchLiteral(files[name])} (FORMAT parquet)`);
      }
      const kept: KeptEvaluation[] = ids.map((id) => {
        const { records, ...ev } = this.computed.get(id)!;
        return { ...ev, control_id: id, records: [...records] };
      });
      files[EVALUATION_FILE] = join(out, EVALUATION_FILE);
      await writeFile(files[EVALUATION_FILE], JSON.stringify(kept));
      if ('inputs' in load) {
        files[LOAD_FILE] = join(out, LOAD_FILE);
        await writeFile(files[LOAD_FILE], keptLoadJson(loaded));
      }
      const body: ResultsBody = { first_run: this.ctx.runId, first_started_at: this.ctx.startedAt.toISOString(), controls: ids, ...(this.use.listing ? { listing: this.use.listing } : {}), ...(this.windowNote ? { window_note: this.windowNote } : {}) };
      await this.use.cache.keepEntry(this.use.key, this.use.parts, body, files);
    } catch { /* not kept: the next run evaluates again */ }
    await this.use.cache.evict();
  }

  /** Per selected control, how the run came by its evaluation (the manifest's `evaluation`). */
  sources(): Record<string, EvaluationSource> {
    const one = (): EvaluationSource => (this.kept
      ? { evaluated: 'reused', entry: this.use!.key, first_run: this.kept.body.first_run }
      : { evaluated: 'now', entry: this.use?.key ?? null, first_run: this.ctx.runId, ...(this.refused ? { refused: this.refused } : {}) });
    return Object.fromEntries(this.ctx.req.controls.selected.map((d) => [d.control_id, one()]));
  }

  /** On a hit that skipped the load: the empty-window note the first run gave, if any. */
  get keptWindowNote(): string | null {
    return this.kept?.loaded ? this.kept.body.window_note ?? null : null;
  }

  /** The manifest's notes about the results cache. */
  notes(): string[] {
    if (this.kept) {
      const objects = this.kept.loaded?.datasets.reduce((n, d) => n + d.files.length, 0);
      return [
        `results cache: the evaluation of ${this.kept.body.controls.join(', ')} reused from run ${this.kept.body.first_run} (results entry ${this.use!.key}: same code, configuration, window and inputs); statuses, breaks and outputs computed by this run`,
        ...(objects === undefined ? [] : [`results cache: the load was skipped: each of the ${objects} objects was hashed and found as run ${this.kept.body.first_run} read it, and its check, counts, watermarks and quarantine entries were taken from the results entry (objects "checked": "reused")`]),
      ];
    }
    return this.refused ? [refusedEntryNote(`results cache: the results entry ${this.use!.key}`, this.refused, 'the controls were evaluated again')] : [];
  }
}

/**
 * Reads a verified entry's evaluations and fills the run's (empty) totals and records tables from
 * its data files. Returns the evaluations by control, or why the entry cannot serve this run (other
 * controls, a data file missing or unreadable); the tables are then left empty.
 */
async function restore(conn: DuckDBConnection, ctx: RunContext, entry: VerifiedEntry<ResultsBody>, withLoad: boolean): Promise<{ evaluations: Map<string, ControlEvaluation>; loaded?: LoadResult } | string> {
  const ids = ctx.req.controls.selected.map((d) => d.control_id);
  if (entry.body.controls.join(',') !== ids.join(',')) return `it holds controls ${entry.body.controls.join(', ')}, not ${ids.join(', ')}`;
  const missing = [EVALUATION_FILE, ...Object.keys(TABLES), ...(withLoad ? [LOAD_FILE] : [])].find((name) => !entry.links[name]);
  if (missing) return `it has no ${missing}`;
  await ensureTotalsTables(conn);
  await ensureRecordsTable(conn);
  try {
    const kept = JSON.parse(await readFile(entry.links[EVALUATION_FILE]!, 'utf8')) as KeptEvaluation[];
    const evaluations = new Map<string, ControlEvaluation>(kept.map(({ control_id, records, ...ev }) => [control_id, { ...ev, records_ms: 0, records: new Map(records) }]));
    if (ids.some((id) => !evaluations.has(id))) return `its ${EVALUATION_FILE} does not hold every control`;
    const loaded = withLoad ? restoreKeptLoad(await readFile(entry.links[LOAD_FILE]!, 'utf8')) : undefined;
    for (const [name, table] of Object.entries(TABLES)) await conn.run(`INSERT INTO ${table} SELECT * FROM read_parquet(${scratchLiteral(entry.links[name]!)})`);
    return { evaluations, ...(loaded ? { loaded } : {}) };
  } catch (e) {
    await conn.run(Object.values(TABLES).map((t) => `DELETE FROM ${t}`).join(';\n'));
    return `it cannot be read: ${(e as Error).message.split('\n')[0]}`;
  }
}
