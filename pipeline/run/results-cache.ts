/**
 * The results cache (issue 20): an unchanged rerun reuses its evaluated control results. Same code
 * and same inputs give the same totals and differences (CONTRACT §6), so a run whose evaluation
 * key equals an earlier run's may take that evaluation's products instead of running the control
 * SQL again. The key (`evaluationKey`) is made of everything evaluation reads: the code (the build's
 * fingerprint and the pipeline's code as it runs), DuckDB, Node and time zone data, the whole
 * configuration but its alerts (params, timing rules, rounding mode, …; cachedConfig), the settings that reach evaluation
 * (inline total keys, DuckDB memory, storage and threads), the window, every selected control's
 * definition and SQL, sql/common, and every loaded dataset's objects (names as records name them,
 * size, SHA-256, records, loaded, quarantined), side files, watermark and cutoff mappings. The
 * control SQL reads nothing else: no clock, no random function (checked in sql/), and the
 * session variables are set from the window, params and watermarks (phase-evaluate.ts).
 *
 * Kept per control: what `evaluateControl` returned (totals, large totals, differences, records
 * listed, readiness, wide), and the DuckDB tables later phases read (INLINE_TOTALS_TABLE,
 * LARGE_TOTALS_TABLE, DIFFERENCE_RECORDS_TABLE) as Parquet. Statuses, timing rules, dispositions,
 * breaks, outputs, manifest and alerts are always computed by the run itself.
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
import { cachedConfig, DeliveryCache, runningCodeDigest, type VerifiedEntry } from '../load/delivery-cache.js';
import type { DatasetLoad } from '../load/load.js';
import { codeFingerprint } from '../publish/fingerprint.js';
import type { LoadedInputs, RunContext } from './context.js';
import { cacheConfig } from './phase-load.js';

/** Version of the results entry's content; a change of layout or meaning raises it. */
export const RESULTS_FORMAT = 1;

/** The DuckDB tables kept with an evaluation, by data file name. */
const TABLES: Readonly<Record<string, string>> = {
  'inline_totals.parquet': INLINE_TOTALS_TABLE, 'large_totals.parquet': LARGE_TOTALS_TABLE, 'difference_records.parquet': DIFFERENCE_RECORDS_TABLE,
};
const EVALUATION_FILE = 'evaluation.json';

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

/** The key's own parts (beside the delivery cache's environment: loader, rules, currency table, DuckDB, Node, tz). */
async function evaluationKeyParts(ctx: RunContext, inputs: LoadedInputs, common: readonly { path: string; sha256: string }[], memoDir: string) {
  const { req } = ctx;
  return {
    format: RESULTS_FORMAT, code: await codeFingerprint(), running_code: await runningCodeDigest(memoDir), config: cachedConfig(req.config.config),
    settings: { inline_total_keys: req.settings.inlineTotalKeys, duckdb: req.settings.duckdb },
    engine: { threads: inputs.engine.threads, memory_limit: inputs.engine.memory_limit, storage: inputs.engine.storage },
    window: { start: req.window.start, end: req.window.end },
    controls: req.controls.selected, common: common.map((f) => ({ path: f.path, sha256: f.sha256 })),
    datasets: inputs.loaded.datasets.map(datasetPart), cutoff_mappings: inputs.loaded.cutoffMappings, quarantine: inputs.loaded.quarantine.length,
  };
}

/**
 * A run's use of the results cache. `open` finds and verifies the entry of the run's evaluation
 * key and, on a hit, fills the run's totals and records tables from it; `evaluate` gives each
 * control's evaluation (kept, or computed now by the caller's function); `finish` keeps a miss's
 * evaluation. Never throws for the cache itself: a cache that cannot be used costs an evaluation.
 */
export class ResultsReuse {
  private readonly computed = new Map<string, ControlEvaluation>();

  private constructor(
    private readonly ctx: RunContext,
    private readonly conn: DuckDBConnection,
    private readonly use?: { readonly cache: DeliveryCache; readonly key: string; readonly parts: Record<string, unknown> },
    private readonly kept?: { readonly body: ResultsBody; readonly evaluations: ReadonlyMap<string, ControlEvaluation> },
    private readonly refused?: string,
  ) {}

