/**
 * `reckon run`: one window, end to end (CONTRACT §3–§7). The data flow is one-way:
 * sources → load → controls → differences → breaks → outputs → manifest → publication.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DUCKDB_THREADS, estimateLoadBytes, explainOutOfMemory, memoryLimitSetting, openEngine, storageSetting, type Engine } from '../load/engine.js';
import type { LoadedConfig } from '../config/config.js';
import { commonSql, evaluateControl, inlineTotalKeys, LARGE_TOTALS_TABLE, loadControls, runScript, type ControlDefinition, type LargeTotal } from '../controls/controls.js';
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { currencyTable } from '../contract/currency.js';
import { ConfigError, ControlStatus, ExitCode, exitCodeForStatuses } from '../core/errors.js';
import { checkViewFiles, loadSources, type DatasetLoad, type LoadResult } from '../load/load.js';
import { DATASETS } from '../contract/datasets.js';
import { publishManifest } from '../publish/manifest-chain.js';
import { findManifest } from '../store/manifests.js';
import { hostname } from 'node:os';
import { acquireLeases, checkFencing, LEASE_TTL_MS, releaseLeases } from '../publish/lease.js';
import { silentLogger, type RunLogger } from '../core/log.js';
import { faultPoint } from '../core/fault.js';
import { promoteOutputs, recoverStaging, stageOutputs } from '../publish/staging.js';
import { codeFingerprint, controlFileHashes, inputsFingerprint } from '../publish/fingerprint.js';
import { OUTPUT_TABLES, writeOutputs } from '../outputs/outputs.js';
import { BREAK_OUTPUT_TABLES, breakOutputRows } from '../outputs/break-tables.js';
import { repoPath } from '../core/paths.js';
import { recordBreaks, verifyCorrectedBreaks, type BreakOutcome } from '../breaks/run-breaks.js';
import { type ObjectStore } from '../store/object-store.js';
import { openStore } from '../store/open-store.js';
import { checkLocalSources, locateSources, type RemoteObjectInfo } from '../sources/locate.js';
import { formatMicros, parseTimestamp } from '../contract/values.js';
import { windowDate, type Window } from '../contract/window.js';
import type { Disposition } from '../breaks/states.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';

const SAFE_PATH = /^[A-Za-z0-9_\-/.]+$/;

export { DUCKDB_MEMORY_LIMIT, DUCKDB_THREADS } from '../load/engine.js';

export const TRIGGERS = ['manual', 'scheduled-nightly', 'scheduled-intraday', 'incident'] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** What `reckon run` was asked to do. */
export interface RunRequest {
  readonly window: Window;
  /** Control ids to run; empty means all. */
  readonly controls: readonly string[];
  readonly sources: string;
  readonly store: string;
  readonly config: LoadedConfig;
  readonly trigger: Trigger;
  readonly reason: string | null;
  readonly rerunOf: string | null;
  /** Logger (stderr only); defaults to one that drops everything. */
  readonly logger?: RunLogger;
}

/** One difference as reported (CONTRACT §7). */
export interface ReportedDifference {
  readonly kind: string;
  readonly key: string;
  readonly detail: string;
  readonly record_time: string | null;
  readonly break_id: string | null;
  readonly disposition: Disposition;
}

/** One control's result. */
export interface ControlResult {
  readonly control_id: string;
  readonly status: ControlStatus;
  readonly as_of: string | null;
  readonly readiness: { ready: boolean; reasons: string[] };
  readonly quarantined_datasets: string[];
  readonly totals: Record<string, string | Record<string, string>>;
  /** Keyed totals too large to list here: key count and listing digest; entries in `control_totals` (controls.ts LargeTotal). */
  readonly large_totals?: Record<string, LargeTotal>;
  readonly differences: ReportedDifference[];
}

/** The run's result: what `--json` prints, plus the manifest. */
export interface RunResult {
  readonly run_id: string;
  readonly status: ControlStatus;
  readonly exit_code: ExitCode;
  readonly window: { start: string; end: string };
  readonly manifest: { path: string; sha256: string };
  readonly results_digest: string;
  readonly controls: readonly ControlResult[];
  readonly quarantine_count: number;
  readonly manifestDoc: ManifestV1;
}

/** A new run id: `run-<utc timestamp>-<random>`, lower-case so it is a valid partition value. */
export function newRunId(now = new Date()): string {
  const ts = now.toISOString().replace(/[-:]/g, '').replace(/\.[0-9]+Z$/, 'z').toLowerCase();
  return `run-${ts}-${randomBytes(4).toString('hex')}`;
}

