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
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../pipeline/config/config.js';
import { windowForRange } from '../pipeline/contract/window.js';
import { ConcurrencyError } from '../pipeline/core/errors.js';
import { loadSources, type LoadOptions, type LoadResult } from '../pipeline/load/load.js';
import type { FileLimits } from '../pipeline/contract/limits.js';
import { acquireLeases } from '../pipeline/publish/lease.js';
import { LocalObjectStore } from '../pipeline/store/local-store.js';
import { parquetWriteFile } from 'hyparquet-writer';
import { csvLine, csvText, datasetOf, entries, hostileBench, validDay, withValue, WINDOW } from './fixtures/hostile.js';

const { duck, root, fresh, parquet } = hostileBench('reckon-attack-');
const day = validDay(3);

/** Loads `dir` with the default configuration, `limits` patched in when given. */
async function load(dir: string, opts: LoadOptions & { readonly limits?: Partial<FileLimits> } = {}): Promise<LoadResult> {
  const { limits, ...rest } = opts;
  const { config } = defaultConfig();
  return loadSources(duck.conn, dir, limits ? { ...config, limits } : config, fresh('links'), rest);
}

describe('side files that are not regular files (item 5)', () => {
  it('a FIFO as _watermark.json or _import_report.json is refused by name, never opened; a link to /dev/zero is refused', async () => {
    const dir = root({ 'orders/part-0001.csv': csvText(day.orders), 'executions/part-0001.csv': csvText(day.executions) });
    execFileSync('mkfifo', [join(dir, 'orders', '_watermark.json'), join(dir, 'orders', '_import_report.json')]);
    symlinkSync('/dev/zero', join(dir, 'executions', '_watermark.json'));
    const r = await load(dir, { datasets: ['orders', 'executions'] });
    expect(r.quarantine.map((q) => [q.file, q.rule, q.message])).toEqual([
      ['orders/_watermark.json', 'watermark_unreadable', 'orders/_watermark.json is a FIFO (named pipe), not a regular file; it is not read'],
      ['orders/_import_report.json', 'import_report_file_unreadable', 'orders/_import_report.json is a FIFO (named pipe), not a regular file; it is not read'],
      ['executions/_watermark.json', 'link_outside_source_root', 'executions/_watermark.json is a link that leads outside the source root; it is not read'],
    ]);
    expect(datasetOf(r, 'orders').control_files).toEqual([]);
    expect(datasetOf(r, 'orders').records_loaded).toBe(9);
  });
});

