/**
 * One way for tests to open a real DuckDB and load sources into it, instead of each file creating
 * an instance, connecting, setting the session zone and loading by hand. Every connection runs with
 * `TimeZone = 'UTC'`, as the product's does, so a TIMESTAMPTZ read back as text is UTC whatever
 * the machine's zone.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll } from 'vitest';
import { defaultConfig } from '../../pipeline/config/config.js';
import { DUCKDB_THREADS } from '../../pipeline/load/engine.js';
import { loadSources, type LoadOptions, type LoadResult } from '../../pipeline/load/load.js';

/** How to open a test DuckDB; anything not given is DuckDB's default. */
export interface DuckOptions {
  readonly threads?: number;
  readonly memoryLimit?: string;
  readonly tempDirectory?: string;
  readonly preserveInsertionOrder?: boolean;
  /** A database file; in memory when absent. */
  readonly path?: string;
}

/** The settings a run computes with (pipeline/load/engine.ts): two threads, insertion order not kept. */
export const AS_IN_A_RUN: DuckOptions = { threads: DUCKDB_THREADS, preserveInsertionOrder: false };

/** An open test DuckDB; `close()` closes the connection and the instance. */
export interface TestDuck {
  readonly instance: DuckDBInstance;
  readonly conn: DuckDBConnection;
  close(): void;
}

/** Opens a DuckDB (in memory unless `path`) with one connection whose session zone is UTC. */
export async function openDuck(opts: DuckOptions = {}): Promise<TestDuck> {
  const settings: Record<string, string> = {};
  if (opts.threads !== undefined) settings.threads = String(opts.threads);
  if (opts.memoryLimit !== undefined) settings.memory_limit = opts.memoryLimit;
  if (opts.tempDirectory !== undefined) settings.temp_directory = opts.tempDirectory;
  if (opts.preserveInsertionOrder !== undefined) settings.preserve_insertion_order = String(opts.preserveInsertionOrder);
  const instance = await DuckDBInstance.create(opts.path ?? ':memory:', settings);
  const conn = await instance.connect();
  await conn.run(`SET TimeZone = 'UTC'`);
  return { instance, conn, close: () => { conn.closeSync(); instance.closeSync(); } };
}

/** Runs `fn` on a fresh DuckDB and closes it afterwards, whatever `fn` does. */
export async function withDuck<T>(fn: (conn: DuckDBConnection) => Promise<T>, opts: DuckOptions = {}): Promise<T> {
  const duck = await openDuck(opts);
  try {
    return await fn(duck.conn);
  } finally {
    duck.close();
  }
}

/**
 * A DuckDB shared by the tests of one file: opened before the first (then `setup` runs on it, e.g.
 * a load) and closed after the last. Read `.conn` inside tests and hooks only.
 */
export function fileDuck(opts: DuckOptions = {}, setup?: (conn: DuckDBConnection) => Promise<void>): { readonly conn: DuckDBConnection } {
  let duck: TestDuck | undefined;
  beforeAll(async () => {
    duck = await openDuck(opts);
    if (setup) await setup(duck.conn);
  });
  afterAll(() => duck?.close());
  return {
    get conn(): DuckDBConnection {
      if (!duck) throw new Error('the file DuckDB is opened in beforeAll: read .conn inside a test or hook');
      return duck.conn;
    },
  };
}

/**
 * Loads the sources under `root` into `conn` the way a run does with the default configuration
 * (no --config): every record validated, quarantined or appended; `staging` is the load's scratch
 * folder (created; one per load).
 */
export async function loadDefault(conn: DuckDBConnection, root: string, staging: string, opts: LoadOptions = {}): Promise<LoadResult> {
  return loadSources(conn, root, defaultConfig().config, staging, opts);
}