function sqlValue(v: string | number): string {
  return typeof v === 'number' ? String(v) : `'${v.replace(/'/g, "''")}'`;
}

async function setVariables(conn: DuckDBConnection, vars: Record<string, string | number | bigint | null>): Promise<void> {
  for (const [k, v] of Object.entries(vars)) {
    if (!/^[a-z_][a-z0-9_]*$/.test(k)) throw new ConfigError(`bad parameter name ${k}`);
    const expr = v === null ? 'NULL::TIMESTAMP' : typeof v === 'bigint' ? `make_timestamp(${v}::BIGINT)` : sqlValue(v);
    await conn.run(`SET VARIABLE ${k} = ${expr}`);
  }
}

function statusOf(def: ControlDefinition, loads: Map<string, DatasetLoad>, w: Window, readinessReasons: string[], hasOpenDifferences: boolean) {
  const quarantined = def.reads.filter((d) => (loads.get(d)?.quarantined ?? 0) > 0);
  const reasons = [...readinessReasons];
  for (const d of def.reads) {
    const wm = loads.get(d)!.watermark;
    if (wm.micros === null) reasons.unshift(`${d} has no watermark`);
    else if (wm.micros < w.endMicros) reasons.unshift(`${d} watermark ${wm.value} (${wm.source}) is before the window end ${w.end}`);
  }
  const status: ControlStatus = quarantined.length ? 'INCOMPLETE' : reasons.length ? 'NOT_READY' : hasOpenDifferences ? 'BREAKS' : 'CLEAN';
  return { status, quarantined, reasons };
}

function asOf(def: ControlDefinition, loads: Map<string, DatasetLoad>): bigint | null {
  let min: bigint | null = null;
  for (const d of def.reads) {
    const m = loads.get(d)!.watermark.micros;
    if (m !== null && (min === null || m < min)) min = m;
  }
  return min;
}

async function codeCommit(): Promise<string | null> {
  try {
    const head = (await readFile(repoPath('.git/HEAD'), 'utf8')).trim();
    if (!head.startsWith('ref: ')) return head;
    return (await readFile(repoPath(`.git/${head.slice(5)}`), 'utf8')).trim();
  } catch { return null; }
}

/** Selects the controls to run; throws ConfigError on an unknown id. */
export function selectControls(all: readonly ControlDefinition[], ids: readonly string[]): ControlDefinition[] {
  if (ids.length === 0) return [...all];
  const unknown = ids.filter((id) => !all.some((c) => c.control_id === id));
  if (unknown.length) throw new ConfigError(`unknown control(s) ${unknown.join(', ')}; known: ${all.map((c) => c.control_id).join(', ')}`);
  return all.filter((c) => ids.includes(c.control_id));
}

/** The datasets the controls read (CONTRACT §3), in the order of CONTRACT §2: the only ones a run loads. */
export function datasetsRead(controls: readonly ControlDefinition[]): string[] {
  const read = new Set(controls.flatMap((c) => c.reads));
  return DATASETS.map((d) => d.name).filter((n) => read.has(n));
}

/** Milliseconds spent per phase, recorded in the manifest. */
type PhaseTimings = Record<string, number>;

async function timed<T>(timings: PhaseTimings, phase: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try { return await fn(); } finally { timings[phase] = Math.round(performance.now() - t0); }
}

/** What a run is doing in DuckDB, for an out-of-memory report. */
interface Progress { doing: string }