describe('per-file bounds (item 6): a 20 KB .csv.gz of 10,485,760 short lines', () => {
  const bomb = gzipSync(Buffer.concat([Buffer.from(`${csvLine(day.executions.header)}\n`), Buffer.alloc(10_485_760 * 2, 'a\n')]), { level: 9 });

  it('is about 20 KB', () => {
    expect(bomb.length).toBeLessThan(25_000);
  });

  it('stops at the quarantine bound: that many entries, then one saying where reading stopped', async () => {
    const r = await load(root({ 'executions/bomb.csv.gz': bomb }), { limits: { max_file_quarantined: 1000 }, datasets: ['executions'] });
    expect(r.quarantine).toHaveLength(1001);
    expect(entries(r).slice(0, 2)).toEqual([
      { file: 'executions/bomb.csv.gz', row: 1, line: 2, column: null, rule: 'field_count' },
      { file: 'executions/bomb.csv.gz', row: 2, line: 3, column: null, rule: 'field_count' },
    ]);
    expect(r.quarantine[1000]).toEqual({
      dataset: 'executions', file: 'executions/bomb.csv.gz', row: 1001, line: 1002, column: null, rule: 'file_too_many_quarantined', raw: '',
      message: 'executions/bomb.csv.gz: 1000 records of the file are quarantined, the most kept for one file (limits.max_file_quarantined); records from row 1001 on are not read',
    });
    expect(datasetOf(r, 'executions').records_read).toBe(1000);
  });

  it('stops at the record bound', async () => {
    const r = await load(root({ 'executions/bomb.csv.gz': bomb }), { limits: { max_file_records: 5000 }, datasets: ['executions'] });
    expect(r.quarantine).toHaveLength(5001);
    expect(entries(r)[5000]).toEqual({ file: 'executions/bomb.csv.gz', row: 5001, line: 5002, column: null, rule: 'file_too_many_records' });
    expect(r.quarantine[5000].message).toBe('executions/bomb.csv.gz: the file holds more than 5000 records, the most read from one file (limits.max_file_records); records from row 5001 on are not read');
  });

  it('stops at the decompressed-size bound', async () => {
    const r = await load(root({ 'executions/bomb.csv.gz': bomb }), { limits: { max_file_bytes: 100_000 }, datasets: ['executions'] });
    const last = r.quarantine[r.quarantine.length - 1];
    expect(last.rule).toBe('file_too_large');
    expect(last.message).toMatch(/^the file holds more than 100000 bytes once decompressed; at most 100000 are read from one file \(limits\.max_file_bytes\) \(records from row [0-9]+ on are not read\)$/);
    expect(last.row).toBe(datasetOf(r, 'executions').records_read + 1);
    expect(datasetOf(r, 'executions').records_read).toBeLessThan(50_000);
  });

  it('a plain file over the size bound is not read at all; over the record bound the fast path hands it to the reader that stops there', async () => {
    const paths: string[] = [];
    const r = await load(root({ 'orders/b.csv': csvText(day.orders) }), { limits: { max_file_records: 4 }, datasets: ['orders'], onFile: (f) => paths.push(`${f.loadedBy}: ${f.reason}`) });
    expect(paths).toEqual(['js: the file holds 9 records, more than limits.max_file_records']);
    expect(entries(r)).toEqual([{ file: 'orders/b.csv', row: 5, line: 6, column: null, rule: 'file_too_many_records' }]);
    expect(datasetOf(r, 'orders').records_loaded).toBe(4);
    const big = await load(root({ 'orders/b.csv': csvText(day.orders) }), { limits: { max_file_bytes: 100 }, datasets: ['orders'] });
    expect(big.quarantine.map((q) => [q.rule, q.row, q.message])).toEqual([['file_too_large', null, `orders/b.csv holds ${Buffer.byteLength(csvText(day.orders))} bytes; at most 100 are read from one file (limits.max_file_bytes); it is not read`]]);
    expect(datasetOf(big, 'orders').records_read).toBe(0);
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
    const dir = fresh('store');
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
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const live = storeWith(grant({ pid: 1, host: 'other-host', expires_at: until }));
    await expect(acquireLeases(live, ['RC01'], w, 'run-new')).rejects.toBeInstanceOf(ConcurrencyError);
    await expect(acquireLeases(live, ['RC01'], w, 'run-new')).rejects.toThrow(`RC01 window [2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z) is being run by run-dead (pid 1 on other-host, lease until ${until}): `
      + `nothing was run; retry when run run-dead ends, or, if it died on other-host, after its lease expires at ${until}`);
    const expired = storeWith(grant({ pid: 1, host: 'other-host', expires_at: new Date(Date.now() - 1).toISOString() }));
    expect((await acquireLeases(expired, ['RC01'], w, 'run-new')).map((l) => l.token)).toEqual([2]);
  });

  it('this very process holds its own lease (start time and boot id match)', async () => {
    const s = new LocalObjectStore(fresh('store'));
    await acquireLeases(s, ['RC01'], w, 'run-a');
    const [mine] = await acquireLeases(s, ['RC02'], w, 'run-a');
    await expect(acquireLeases(s, ['RC02'], w, 'run-b')).rejects.toThrow(`RC02 window [2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z) is being run by run-a (pid ${process.pid} on ${hostname()}, lease until ${mine.expires_at}): nothing was run; retry when run run-a ends`);
    await expect(acquireLeases(s, ['RC01'], w, 'run-b')).rejects.toThrow(/is being run by run-a/);
  });
});

