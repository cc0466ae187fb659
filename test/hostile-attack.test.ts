/**
 * Issue 18: what an attack pass got through the input rules and the readers, at the loader and
 * the lease store (in process: real files, real DuckDB, a real local store). The whole-run cases
 * (exit codes, a run that must not block while it holds its leases) are in hostile-attack-cli.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { loadConfig } from '../pipeline/config/config.js';
import { windowForRange } from '../pipeline/contract/window.js';
import { ConcurrencyError } from '../pipeline/core/errors.js';
import { loadSources, type LoadResult } from '../pipeline/load/load.js';
import type { FileLimits } from '../pipeline/contract/limits.js';
import { acquireLeases } from '../pipeline/publish/lease.js';
import { LocalObjectStore } from '../pipeline/store/local-store.js';
import { scratchDir } from './helpers/cli.js';
import { csvLine, csvText, validDay, WINDOW } from './hostile-fixtures.js';

const tmp = scratchDir('reckon-attack-');
let instance: DuckDBInstance;
let conn: DuckDBConnection;
let counter = 0;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  conn = await instance.connect();
  await conn.run(`SET TimeZone = 'UTC'`);
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
  tmp.cleanup();
});

const day = validDay(3);

/** A fresh source root holding `files` (path under the root → content). */
function root(files: Record<string, string | Buffer>): string {
  const dir = join(tmp.dir, `root-${++counter}`);
  mkdirSync(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return dir;
}

async function load(dir: string, limits?: Partial<FileLimits>, datasets?: string[]): Promise<LoadResult> {
  const { config } = await loadConfig();
  return loadSources(conn, dir, { ...config, ...(limits ? { limits } : {}) }, join(tmp.dir, `links-${++counter}`), datasets ? { datasets } : {});
}

const entries = (r: LoadResult) => r.quarantine.map((q) => ({ file: q.file, row: q.row, line: q.line, column: q.column, rule: q.rule }));
const ds = (r: LoadResult, name: string) => r.datasets.find((d) => d.dataset === name)!;

describe('side files that are not regular files (item 5)', () => {
  it('a FIFO as _watermark.json or _import_report.json is refused by name, never opened; a link to /dev/zero is refused', async () => {
    const dir = root({ 'orders/part-0001.csv': csvText(day.orders), 'executions/part-0001.csv': csvText(day.executions) });
    execFileSync('mkfifo', [join(dir, 'orders', '_watermark.json'), join(dir, 'orders', '_import_report.json')]);
    symlinkSync('/dev/zero', join(dir, 'executions', '_watermark.json'));
    const r = await load(dir, undefined, ['orders', 'executions']);
    expect(r.quarantine.map((q) => [q.file, q.rule, q.message])).toEqual([
      ['orders/_watermark.json', 'watermark_unreadable', 'orders/_watermark.json is a FIFO (named pipe), not a regular file; it is not read'],
      ['orders/_import_report.json', 'import_report_file_unreadable', 'orders/_import_report.json is a FIFO (named pipe), not a regular file; it is not read'],
      ['executions/_watermark.json', 'link_outside_source_root', 'executions/_watermark.json is a link that leads outside the source root; it is not read'],
    ]);
    expect(ds(r, 'orders').control_files).toEqual([]);
    expect(ds(r, 'orders').records_loaded).toBe(9);
  });
});

describe('per-file bounds (item 6): a 20 KB .csv.gz of 10,485,760 short lines', () => {
  const bomb = gzipSync(Buffer.concat([Buffer.from(`${csvLine(day.executions.header)}\n`), Buffer.alloc(10_485_760 * 2, 'a\n')]), { level: 9 });

  it('is about 20 KB', () => {
    expect(bomb.length).toBeLessThan(25_000);
  });

  it('stops at the quarantine bound: that many entries, then one saying where reading stopped', async () => {
    const r = await load(root({ 'executions/bomb.csv.gz': bomb }), { max_file_quarantined: 1000 }, ['executions']);
    expect(r.quarantine).toHaveLength(1001);
    expect(entries(r).slice(0, 2)).toEqual([
      { file: 'executions/bomb.csv.gz', row: 1, line: 2, column: null, rule: 'field_count' },
      { file: 'executions/bomb.csv.gz', row: 2, line: 3, column: null, rule: 'field_count' },
    ]);
    expect(r.quarantine[1000]).toEqual({
      dataset: 'executions', file: 'executions/bomb.csv.gz', row: 1001, line: 1002, column: null, rule: 'file_too_many_quarantined', raw: '',
      message: 'executions/bomb.csv.gz: 1000 records of the file are quarantined, the most kept for one file (limits.max_file_quarantined); records from row 1001 on are not read',
    });
    expect(ds(r, 'executions').records_read).toBe(1000);
  });

  it('stops at the record bound', async () => {
    const r = await load(root({ 'executions/bomb.csv.gz': bomb }), { max_file_records: 5000 }, ['executions']);
    expect(r.quarantine).toHaveLength(5001);
    expect(entries(r)[5000]).toEqual({ file: 'executions/bomb.csv.gz', row: 5001, line: 5002, column: null, rule: 'file_too_many_records' });
    expect(r.quarantine[5000].message).toBe('executions/bomb.csv.gz: the file holds more than 5000 records, the most read from one file (limits.max_file_records); records from row 5001 on are not read');
  });

  it('stops at the decompressed-size bound', async () => {
    const r = await load(root({ 'executions/bomb.csv.gz': bomb }), { max_file_bytes: 100_000 }, ['executions']);
    const last = r.quarantine[r.quarantine.length - 1];
    expect(last.rule).toBe('file_too_large');
    expect(last.message).toMatch(/^the file holds more than 100000 bytes once decompressed; at most 100000 are read from one file \(limits\.max_file_bytes\) \(records from row [0-9]+ on are not read\)$/);
    expect(last.row).toBe(ds(r, 'executions').records_read + 1);
    expect(ds(r, 'executions').records_read).toBeLessThan(50_000);
  });

  it('a plain file over the size bound is not read at all; over the record bound the fast path hands it to the reader that stops there', async () => {
    const paths: string[] = [];
    const { config } = await loadConfig();
    const r = await loadSources(conn, root({ 'orders/b.csv': csvText(day.orders) }), { ...config, limits: { max_file_records: 4 } }, join(tmp.dir, `links-${++counter}`), { datasets: ['orders'], onFile: (f) => paths.push(`${f.loadedBy}: ${f.reason}`) });
    expect(paths).toEqual(['js: the file holds 9 records, more than limits.max_file_records']);
    expect(entries(r)).toEqual([{ file: 'orders/b.csv', row: 5, line: 6, column: null, rule: 'file_too_many_records' }]);
    expect(ds(r, 'orders').records_loaded).toBe(4);
    const big = await load(root({ 'orders/b.csv': csvText(day.orders) }), { max_file_bytes: 100 }, ['orders']);
    expect(big.quarantine.map((q) => [q.rule, q.row, q.message])).toEqual([['file_too_large', null, `orders/b.csv holds ${Buffer.byteLength(csvText(day.orders))} bytes; at most 100 are read from one file (limits.max_file_bytes); it is not read`]]);
    expect(ds(big, 'orders').records_read).toBe(0);
  });
});

describe('leases of dead holders (item 6): free at once on their host, at expiry elsewhere, never later', () => {
  const w = windowForRange(WINDOW);
  const prefix = 'leases/rc01/20261102t000000z-20261103t000000z';
  const grant = (over: Record<string, unknown>) => JSON.stringify({
    control_id: 'RC01', window_key: '20261102t000000z-20261103t000000z', token: 1, run_id: 'run-dead',
    acquired_at: new Date().toISOString(), expires_at: new Date(Date.now() + 3_600_000).toISOString(), ...over,
  });
  const storeWith = (body: string) => {
    const dir = join(tmp.dir, `store-${++counter}`);
    mkdirSync(join(dir, prefix), { recursive: true });
    writeFileSync(join(dir, prefix, '0000000001.json'), body);
    return new LocalObjectStore(dir);
  };

  it('a pid of this host reused by another process (its start time differs) holds nothing', async () => {
    const s = storeWith(grant({ pid: process.pid, host: hostname(), start_ticks: '1' }));
    expect((await acquireLeases(s, ['RC01'], w, 'run-new')).map((l) => l.token)).toEqual([2]);
  });

  it('a holder on this host that lived before the last boot holds nothing', async () => {
    const s = storeWith(grant({ pid: process.pid, host: hostname(), boot_id: '00000000-0000-0000-0000-000000000000' }));
    expect((await acquireLeases(s, ['RC01'], w, 'run-new')).map((l) => l.token)).toEqual([2]);
  });

  it('an unreadable grant holds nothing, and its token still counts', async () => {
    const s = storeWith('{"control_id": "RC01", "tok');
    expect((await acquireLeases(s, ['RC01'], w, 'run-new')).map((l) => l.token)).toEqual([2]);
  });

  it('a live holder on another host holds the window until its expiry, and not after', async () => {
    const live = storeWith(grant({ pid: 1, host: 'other-host' }));
    await expect(acquireLeases(live, ['RC01'], w, 'run-new')).rejects.toBeInstanceOf(ConcurrencyError);
    const expired = storeWith(grant({ pid: 1, host: 'other-host', expires_at: new Date(Date.now() - 1).toISOString() }));
    expect((await acquireLeases(expired, ['RC01'], w, 'run-new')).map((l) => l.token)).toEqual([2]);
  });

  it('this very process holds its own lease (start time and boot id match)', async () => {
    const s = new LocalObjectStore(join(tmp.dir, `store-${++counter}`));
    await acquireLeases(s, ['RC01'], w, 'run-a');
    await expect(acquireLeases(s, ['RC01'], w, 'run-b')).rejects.toThrow(/is being run by run-a/);
  });
});