  /** Opens the cache (off with the delivery cache), computes the key and looks it up; see the class comment. */
  static async open(ctx: RunContext, inputs: LoadedInputs, common: readonly { path: string; sha256: string }[]): Promise<ResultsReuse> {
    const config = cacheConfig(ctx);
    const dir = config && join(config.dir, 'results');
    const cache = dir ? await DeliveryCache.open({ ...config, dir }, inputs.conn, ctx.req.config.config, join(ctx.scratch, 'results-links')) : undefined;
    let parts: Record<string, unknown>;
    try {
      if (!cache) throw new Error('off');
      parts = { results: await evaluationKeyParts(ctx, inputs, common, dir!) };
    } catch {
      return new ResultsReuse(ctx, inputs.conn); // off, no cache folder, or a key part that is not JSON
    }
    const key = cache.keyOf(parts);
    const found = await cache.lookupEntry<ResultsBody>(key);
    const use = { cache, key, parts };
    if (!found) return new ResultsReuse(ctx, inputs.conn, use);
    const refuse = (why: string) => {
      ctx.logger.warn(`results cache entry ${key.slice(0, 12)}… refused and the controls evaluated again: ${why}`, { phase: 'evaluate' });
      return new ResultsReuse(ctx, inputs.conn, use, undefined, why);
    };
    if ('refused' in found) return refuse(found.refused);
    const kept = await restore(inputs.conn, ctx, found.entry);
    return typeof kept === 'string' ? refuse(kept) : new ResultsReuse(ctx, inputs.conn, use, { body: found.entry.body, evaluations: kept });
  }

  /** True when every selected control's evaluation is read from the cache (the shared SQL need not run). */
  get hit(): boolean {
    return this.kept !== undefined;
  }

  /** The kept evaluation of `def` on a hit, else `run()`'s (kept by `finish`). */
  async evaluate(def: ControlDefinition, run: () => Promise<ControlEvaluation>): Promise<ControlEvaluation> {
    const kept = this.kept?.evaluations.get(def.control_id);
    if (kept) return kept;
    const ev = await run();
    this.computed.set(def.control_id, ev);
    return ev;
  }

  /** After every control of a miss was evaluated (and before anything relabels the tables): keeps the evaluation. Never throws. */
  async finish(): Promise<void> {
    if (!this.use || this.kept) return;
    const ids = this.ctx.req.controls.selected.map((d) => d.control_id);
    if (ids.some((id) => !this.computed.has(id))) return;
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
      const body: ResultsBody = { first_run: this.ctx.runId, first_started_at: this.ctx.startedAt.toISOString(), controls: ids };
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

  /** The manifest's notes about the results cache. */
  notes(): string[] {
    if (this.kept) {
      return [`results cache: the evaluation of ${this.kept.body.controls.join(', ')} reused from run ${this.kept.body.first_run} (results entry ${this.use!.key}: same code, configuration, window and inputs); statuses, breaks and outputs computed by this run`];
    }
    return this.refused ? [`results cache: the results entry ${this.use!.key} was refused (${this.refused}); the controls were evaluated again`] : [];
  }
}

/**
 * Reads a verified entry's evaluations and fills the run's (empty) totals and records tables from
 * its data files. Returns the evaluations by control, or why the entry cannot serve this run (other
 * controls, a data file missing or unreadable); the tables are then left empty.
 */
async function restore(conn: DuckDBConnection, ctx: RunContext, entry: VerifiedEntry<ResultsBody>): Promise<Map<string, ControlEvaluation> | string> {
  const ids = ctx.req.controls.selected.map((d) => d.control_id);
  if (entry.body.controls.join(',') !== ids.join(',')) return `it holds controls ${entry.body.controls.join(', ')}, not ${ids.join(', ')}`;
  const missing = [EVALUATION_FILE, ...Object.keys(TABLES)].find((name) => !entry.links[name]);
  if (missing) return `it has no ${missing}`;
  await ensureTotalsTables(conn);
  await ensureRecordsTable(conn);
  try {
    const kept = JSON.parse(await readFile(entry.links[EVALUATION_FILE]!, 'utf8')) as KeptEvaluation[];
    const evaluations = new Map<string, ControlEvaluation>(kept.map(({ control_id, records, ...ev }) => [control_id, { ...ev, records_ms: 0, records: new Map(records) }]));
    if (ids.some((id) => !evaluations.has(id))) return `its ${EVALUATION_FILE} does not hold every control`;
    for (const [name, table] of Object.entries(TABLES)) await conn.run(`INSERT INTO ${table} SELECT * FROM read_parquet(${scratchLiteral(entry.links[name]!)})`);
    return evaluations;
  } catch (e) {
    await conn.run(Object.values(TABLES).map((t) => `DELETE FROM ${t}`).join(';\n'));
    return `it cannot be read: ${(e as Error).message.split('\n')[0]}`;
  }
}