/** Evaluates every selected control against the loaded tables (CONTRACT §3–§4); records in `progress` which. */
async function evaluateControls(conn: DuckDBConnection, req: RunRequest, controls: readonly ControlDefinition[], loads: Map<string, DatasetLoad>, logger: RunLogger, timings: PhaseTimings, progress: Progress): Promise<ControlResult[]> {
  const { config } = req.config;
  const results: ControlResult[] = [];
  for (const def of controls) {
    const t0 = performance.now();
    const cfg = config.controls[def.control_id] ?? {};
    const asOfMicros = asOf(def, loads);
    progress.doing = `evaluating ${def.control_id}`;
    await setVariables(conn, { ...def.params, ...(cfg.params ?? {}), window_start: req.window.startMicros, window_end: req.window.endMicros, as_of: asOfMicros });
    const ev = await evaluateControl(conn, def);
    const timing = config.timing_rules.filter((r) => r.control === def.control_id);
    const diffs = ev.differences.map((d) => {
      const rule = timing.find((r) => r.kind === d.kind);
      const isTiming = rule !== undefined && d.record_time_us !== null && BigInt(d.record_time_us) >= req.window.endMicros - BigInt(rule.max_age_s) * 1_000_000n;
      return { ...d, record_time: d.record_time_us === null ? null : formatMicros(BigInt(d.record_time_us)), timing: isTiming };
    });
    const { status, quarantined, reasons } = statusOf(def, loads, req.window, ev.readiness, diffs.some((d) => !d.timing));
    results.push({
      control_id: def.control_id, status, as_of: asOfMicros === null ? null : formatMicros(asOfMicros),
      readiness: { ready: reasons.length === 0, reasons }, quarantined_datasets: quarantined, totals: ev.totals,
      ...(ev.large_totals ? { large_totals: ev.large_totals } : {}),
      differences: diffs.map((d) => ({
        kind: d.kind, key: d.key, detail: d.detail, record_time: d.record_time, break_id: null,
        disposition: (status === 'NOT_READY' || status === 'INCOMPLETE' ? 'PROVISIONAL' : d.timing ? 'TIMING' : 'OPENED') as Disposition,
      })),
    });
    timings[`control_${def.control_id.toLowerCase()}_ms`] = Math.round(performance.now() - t0);
    logger.info(`${status}: ${diffs.length} difference(s)`, { control: def.control_id, status, differences: diffs.length });
  }
  return results;
}

/** The digest of the results alone: equal for two runs on equal inputs and code (CONTRACT §6). */
export function resultsDigestOf(window: Window, results: readonly ControlResult[], loaded: LoadResult): string {
  return sha256Hex(canonicalJson({
    window: { start: window.start, end: window.end },
    controls: results.map((r) => ({ control_id: r.control_id, status: r.status, as_of: r.as_of, totals: r.totals, ...(r.large_totals ? { large_totals: r.large_totals } : {}), differences: r.differences.map((d) => ({ kind: d.kind, key: d.key, detail: d.detail, record_time: d.record_time })) })),
    quarantine: loaded.quarantine.map((q) => ({ dataset: q.dataset, file: q.file, row: q.row, column: q.column, rule: q.rule })),
  }));
}

/** Finishes earlier runs of this store: promotes staged outputs of published runs, drops staging of dead ones. */
async function recoverEarlierRuns(store: ObjectStore, logger: RunLogger): Promise<void> {
  const r = await recoverStaging(
    store,
    async (runId) => (await findManifest(store, runId))?.manifest.outputs,
    async (runId) => {
      const owner = await store.get(`_staging/${runId}/_owner.json`);
      if (!owner) return false;
      try {
        const o = JSON.parse(owner.toString('utf8')) as { pid: number; host: string; started_at: string };
        if (o.host !== hostname()) return Date.now() - Date.parse(o.started_at) < LEASE_TTL_MS;
        process.kill(o.pid, 0);
        return true;
      } catch { return false; }
    },
  );
  for (const id of r.promoted) {
    logger.warn(`rolled forward run ${id}: its manifest was published, its outputs are now promoted`);
    const m = await findManifest(store, id);
    if (!m) continue;
    const doc = m.manifest;
    const w = { start: doc.window.start, end: doc.window.end, startMicros: parseTs(doc.window.start), endMicros: parseTs(doc.window.end) };
    const defs = loadControls().filter((c) => doc.controls.includes(c.control_id));
    await verifyCorrectedBreaks(store, { runId: id, window: w, controls: defs, results: doc.results as unknown as ControlResult[], manifestSha256: m.sha256, manifestKey: m.key, startedAt: doc.started_at });
  }
  for (const id of r.discarded) logger.warn(`discarded staging of run ${id}: it stopped before publishing a manifest`);
}

/**
 * Runs one window. Returns the result (a business outcome is never an exception); throws
 * ConfigError, ConcurrencyError (another run holds the window: exit 5) or InternalError when the
 * run cannot produce a result. Order of effects: leases → load → controls → breaks → staged
 * outputs → manifest (the commit point) → promoted outputs → automatic verification → release.
 */
