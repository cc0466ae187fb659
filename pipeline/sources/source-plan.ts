/**
 * The run's sources, in two steps (issue 21). `prepareSources` runs in the run's preparation,
 * before any lease: it checks a `--sources` folder, or reads a sources file (sources-file.ts),
 * checks its folders, connects to each database the selected controls need and describes every
 * query, so a refused connection, wrong credentials or a query mistake is a configuration error
 * (exit 2) that names the dataset and the host. `locate` runs once the window is leased: it stages
 * S3 datasets, starts extracting each database's datasets inside one snapshot (postgres/extract.ts)
 * and hands the loader one root folder per dataset at once; the loader waits for each database
 * dataset (`ready`) while the next ones are still being read, so extracting and loading overlap.
 * Datasets the file does not list come from its `default` location, or are absent (an empty
 * folder: no records, no watermark).
 */
import { mkdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DATASETS } from '../contract/datasets.js';
import type { Window } from '../contract/window.js';
import { ConfigError, InputError, InterruptedError } from '../core/errors.js';
import { interruptedBy, onInterrupt } from '../core/interrupt.js';
import type { FaultPoints } from '../core/fault.js';
import type { S3Settings } from '../core/settings.js';
import type { WrittenFile } from './csv-fast.js';
import type { StrayEntry } from './files.js';
import { checkLocalSources, locateSources, type DatasetFault, type DatasetOrigin, type LocatedSources, type RemoteObjectInfo } from './locate.js';
import type { OpenDatabase } from './postgres/connection.js';
import type { DatabaseExtract, DatabaseSource, QueryIssue } from './postgres/extract.js';
import { isSourcesFile, loadSourcesFile, type DatasetSource, type SourcesPlan } from './sources-file.js';

/**
 * `work`, or InterruptedError as soon as `interrupt` fires (a connection attempt to a server that
 * never answers would otherwise hold a stopping run for its whole connect_timeout_s, and end as a
 * ConfigError). Connections `work` still makes are closed once it settles.
 */
async function untilInterrupted(work: Promise<Map<string, OpenDatabase>>, interrupt: AbortSignal | undefined, doing: string): Promise<Map<string, OpenDatabase>> {
  if (!interrupt) return work;
  let unlisten = () => undefined as void;
  const stopped = new Promise<never>((_resolve, reject) => {
    unlisten = onInterrupt(interrupt, () => {
      const signal = interruptedBy(interrupt) ?? 'SIGINT';
      reject(new InterruptedError(signal, `interrupted by ${signal} while ${doing}, before any lease`));
    });
  });
  try {
    return await Promise.race([work, stopped]);
  } catch (e) {
    if (e instanceof InterruptedError) void work.then(async (dbs) => { for (const db of dbs.values()) await db.close(); }, () => undefined);
    throw e;
  } finally {
    unlisten();
  }
}

/** Cancels the statement each database session runs (a query check) and ends the sessions. */
async function cancelChecks(databases: ReadonlyMap<string, OpenDatabase>): Promise<void> {
  const { cancelStatement } = await connection();
  for (const db of databases.values()) {
    for (const s of [db, ...db.helpers]) void cancelStatement(s);
    void db.close();
  }
}

/**
 * The error for the queries of sources file `path` that failed their check: ConfigError (exit 2)
 * when one cannot run as written; when every failure is the server's passing state (a statement
 * timeout behind another session's lock, a restart), InputError (exit 3, as a connection lost
 * mid-extract): nothing was read, and the same run can be repeated unchanged.
 */
function queryIssuesError(path: string, issues: readonly QueryIssue[]): ConfigError | InputError {
  const lines = issues.map((i) => `  ${i.path}: ${i.message}${i.transient ? ' (the server could not answer now)' : ''}`).join('\n');
  if (issues.every((i) => i.transient)) {
    return new InputError({ message: `the sources file ${path}: the database did not answer while its queries were checked, before any lease:\n${lines}\n  a lock another session holds, a busy or restarting server: nothing was read or published; run again as it is (statement_timeout_s bounds each wait)` });
  }
  return new ConfigError(`the sources file ${path}: ${issues.length} quer${issues.length === 1 ? 'y does' : 'ies do'} not run:\n${lines}`, path, issues[0].path);
}

/** The database code and its driver (pg), loaded only for a sources file that names a database. */
const connection = () => import('./postgres/connection.js');
const extraction = () => import('./postgres/extract.js');

/** Sources checked and connected, ready to locate once the window is leased. Close it in every case. */
export interface PreparedSources {
  readonly location: string;
  /**
   * Stages files and starts the database extracts under `scratch`; throws InputError when an S3
   * read fails (a database's failure rejects its datasets' `ready` and `settled`).
   */
  locate(scratch: string): Promise<LocatedSources>;
  /** Ends the database connections and waits for any extract still running to stop (idempotent). */
  close(): Promise<void>;
}

