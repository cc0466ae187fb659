/**
 * Reading a published run back (issue 19): its manifest chosen by id or as the latest of the
 * store, and an output table of it verified against the SHA-256 its manifest recorded (CONTRACT
 * §6). What cannot be verified is said, never read: an output object that is gone or whose bytes
 * differ is reported with both digests, and the caller falls back to what the manifest itself lists.
 * A small in-memory DuckDB reads the Parquet (and source Parquet files, source-rows.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { sha256Hex } from '../core/digest.js';
import { duckdb } from '../core/duckdb.js';
import { ConfigError } from '../core/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { pendingRollForwards, pendingText } from '../publish/staging.js';
import { findRunManifest, manifestKeys, readStoredManifest, type StoredManifest } from '../report/run-view.js';

/** The manifest of run `run` (an id, or `latest`: the head of the chain). Throws ConfigError (exit 2) when there is none. */
export async function selectRun(store: ObjectStore, run: string): Promise<StoredManifest> {
  if (run !== 'latest') return findRunManifest(store, run);
  const keys = await manifestKeys(store);
  if (keys.length === 0) throw new ConfigError(`the store ${store.location} has no published run`);
  return readStoredManifest(store, keys[keys.length - 1]);
}

/** An output table of a run as read back: a local Parquet file whose bytes have the manifest's SHA-256, or why not. */
export type OutputRead =
  | { readonly state: 'verified'; readonly key: string; readonly sha256: string; readonly path: string; readonly rows: number }
  | { readonly state: 'absent' | 'missing' | 'pending' | 'changed'; readonly key: string | null; readonly message: string };

/** A scratch folder and a DuckDB connection for reading a run back; `close()` removes both. */
export interface Reader {
  readonly dir: string;
  connection(): Promise<DuckDBConnection>;
  close(): Promise<void>;
}

/** Opens a Reader (the DuckDB is started on first use). */
export async function openReader(): Promise<Reader> {
  const dir = await mkdtemp(join(tmpdir(), 'reckon-read-'));
  let instance: DuckDBInstance | undefined;
  let conn: DuckDBConnection | undefined;
  return {
    dir,
    async connection() {
      if (!conn) {
        instance = await duckdb().DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '1GB', temp_directory: join(dir, 'duckdb-tmp') });
        conn = await instance.connect();
        await conn.run(`SET TimeZone = 'UTC'`);
      }
      return conn;
    },
    async close() {
      conn?.closeSync();
      instance?.closeSync();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Fetches the output `table` of the run into the reader's folder and checks its SHA-256 against
 * the manifest. `absent` when the run wrote no such table (a run older than the table), `pending`
 * when the run stopped after its manifest and the next run promotes the object (its message says
 * what to do: publish/staging.ts pendingText), `missing` when the object is gone from the store,
 * `changed` when its bytes are not the ones published.
 */
export async function readOutput(store: ObjectStore, stored: Pick<StoredManifest, 'run_id' | 'manifest'>, table: string, reader: Reader): Promise<OutputRead> {
  const entry = stored.manifest.outputs.find((o) => o.table === table);
  if (!entry) return { state: 'absent', key: null, message: `run ${stored.run_id} wrote no ${table} output (it ran before reckon kept one)` };
  const bytes = await store.get(entry.key);
  if (!bytes) {
    const pending = (await pendingRollForwards(store)).find((p) => p.run_id === stored.run_id);
    if (pending) return { state: 'pending', key: entry.key, message: pendingText(pending, store.location) };
    return { state: 'missing', key: entry.key, message: `the ${table} output ${entry.key} is gone from the store ${store.location}` };
  }
  const sha256 = sha256Hex(bytes);
  if (sha256 !== entry.sha256) {
    return { state: 'changed', key: entry.key, message: `the ${table} output ${entry.key} has SHA-256 ${sha256}, not the ${entry.sha256} its manifest recorded: it is not read` };
  }
  const path = join(reader.dir, `${table}.parquet`);
  await writeFile(path, bytes);
  return { state: 'verified', key: entry.key, sha256, path, rows: entry.rows };
}