export async function runWindow(req: RunRequest): Promise<RunResult> {
  const startedAt = new Date();
  const runId = newRunId(startedAt);
  const logger = (req.logger ?? silentLogger).child({ run_id: runId, window: `${req.window.start}/${req.window.end}` });
  const timings: PhaseTimings = {};
  const allControls = loadControls();
  const controls = selectControls(allControls, req.controls);
  // Bad environment settings are configuration errors before any lease.
  inlineTotalKeys();
  storageSetting();
  memoryLimitSetting();
  const store = await openStore(req.store);
  const { config } = req.config;
  if (req.rerunOf && !(await findManifest(store, req.rerunOf))) throw new ConfigError(`--rerun-of ${req.rerunOf}: no published manifest of that run in ${store.location}`);
  if (!req.sources.startsWith('s3://')) await checkLocalSources(req.sources);
  await recoverEarlierRuns(store, logger);
  const leases = await acquireLeases(store, controls.map((c) => c.control_id), req.window, runId);
  await faultPoint('leased');
  // DuckDB reads and writes scratch files by path: keep the path free of quotes, spaces and globs.
  const scratch = await mkdtemp(join(SAFE_PATH.test(tmpdir()) ? tmpdir() : '/tmp', 'reckon-'));
  let engine: Engine | undefined;
  let openConn: DuckDBConnection | undefined;
  const progress: Progress = { doing: 'loading' };
  try {
    logger.info(`loading ${req.sources}`, { phase: 'load' });
    const located = await timed(timings, 'locate_ms', () => locateSources(req.sources, join(scratch, 'sources')));
    const reads = datasetsRead(controls);
    engine = await openEngine(scratch, await estimateLoadBytes(located.root, reads));
    const conn = await engine.instance.connect();
    openConn = conn;
    await conn.run(`SET TimeZone = 'UTC'`);
    await faultPoint('loading');
    // Views over checked Parquet files for datasets without derived columns (load-views.ts).
    const loaded = await timed(timings, 'load_ms', async () => {
      const l = await loadSources(conn, located.root, config, join(scratch, 'links'), { datasets: reads, views: true });
      // Tables in a DuckDB file: write what the load left in memory (added columns, collapsed
      // duplicates) into the file, so the controls find the buffer pool free for their joins.
      if (engine!.storage === 'file') await conn.run('CHECKPOINT');
      return l;
    });
    await faultPoint('computing');
    const controlFiles = located.remote ? {} : await controlFileHashes(located.root);
    const loads = new Map(loaded.datasets.map((d) => [d.dataset, d]));
    const common = commonSql();
    const results = await timed(timings, 'controls_ms', async () => {
      progress.doing = 'computing the shared tables (sql/common)';
      for (const c of common) await runScript(conn, c.text);
      return evaluateControls(conn, req, controls, loads, logger, timings, progress);
    });
    await checkViewFiles(loaded);

    // Breaks: open, reobserve or reopen, before the manifest that lists them (CONTRACT §5).
    const breakOutcomes = await timed(timings, 'breaks_ms', async () => {
      const all: BreakOutcome[] = [];
      // Loop, not push(...spread): a day can hold hundreds of thousands of differences.
      for (const r of results) for (const o of await recordBreaks(store, { runId, window: req.window, control: controls.find((c) => c.control_id === r.control_id)!, result: r, config })) all.push(o);
      return all;
    });
    // A TIMING difference seen in an earlier window opens its break now: its control is then BREAKS.
    const finalResults: ControlResult[] = results.map((r) => {
      const differences = r.differences.map((d) => ({ ...d, ...breakFor(breakOutcomes, r.control_id, d) }));
      const status: ControlStatus = r.status === 'CLEAN' && differences.some((d) => d.disposition !== 'TIMING') ? 'BREAKS' : r.status;
      return { ...r, status, differences };
    });
    const exitCode = exitCodeForStatuses(finalResults.map((r) => r.status));
    const overall: ControlStatus = (['INCOMPLETE', 'NOT_READY', 'BREAKS', 'CLEAN'] as const).find((s) => finalResults.some((r) => r.status === s)) ?? 'CLEAN';
    const resultsDigest = resultsDigestOf(req.window, finalResults, loaded);
    const breakRows = await breakOutputRows(store, { runId, config, controls: allControls });

    progress.doing = 'writing outputs';
    const outputs = await timed(timings, 'outputs_ms', async () => {
      const files = await writeOutputs(conn, join(scratch, 'staging'), windowDate(req.window), runId, { ...outputRows(runId, req, finalResults, loaded, resultsDigest, startedAt), ...breakRows }, { ...OUTPUT_TABLES, ...BREAK_OUTPUT_TABLES }, largeTotalRows(runId, req, finalResults));
      await store.putOnce(`_staging/${runId}/_owner.json`, JSON.stringify({ pid: process.pid, host: hostname(), started_at: startedAt.toISOString() }));
      await stageOutputs(store, runId, files);
      return files;
    });

    await faultPoint('staged');
    const sqlFiles = [...common.map((c) => ({ path: c.path, sha256: c.sha256 })), ...allControls.flatMap((c) => c.sqlFiles)];
    const controlDefs = await Promise.all(allControls.map(async (c) => {
      const path = `controls/${c.control_id.toLowerCase()}/control.json`;
      return { path, sha256: sha256Hex(await readFile(repoPath(path))) };
    }));
    const pkg = JSON.parse(await readFile(repoPath('package.json'), 'utf8')) as { version: string };
    const commit = await codeCommit();
    const inputObjects = [...loaded.datasets.flatMap((d) => d.files.map((f) => ({ path: f.path, sha256: f.sha256 }))), ...Object.values(controlFiles).flat()];
    const fingerprints = { inputs_sha256: inputsFingerprint(inputObjects), code_sha256: await codeFingerprint(), config_sha256: req.config.sha256 };
    const publishStart = performance.now();
    const published = await publishManifest(store, runId, async (chain) => {
      await checkFencing(store, leases);
      timings.publish_ms = Math.round(performance.now() - publishStart);
      return {
        manifest_version: 1,
        run_id: runId,
        trigger: req.trigger,
        reason: req.reason,
        parent_run_id: req.rerunOf,
        window: { start: req.window.start, end: req.window.end },
        controls: controls.map((c) => c.control_id),
        started_at: startedAt.toISOString(),
        finished_at: new Date().toISOString(),
        sources: { location: req.sources, datasets: Object.fromEntries(loaded.datasets.map((d) => [d.dataset, { ...manifestDataset(d, located.remote), control_files: controlFiles[d.dataset] ?? [] }])) },
        cutoff_mappings: [...loaded.cutoffMappings],
        currency_table: { path: 'pipeline/reference/iso4217.csv', sha256: currencyTable().sha256 },
        rounding_mode: config.rounding_mode,
        code: { version: pkg.version, commit, sql: sqlFiles, control_definitions: controlDefs, config: { path: req.config.path ?? null, sha256: req.config.sha256 } },
        fingerprints,
        results: finalResults.map((r) => ({ ...r })),
        quarantine: { count: loaded.quarantine.length, listed: Math.min(loaded.quarantine.length, 1000), entries: loaded.quarantine.slice(0, 1000).map((q) => ({ ...q, raw: q.raw.slice(0, 2048) })) },
        breaks: breakOutcomes.map((b) => ({
          break_id: b.break_id, control_id: b.control_id, kind: b.kind, key: b.key, disposition: b.disposition,
          state: b.state, version: b.version, age_s: b.age_s, sla_s: b.sla_s, sla_breached: b.sla_breached,
        })),
        notes: notesFor(loaded),
        outputs: outputs.map((o) => ({ table: o.table, key: o.key, sha256: o.sha256, size: o.size, rows: o.rows })),
        results_digest: resultsDigest,
        chain,
        leases: leases.map((l) => ({ control_id: l.control_id, fencing_token: l.token, acquired_at: l.acquired_at, expires_at: l.expires_at })),
        timings_ms: { ...timings },
        runtime: { node: process.version, duckdb_threads: DUCKDB_THREADS, duckdb_memory_limit: memoryLimitSetting(), duckdb_storage: engine!.storage, estimated_load_bytes: engine!.estimated_bytes, overall_status: overall, exit_code: exitCode },
      };
    });
    await faultPoint('published');
    await promoteOutputs(store, runId, outputs);
    await verifyCorrectedBreaks(store, { runId, window: req.window, controls, results: finalResults, manifestSha256: published.sha256, manifestKey: published.key, startedAt: startedAt.toISOString() });
    logger.info(`published ${published.key} sha256 ${published.sha256}`, { phase: 'publish', manifest: published.key, status: overall });
    return {
      run_id: runId, status: overall, exit_code: exitCode, window: { start: req.window.start, end: req.window.end },
      manifest: { path: storePath(store, published.key), sha256: published.sha256 }, results_digest: resultsDigest,
      controls: finalResults, quarantine_count: loaded.quarantine.length, manifestDoc: published.manifest,
    };
  } catch (e) {
    throw engine ? explainOutOfMemory(e, progress.doing, engine) : e;
  } finally {
    await releaseLeases(store, leases);
    openConn?.closeSync();
    engine?.instance.closeSync();
    await rm(scratch, { recursive: true, force: true });
  }
}