/**
 * Options: the run window (for extract bounds), the environment holding the PG* and url_env
 * variables (the driver's, not reckon's settings; default the process's), how S3 is reached,
 * the run's fault points (`extracting`) and its interrupt (which ends a database extract at once).
 */
export interface PrepareOptions {
  readonly window: Window;
  readonly env?: NodeJS.ProcessEnv;
  readonly s3?: S3Settings;
  readonly fault?: FaultPoints;
  readonly interrupt?: AbortSignal;
}

/** The label a database dataset carries in quarantine entries and manifest objects: `db:<database>/<dataset>`. */
export const databaseLabel = (database: string, dataset: string) => `db:${database}/${dataset}`;

/**
 * Prepares `location` (a folder, `s3://…`, or a sources file) for the datasets `reads`. Throws
 * ConfigError (exit 2) for a folder that does not exist, a sources file with mistakes (all
 * listed), a database that refuses the connection or the credentials, or a query that does not
 * describe; no lease has been taken then.
 */
export async function prepareSources(location: string, reads: readonly string[], opts: PrepareOptions): Promise<PreparedSources> {
  if (location.startsWith('s3://') || !isSourcesFile(location)) {
    if (!location.startsWith('s3://')) await checkLocalSources(location);
    return { location, locate: (scratch) => locateSources(location, join(scratch, 'sources'), opts.s3), close: async () => undefined };
  }
  const plan = await loadSourcesFile(location);
  const sources = new Map(reads.flatMap((d) => {
    const s: DatasetSource | undefined = plan.datasets.get(d) ?? (plan.defaultLocation ? { kind: 'location', dataset: d, location: plan.defaultLocation } : undefined);
    return s ? [[d, s] as const] : [];
  }));
  await checkFolders(plan, sources);
  const databases = await untilInterrupted(connectDatabases(plan, sources, opts), opts.interrupt, `connecting to the databases of ${plan.path}`);
  let closed = false;
  let extracting: Promise<void> = Promise.resolve();
  const end = async () => {
    if (closed) return;
    closed = true;
    for (const db of databases.values()) await db.close();
  };
  // Ending the connections stops an extract still running; then wait for it to have stopped.
  const close = async () => {
    await end();
    await extracting.catch(() => undefined);
  };
  const estimates = new Map<string, number>();
  // A signal while a query check waits (on another session's lock, say) cancels it at once.
  const unlisten = opts.interrupt ? onInterrupt(opts.interrupt, () => { void cancelChecks(databases); }) : () => undefined;
  try {
    const issues = [];
    for (const [name, db] of databases) {
      const checked = await (await extraction()).checkDatabaseQueries(db, databaseSources(sources, name), opts.window);
      issues.push(...checked.issues);
      for (const [d, bytes] of checked.estimates) estimates.set(d, bytes);
    }
    const signal = opts.interrupt && interruptedBy(opts.interrupt);
    if (signal) throw new InterruptedError(signal, `interrupted by ${signal} while checking the queries of ${plan.path}, before any lease`);
    if (issues.length) throw queryIssuesError(plan.path, issues);
  } catch (e) {
    await close();
    throw e;
  } finally {
    unlisten();
  }
  return {
    location,
    close,
    locate: async (scratch) => {
      try {
        const located = await locatePlan(plan, sources, databases, scratch, opts, estimates);
        // The connections end when the extracts do; the run awaits `settled` after loading.
        extracting = located.settled!;
        extracting.then(end, end);
        return located;
      } catch (e) {
        await close();
        throw e;
      }
    },
  };
}

const databaseSources = (sources: ReadonlyMap<string, DatasetSource>, name: string): DatabaseSource[] =>
  DATASETS.flatMap((d) => {
    const s = sources.get(d.name);
    return s?.kind === 'database' && s.database === name ? [s] : [];
  });