describe('Parquet columns judged like the other formats (items 9, 10)', () => {
  const positions = (account: string, currency = `'USD'`) => `SELECT TIMESTAMPTZ '2026-11-02 00:00:00+00' AS as_of, ${account} AS account_id, 'US-ACME' AS instrument_id,
    0::DECIMAL(20,4) AS quantity, 0::BIGINT AS cost_minor, ${currency} AS cost_currency`;

  it('an id stored as INTEGER is not the id 5: the file is refused, on the fast path and the JS reader alike', async () => {
    const dir = root({});
    await parquet(join(dir, 'positions/a.parquet'), positions('5::INTEGER'));
    await parquet(join(dir, 'positions/b.parquet'), positions(`'ACC-1'`, '840::BIGINT'));
    await parquet(join(dir, 'positions/c.parquet'), positions(`'ACC-1'`));
    for (const fast of [true, false]) {
      const r = await load(dir, { fast, datasets: ['positions'] });
      expect(r.quarantine.map((q) => [q.file, q.row, q.rule, q.message])).toEqual([
        ['positions/a.parquet', null, 'parquet_column_type', 'column account_id is INTEGER; an id column holds strings in every format (CONTRACT §1), so the file is not read'],
        ['positions/b.parquet', null, 'parquet_column_type', 'column cost_currency is BIGINT; a currency column holds strings in every format (CONTRACT §1), so the file is not read'],
      ]);
      expect(datasetOf(r, 'positions').records_loaded).toBe(1);
    }
  });

  it('a column named twice quarantines every row in Parquet as in CSV (never the first one used, never an invented price_1)', async () => {
    const cols = [...day.executions.header, 'price'];
    const rows = day.executions.rows.map((r) => [...r, '999']);
    const str = (name: string) => ({ name, type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const });
    const dir = root({ 'executions/b.csv': [cols, ...rows].map(csvLine).join('\n') + '\n' });
    parquetWriteFile({
      filename: join(dir, 'executions', 'a.parquet'),
      schema: [{ name: 'root', num_children: cols.length }, ...cols.map(str)],
      columnData: cols.map((name, i) => ({ name, data: rows.map((r) => r[i]) })),
    });
    for (const fast of [true, false]) {
      const r = await load(dir, { fast, datasets: ['executions'] });
      expect(entries(r)).toEqual(['a.parquet', 'b.csv'].flatMap((f) => [1, 2, 3].map((row) => ({ file: `executions/${f}`, row, line: f === 'b.csv' ? row + 1 : row, column: 'price', rule: 'header_duplicate_column' }))));
      expect(datasetOf(r, 'executions').extra_columns).toEqual([]);
      expect(datasetOf(r, 'executions').records_loaded).toBe(0);
    }
  });

  it('a JSON Lines record naming a key twice is not JSON a record can be read from, whatever the values', async () => {
    const exec = JSON.stringify(Object.fromEntries(day.executions.header.map((h, i) => [h, day.executions.rows[0][i]])));
    const lines = [
      exec.replace('"price":"100.50"', '"price":"100.50","price":"100.50"'),
      exec.replace('"price":"100.50"', '"price":"100.50","price":"999"'),
      exec.replace('"price":"100.50"', '"price":"100.50","pr\\u0069ce":"100.50"'),
      exec.replace('"price":"100.50"', '"price":"100.50","note":"a","note":"a"'),
      exec.replace('"execution_id":"EXE-0001"', '"execution_id":"EXE-0009"'),
    ];
    const r = await load(root({ 'executions/x.jsonl': lines.join('\n') + '\n' }), { datasets: ['executions'] });
    expect(entries(r)).toEqual([1, 2, 3, 4].map((row) => ({ file: 'executions/x.jsonl', row, line: row, column: null, rule: 'jsonl_not_json' })));
    expect(r.quarantine[0].message).toBe("the line's JSON object names a key more than once; a record names each column once");
    expect(datasetOf(r, 'executions').records_loaded).toBe(1);
  });
});