function parseTs(iso: string): bigint {
  const p = parseTimestamp(iso);
  if (!p.ok) throw new Error(`bad timestamp in a manifest: ${iso}`);
  return p.value;
}

function storePath(store: ObjectStore, key: string): string {
  return store.location.startsWith('s3://') ? `${store.location.replace(/\/$/, '')}/${key}` : join(store.location, key);
}

function breakFor(outcomes: readonly BreakOutcome[], controlId: string, d: ReportedDifference): { break_id: string | null; disposition: Disposition } {
  const b = outcomes.find((o) => o.control_id === controlId && o.kind === d.kind && o.key === d.key);
  return b ? { break_id: b.break_id, disposition: b.disposition } : { break_id: d.break_id, disposition: d.disposition };
}

function manifestDataset(d: DatasetLoad, remote?: RemoteObjectInfo) {
  return {
    present: d.present,
    objects: d.files.map((f) => {
      const r = remote?.get(f.path);
      return r ? { ...f, etag: r.etag ?? null, remote_key: r.key } : { ...f };
    }),
    records_read: d.records_read,
    records_loaded: d.records_loaded,
    quarantined: d.quarantined,
    duplicates: d.duplicates,
    watermark: { source: d.watermark.source, value: d.watermark.value, ...(d.watermark.complete !== undefined ? { complete: d.watermark.complete } : {}), ...(d.watermark.sequence !== undefined ? { sequence: d.watermark.sequence } : {}) },
    extra_columns: d.extra_columns,
    ignored_files: [...d.ignored_files],
    ...(d.import_report !== undefined ? { import_report: d.import_report } : {}),
  };
}