/** Every local folder the read datasets come from must exist (as for a `--sources` folder). */
async function checkFolders(plan: SourcesPlan, sources: ReadonlyMap<string, DatasetSource>): Promise<void> {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const s of sources.values()) {
    if (s.kind !== 'location' || s.location.startsWith('s3://') || seen.has(s.location)) continue;
    seen.add(s.location);
    const at = plan.datasets.has(s.dataset) ? `datasets.${s.dataset}.location` : 'default';
    try {
      if (!(await stat(s.location)).isDirectory()) problems.push(`  ${at}: ${s.location} is not a folder`);
    } catch (e) {
      problems.push(`  ${at}: ${s.location} is not a readable folder (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  if (problems.length) throw new ConfigError(`the sources file ${plan.path} names folders that cannot be read; give folders that hold one folder per dataset:\n${problems.join('\n')}`, plan.path);
}

/** Connects to each database a read dataset needs, in name order; closes them all if one fails. */
async function connectDatabases(plan: SourcesPlan, sources: ReadonlyMap<string, DatasetSource>, opts: PrepareOptions): Promise<Map<string, OpenDatabase>> {
  const open = new Map<string, OpenDatabase>();
  const failures: unknown[] = [];
  // Every database is tried, so one run reports every one that refuses (each error names its database).
  for (const name of [...plan.databases.keys()].sort()) {
    const datasets = databaseSources(sources, name).map((s) => s.dataset);
    if (!datasets.length) continue;
    try {
      open.set(name, await (await connection()).openDatabase(plan.databases.get(name)!, datasets, opts.env ?? process.env));
    } catch (e) {
      failures.push(e);
    }
  }
  if (!failures.length) return open;
  for (const db of open.values()) await db.close();
  if (failures.length === 1 || !failures.every((e) => e instanceof ConfigError)) throw failures[0];
  throw new ConfigError(`${failures.length} databases of the sources file ${plan.path} refuse the run:\n${failures.map((e) => `  ${(e as Error).message}`).join('\n')}`, plan.path);
}

/** A promise with its resolve and reject, for a dataset the loader waits for. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
  // Awaited by the loader when it reaches the dataset; a failure before then is not unhandled.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

async function locatePlan(plan: SourcesPlan, sources: ReadonlyMap<string, DatasetSource>, databases: ReadonlyMap<string, OpenDatabase>, scratch: string, opts: PrepareOptions, estimates: ReadonlyMap<string, number>): Promise<LocatedSources> {
  const roots = new Map<string, string>();
  const origins = new Map<string, DatasetOrigin>();
  const faults = new Map<string, DatasetFault[]>();
  const remote = new Map<string, { size: number; etag?: string; key: string; sha256?: string }>();
  const strayRemote = new Map<string, readonly StrayEntry[]>();
  const absent = join(scratch, 'absent');
  await mkdir(absent, { recursive: true });
  for (const d of DATASETS) roots.set(d.name, absent);
  for (const d of DATASETS) if (!sources.has(d.name)) origins.set(d.name, { kind: 'absent' });
  // Files first (S3 staged into the scratch folder), then each database in one snapshot.
  const byLocation = new Map<string, string[]>();
  for (const s of sources.values()) if (s.kind === 'location') byLocation.set(s.location, [...(byLocation.get(s.location) ?? []), s.dataset]);
  let n = 0;
  for (const [location, datasets] of byLocation) {
    const located = await locateSources(location, join(scratch, `s3-${++n}`), opts.s3, datasets);
    for (const d of datasets) {
      roots.set(d, located.root as string);
      origins.set(d, { kind: location.startsWith('s3://') ? 's3' : 'folder', location });
    }
    for (const [k, v] of (located.remote ?? new Map()) as RemoteObjectInfo) remote.set(k, v);
    for (const [k, v] of located.strayRemote ?? []) strayRemote.set(k, v);
  }
  // Databases are extracted in the background, each in its own snapshot; each dataset is ready
  // for the loader once its files are written.
  const extracts: DatabaseExtract[] = [];
  const pending = new Map<string, ReturnType<typeof deferred>>();
  const written = new Map<string, WrittenFile>();
  // The first extract to fail is the cause: the others may fail after it only because the run,
  // stopping, closed their sessions ("Connection terminated"), so every dataset reports the first.
  let first: { e: unknown } | undefined;
  const tasks = [...databases].map(async ([name, db]) => {
    const dir = join(scratch, `db-${name}`);
    const mine = databaseSources(sources, name);
    for (const s of mine) {
      roots.set(s.dataset, dir);
      origins.set(s.dataset, { kind: 'database', database: name });
      pending.set(s.dataset, deferred());
    }
    try {
      extracts.push(await (await extraction()).extractDatabase(db, mine, dir, opts.window, (x, file) => {
        if (x.fault) faults.set(x.dataset, [{ file: databaseLabel(name, x.dataset), ...x.fault }]);
        // The loader matches files by real path; the dataset is ready once its file is known.
        const known = file ? realpath(file.path).then((p) => { written.set(p, { sha256: file.sha256, size: file.size, shape: file.shape, rendered: file.rendered }); }, () => undefined) : Promise.resolve();
        void known.then(() => pending.get(x.dataset)!.resolve());
      }, opts.fault, opts.interrupt));
    } catch (e) {
      first ??= { e };
      for (const s of mine) pending.get(s.dataset)!.reject(first.e);
      throw first.e;
    }
  });
  const settled = Promise.all(tasks).then(() => { extracts.sort((a, b) => (a.name < b.name ? -1 : 1)); });
  return {
    root: roots, location: plan.path, ...(remote.size ? { remote } : {}), ...(strayRemote.size ? { strayRemote } : {}), written,
    plan: { file: { path: plan.path, sha256: plan.sha256 }, origins, databases: extracts, faults },
    ready: async (dataset) => pending.get(dataset)?.promise,
    settled,
    estimatedBytes: estimates,
  };
}