describe('a CSV header that is not the dataset\'s (item 11)', () => {
  it('a truncated header, `garbage` and 50 MB of `A` are file faults, never an empty extract; what reaches the manifest is bounded', async () => {
    const dir = root({
      'executions/a.csv': 'executed_at,execution_id,order',
      'executions/b.csv': 'garbage\n',
      'executions/c.csv': Buffer.alloc(50 * 1024 * 1024, 'A'),
    });
    const r = await load(dir, { datasets: ['executions'] });
    const lacks = (cols: readonly string[]) => `the header is not one of executions: it lacks column(s) ${cols.join(', ')}; the file holds no records`;
    const all = day.executions.header;
    expect(r.quarantine.map((q) => [q.file, q.row, q.column, q.rule, q.message])).toEqual([
      ['executions/a.csv', null, 'order_id', 'header_not_dataset', lacks(all.filter((c) => !['executed_at', 'execution_id'].includes(c)))],
      ['executions/b.csv', null, 'executed_at', 'header_not_dataset', lacks(all)],
      ['executions/c.csv', null, 'executed_at', 'header_not_dataset', lacks(all)],
    ]);
    expect(datasetOf(r, 'executions').extra_columns).toEqual(['order', 'garbage', `${'A'.repeat(128)}… (52428800 characters)`]);
  });
});

describe('documented rules enforced, and the docs\' readings (item 12)', () => {
  const cases: [dataset: string, column: string, value: string, rule: string | null][] = [
    ['executions', 'executed_at', '2026-11-02T10:00:00+18:01', 'timestamp_offset'],
    ['executions', 'executed_at', '2026-11-02T10:00:00-18:01', 'timestamp_offset'],
    ['executions', 'executed_at', '2026-11-02T10:00:00+18:00', null],
    ['executions', 'executed_at', '2026-11-02T10:00:00-18:00', null],
    ['venue_fills', 'venue_timezone', 'EST', 'timezone_unknown'],
    ['venue_fills', 'venue_timezone', 'GMT', 'timezone_unknown'],
    ['venue_fills', 'venue_timezone', 'EST5EDT', 'timezone_unknown'],
    ['venue_fills', 'venue_timezone', 'america/new_york', 'timezone_unknown'],
    ['venue_fills', 'venue_timezone', 'us/eastern', 'timezone_unknown'],
    ['venue_fills', 'venue_timezone', 'US/Eastern', null],
    ['venue_fills', 'venue_timezone', 'Asia/Kolkata', null],
    ['venue_fills', 'venue_timezone', 'Asia/Calcutta', null],
    ['venue_fills', 'venue_timezone', 'America/Port-au-Prince', null],
  ];
  it.each(cases)('%s.%s = %j → %s', async (dataset, column, value, rule) => {
    const t = withValue(day[dataset], 2, column, value);
    for (const fast of [true, false]) {
      const r = await load(root({ [`${dataset}/part-0001.csv`]: csvText(t) }), { fast, datasets: [dataset] });
      expect(entries(r)).toEqual(rule ? [{ file: `${dataset}/part-0001.csv`, row: 2, line: 3, column, rule }] : []);
    }
  });
});

describe('messages (item 13)', () => {
  it('a file whose name is not valid UTF-8 is quarantined saying so, its name shown with \\xNN', async () => {
    const dir = root({ 'executions/part-0001.csv': csvText(day.executions) });
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/executions/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from('.csv')]), csvText(day.executions));
    const r = await load(dir, { datasets: ['executions'] });
    expect(r.quarantine.map((q) => [q.file, q.rule, q.message])).toEqual([[
      'executions/bad-\\xff\\xfe.csv', 'file_name_encoding',
      'executions/bad-\\xff\\xfe.csv: the file name is not valid UTF-8, so it cannot be named in the manifest (shown here with \\xNN for the bytes that are not); it is not read — rename it to UTF-8',
    ]]);
    expect(datasetOf(r, 'executions').records_loaded).toBe(3);
  });

  it('a JSON Lines bool given 1 must be JSON true or false', async () => {
    const intent = Object.fromEntries(day.notification_intents.header.map((h, i) => [h, day.notification_intents.rows[0][i]]));
    const r = await load(root({ 'notification_intents/x.jsonl': `${JSON.stringify({ ...intent, required: 1 })}\n` }), { datasets: ['notification_intents'] });
    expect(r.quarantine.map((q) => [q.column, q.rule, q.message])).toEqual([['required', 'jsonl_type', 'column required must be JSON true or false, not the number 1']]);
  });
});