function notesFor(loaded: LoadResult): string[] {
  const notes: string[] = [];
  for (const d of loaded.datasets) {
    if (d.duplicates > 0) notes.push(`${d.dataset}: ${d.duplicates} exact duplicate deliver${d.duplicates === 1 ? 'y' : 'ies'} counted once`);
    if (d.extra_columns.length) notes.push(`${d.dataset}: extra columns ignored: ${d.extra_columns.join(', ')}`);
    if (d.ignored_files.length) notes.push(`${d.dataset}: files that are not data were ignored: ${d.ignored_files.join(', ')}`);
    if (d.watermark.source === 'derived') notes.push(`${d.dataset}: watermark derived from the data (${d.watermark.value})`);
  }
  return notes;
}

/**
 * SQL selecting the `control_totals` rows of the large totals (LARGE_TOTALS_TABLE), as text in the
 * table's column order; undefined when no control has one.
 */
function largeTotalRows(runId: string, req: RunRequest, results: readonly ControlResult[]): Record<string, string> | undefined {
  const withLarge = results.filter((r) => r.large_totals);
  if (!withLarge.length) return undefined;
  const lit = (v: string) => `'${v.replace(/'/g, "''")}'`;
  const status = `CASE control_id ${withLarge.map((r) => `WHEN ${lit(r.control_id)} THEN ${lit(r.status)}`).join(' ')} END`;
  return {
    control_totals: `SELECT ${lit(runId)}, ${lit(req.window.start)}, ${lit(req.window.end)}, control_id, ${status}, name, dim, value, value, value FROM ${LARGE_TOTALS_TABLE}`,
  };
}

function outputRows(runId: string, req: RunRequest, results: readonly ControlResult[], loaded: LoadResult, digest: string, startedAt: Date) {
  const ws = req.window.start, we = req.window.end;
  return {
    runs: results.map((r) => [runId, req.trigger, req.reason, req.rerunOf, ws, we, r.control_id, r.status, String(exitCodeForStatuses([r.status])), r.as_of, r.as_of, String(r.differences.length), digest, startedAt.toISOString()]),
    control_totals: results.flatMap((r) => Object.entries(r.totals).flatMap(([name, v]) =>
      typeof v === 'string' ? [[runId, ws, we, r.control_id, r.status, name, null, v, v, v]] : Object.entries(v).map(([dim, x]) => [runId, ws, we, r.control_id, r.status, name, dim, x, x, x]))),
    differences: results.flatMap((r) => r.differences.map((d) => [runId, ws, we, r.control_id, r.status, d.kind, d.key, d.detail, d.record_time, d.record_time, d.break_id, d.disposition])),
    quarantine: loaded.quarantine.map((q) => [runId, ws, q.dataset, q.file, q.row === null ? null : String(q.row), q.line === null ? null : String(q.line), q.column, q.rule, q.message, q.raw]),
  };
}
