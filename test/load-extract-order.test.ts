/**
 * Issue 21, speed of a run from PostgreSQL: the loader takes datasets in the order their database
 * extracts finish (LoadOptions.ready), and checks the timestamps and dates of text the run
 * rendered itself from typed columns by their canonical form (WrittenFile.rendered). Neither may
 * change what is loaded or quarantined: the same folder is loaded in contract order and in
 * reverse order, and PostgreSQL-rendered text (with every value PostgreSQL can print that no
 * contract form holds) with and without the rendered types; tables, counts and quarantine must be
 * identical.
 */
import { cpSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../pipeline/config/config.js';
import { DATASETS, datasetSpec } from '../pipeline/contract/datasets.js';
import { planFast, type SourceColumn } from '../pipeline/load/fast-path-sql.js';
import { hashFile } from '../pipeline/core/digest.js';
import { loadSources, type FilePath, type LoadOptions, type LoadResult } from '../pipeline/load/load.js';
import { CsvShapeScan, type WrittenFile } from '../pipeline/sources/csv-fast.js';
import { ROOT, scratchDir } from './helpers/cli.js';
import { AS_IN_A_RUN, fileDuck, openDuck, type TestDuck } from './helpers/duckdb.js';
import { generateDay } from '../pipeline/generate/day.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { csvLine } from './fixtures/hostile.js';

const tmp = scratchDir('reckon-extract-order-');
const duck = fileDuck(AS_IN_A_RUN);
const config = defaultConfig().config;
let counter = 0;
afterAll(() => tmp.cleanup());

/** Every table (typed values as text, by `_source`) and the load result, for comparing two loads. */
async function snapshot(r: LoadResult, datasets: readonly string[], conn = duck.conn): Promise<{ tables: Record<string, string[][]>; result: unknown }> {
  const tables: Record<string, string[][]> = {};
  for (const name of datasets) {
    const cols = (await conn.runAndReadAll(`SELECT column_name FROM information_schema.columns WHERE table_name = '${name}' ORDER BY ordinal_position`)).getRows().map(([n]) => String(n));
    tables[name] = (await conn.runAndReadAll(`SELECT ${cols.map((c) => `"${c}"::VARCHAR`).join(', ')} FROM "${name}" ORDER BY _source`)).getRows().map((row) => row.map((v) => (v === null ? '∅' : String(v))));
  }
  const { viewFiles: _v, ...rest } = r;
  return { tables, result: JSON.parse(JSON.stringify(rest, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))) };
}

async function load(root: string, opts: LoadOptions): Promise<LoadResult> {
  return loadSources(duck.conn, root, config, join(tmp.dir, `links-${++counter}`), opts);
}

describe('datasets load in the order their extracts finish', () => {
  const names = DATASETS.map((d) => d.name);
  /** The sample day with bad rows added to three datasets, so the quarantine spans several. */
  function root(): string {
    const dir = join(tmp.dir, 'order-root');
    cpSync(join(ROOT, 'fixtures', 'sample-day', 'sources'), dir, { recursive: true });
    const orders = ['accepted_at', 'order_id', 'order_version', 'client_order_id', 'account_id', 'instrument_id', 'side', 'ordered_qty', 'status', 'event_at', 'ingested_at'];
    writeFileSync(join(dir, 'orders', 'bad-00001.csv'), [orders, ['2026-11-02T10:00:00Z', 'ORD-X1', '0', 'C1', 'ACC-1', 'GB-BARC', 'BUY', '5', 'ACCEPTED', '2026-11-02T10:00:00Z', '2026-11-02T10:00:01Z'],
      ['2026-11-02T10:00:00', 'ORD-X2', '1', 'C2', 'ACC-1', 'GB-BARC', 'BUY', '5', 'ACCEPTED', '2026-11-02T10:00:00Z', '2026-11-02T10:00:01Z']].map(csvLine).join('\n') + '\n');
    const lines = ['statement_id', 'line_id', 'amount_minor', 'value_date', 'reference'];
    writeFileSync(join(dir, 'bank_statement_lines', 'bad-00001.csv'), [lines, ['ST-X', 'L1', '12.5', '2026-11-02', ''], ['ST-X', 'L2', '100', '2026-02-30', '']].map(csvLine).join('\n') + '\n');
    writeFileSync(join(dir, 'notification_intents', '_watermark.json'), '{"watermark": "yesterday"}\n');
    return dir;
  }

  it('gives the same tables, counts and quarantine (in contract order) whether datasets finish in contract or reverse order', async () => {
    const dir = root();
    const inContract = await load(dir, {});
    const a = await snapshot(inContract, names);
    // The last dataset is ready first; each other one once the dataset after it has started loading.
    const started: string[] = [];
    const gates = new Map(names.map((d) => { let open!: () => void; const p = new Promise<void>((r) => { open = r; }); return [d, { p, open }]; }));
    gates.get(names[names.length - 1])!.open();
    const onProgress: LoadOptions['onProgress'] = (p) => {
      if (p.stage !== 'start') return;
      started.push(p.dataset);
      setTimeout(() => gates.get(names[names.indexOf(p.dataset) - 1])?.open(), 5);
    };
    const reversed = await load(dir, { ready: (d) => gates.get(d)!.p, onProgress });
    const b = await snapshot(reversed, names);
    expect(started).toEqual([...names].reverse());
    expect(b).toEqual(a);
    expect(reversed.datasets.map((d) => d.dataset)).toEqual(names);
    expect(reversed.quarantine.map((q) => [q.dataset, q.file, q.row, q.column, q.rule])).toEqual([
      ['orders', 'orders/bad-00001.csv', 1, 'order_version', 'range_at_least_one'],
      ['orders', 'orders/bad-00001.csv', 2, 'accepted_at', 'timestamp_without_zone'],
      ['bank_statement_lines', 'bank_statement_lines/bad-00001.csv', 1, 'amount_minor', 'amount_fractional'],
      ['bank_statement_lines', 'bank_statement_lines/bad-00001.csv', 2, 'value_date', 'date_calendar'],
      ['notification_intents', 'notification_intents/_watermark.json', null, null, 'watermark_timestamp_form'],
    ]);
  });

  it('among datasets already in place, takes them in contract order', async () => {
    const started: string[] = [];
    await load(root(), { ready: async () => undefined, onProgress: (p) => { if (p.stage === 'start') started.push(p.dataset); } });
    expect(started).toEqual(names);
  });

  it('stops when an extract fails (its dataset is never loaded half)', async () => {
    const failure = new Error('the connection was lost while extracting orders');
    const ready = (d: string) => (d === 'orders' ? new Promise<void>((_r, reject) => setTimeout(() => reject(failure), 20)) : new Promise<void>(() => undefined));
    await expect(load(root(), { ready })).rejects.toBe(failure);
  });
});

describe('datasets loaded on two lanes (LoadOptions.lanes: a mid-sized day in a run)', () => {
  const names = DATASETS.map((d) => d.name);
  /** Loads `dir` into a fresh DuckDB, with a second connection as a lane when `lanes`; returns the snapshot. */
  async function loadOn(dir: string, lanes: boolean, opts: LoadOptions): Promise<{ tables: Record<string, string[][]>; result: unknown }> {
    const d: TestDuck = await openDuck(AS_IN_A_RUN);
    try {
      const lane = await d.instance.connect();
      await lane.run(`SET TimeZone = 'UTC'`);
      const r = await loadSources(d.conn, dir, config, join(tmp.dir, `links-${++counter}`), { ...opts, ...(lanes ? { lanes: [lane] } : {}) });
      lane.closeSync();
      return await snapshot(r, names, d.conn);
    } finally {
      d.close();
    }
  }

  it('gives the tables, counts and quarantine of one lane: Parquet views of many files, CSV tables, bad rows, and the delivery cache missed then hit', async () => {
    const dir = join(tmp.dir, 'lanes-day');
    await generateDay({ orders: 400, date: '2026-11-02', out: dir, seed: 'lanes', format: 'parquet', faults: true, rowsPerPart: 150 }, await loadControls());
    // CSV files with bad rows beside the Parquet ones, so the quarantine spans datasets and formats.
    const orders = ['accepted_at', 'order_id', 'order_version', 'client_order_id', 'account_id', 'instrument_id', 'side', 'ordered_qty', 'status', 'event_at', 'ingested_at'];
    writeFileSync(join(dir, 'orders', 'bad-00001.csv'), [orders, ['2026-11-02T10:00:00Z', 'ORD-X1', '0', 'C1', 'ACC-1', 'GB-BARC', 'BUY', '5', 'ACCEPTED', '2026-11-02T10:00:00Z', '2026-11-02T10:00:01Z'],
      ['2026-11-02T10:00:00', 'ORD-X2', '1', 'C2', 'ACC-1', 'GB-BARC', 'BUY', '5', 'ACCEPTED', '2026-11-02T10:00:00Z', '2026-11-02T10:00:01Z']].map(csvLine).join('\n') + '\n');
    const lines = ['statement_id', 'line_id', 'amount_minor', 'value_date', 'reference'];
    writeFileSync(join(dir, 'bank_statement_lines', 'bad-00001.csv'), [lines, ['ST-X', 'L1', '12.5', '2026-11-02', ''], ['ST-X', 'L2', '100', '2026-02-30', '']].map(csvLine).join('\n') + '\n');
    const one = await loadOn(dir, false, { views: true });
    const two = await loadOn(dir, true, { views: true });
    expect(two).toEqual(one);
    const result = one.result as { quarantine: { dataset: string; rule: string }[]; datasets: { dataset: string; files: unknown[] }[] };
    expect(result.quarantine.map((q) => [q.dataset, q.rule]).slice(0, 4)).toEqual([
      ['orders', 'range_at_least_one'], ['orders', 'timestamp_without_zone'], ['bank_statement_lines', 'amount_fractional'], ['bank_statement_lines', 'date_calendar'],
    ]);
    expect(result.datasets.find((d) => d.dataset === 'orders')!.files.length).toBeGreaterThan(2);
    // Two lanes sharing one delivery cache: the first load keeps every check, the second reads them back.
    const cache = { dir: join(tmp.dir, 'lanes-cache'), maxBytes: 1 << 30, loader: 'lanes-test' };
    const kept = await loadOn(dir, true, { views: true, cache });
    const hit = await loadOn(dir, true, { views: true, cache });
    const checked = (x: { result: unknown }) => (x.result as { datasets: { files: { checked?: string }[] }[] }).datasets.flatMap((d) => d.files.map((f) => f.checked));
    expect(checked(hit).every((c) => c === 'cache')).toBe(true);
    expect(checked(kept).every((c) => c === 'now')).toBe(true);
    expect(hit.tables).toEqual(one.tables);
    expect(kept.tables).toEqual(one.tables);
  });

  it('collapses a redelivery of records in cached Parquet files, by their kept numbers, as when every file is checked now', async () => {
    const dir = join(tmp.dir, 'dup-day');
    await generateDay({ orders: 200, date: '2026-11-02', out: dir, seed: 'dups', format: 'parquet', faults: true, rowsPerPart: 150 }, await loadControls());
    const cache = { dir: join(tmp.dir, 'dup-cache'), maxBytes: 1 << 30, loader: 'dup-test' };
    await loadOn(dir, false, { views: true, cache });
    // The next window redelivers the records of a cached file of each view dataset, in a file of
    // other bytes (so it is checked now, not found in the cache).
    const redelivered = ['orders', 'outbox_events', 'ledger_postings', 'notification_intents'];
    for (const ds of redelivered) {
      const first = readdirSync(join(dir, ds)).filter((f) => f.endsWith('.parquet')).sort()[0];
      await duck.conn.run(`COPY (SELECT * FROM read_parquet('${join(dir, ds, first)}')) TO '${join(dir, ds, 'again-00001.parquet')}' (FORMAT parquet, COMPRESSION gzip, ROW_GROUP_SIZE 64)`);
    }
    const hit = await loadOn(dir, false, { views: true, cache });
    const now = await loadOn(dir, false, { views: true });
    const files = (x: { result: unknown }) => (x.result as { datasets: { dataset: string; duplicates: number; files: { path: string; checked?: string }[] }[] }).datasets;
    const dups = (x: { result: unknown }) => Object.fromEntries(files(x).filter((d) => redelivered.includes(d.dataset)).map((d) => [d.dataset, d.duplicates]));
    expect(files(hit).flatMap((d) => d.files.filter((f) => f.checked === 'now').map((f) => f.path)).sort()).toEqual(redelivered.map((ds) => `${ds}/again-00001.parquet`).sort());
    expect(hit.tables).toEqual(now.tables);
    expect(dups(hit)).toEqual(dups(now));
    // Every record of each redelivered file is a duplicate (150 a part, fewer in a dataset's only part).
    for (const [ds, n] of Object.entries(dups(now))) expect(n, ds).toBeGreaterThanOrEqual(Math.min(150, now.tables[ds].length / 2));
  });

  it('with database extracts finishing in reverse order, and when an extract fails', async () => {
    const dir = join(tmp.dir, 'lanes-sample');
    cpSync(join(ROOT, 'fixtures', 'sample-day', 'sources'), dir, { recursive: true });
    const gates = new Map(names.map((d) => { let open!: () => void; const p = new Promise<void>((r) => { open = r; }); return [d, { p, open }]; }));
    gates.get(names[names.length - 1])!.open();
    const onProgress: LoadOptions['onProgress'] = (p) => { if (p.stage === 'start') setTimeout(() => gates.get(names[names.indexOf(p.dataset) - 1])?.open(), 5); };
    expect(await loadOn(dir, true, { ready: (d) => gates.get(d)!.p, onProgress })).toEqual(await loadOn(dir, false, {}));
    const failure = new Error('the connection was lost while extracting orders');
    const ready = (d: string) => (d === 'orders' ? new Promise<void>((_r, reject) => setTimeout(() => reject(failure), 20)) : Promise.resolve());
    await expect(loadOn(dir, true, { ready })).rejects.toBe(failure);
  });
});

describe('text rendered from typed database columns', () => {
  const ORDERS = ['accepted_at', 'order_id', 'order_version', 'client_order_id', 'account_id', 'instrument_id', 'side', 'ordered_qty', 'status', 'event_at', 'ingested_at'];
  const base = ['2026-11-02T09:30:00.5Z', 'ORD-1', '1', 'C1', 'ACC-1', 'GB-BARC', 'BUY', '1812', 'ACCEPTED', '2026-11-02T09:30:00.5Z', '2026-11-02T09:30:01Z'];
  /**
   * Timestamps as render.ts writes them from a timestamptz (PostgreSQL's output in UTC, `T` for the
   * space, `Z` for `+00`), including what no contract form holds: infinity, BC, year 10000, and
   * years below 1000 (valid, judged by the JS path), and one from a timestamp without zone.
   */
  const TIMES = ['2026-11-02T09:30:00Z', '2026-11-02T09:30:00.123456Z', '9999-12-31T23:59:59.999999Z', '1000-01-01T00:00:00Z', '0999-12-31T23:59:59.999999Z',
    '0001-01-01T00:00:00Z', 'infinity', '-infinity', '0044-03-15T12:00:00Z BC', '10000-01-01T00:00:00Z', '2026-11-02T09:30:00.5'];
  const DATES = ['2026-11-02', '0999-12-31', '0001-01-01', '9999-12-31', 'infinity', '-infinity', '0044-03-15 BC', '10000-01-01'];
  const rendered: Record<string, Record<string, string>> = {
    orders: { accepted_at: 'timestamptz', order_id: 'text', order_version: 'int8', client_order_id: 'text', account_id: 'text', instrument_id: 'text', side: 'text', ordered_qty: 'numeric', status: 'text', event_at: 'timestamptz', ingested_at: 'timestamptz' },
    bank_statement_lines: { statement_id: 'text', line_id: 'text', amount_minor: 'numeric', value_date: 'date', reference: 'text' },
  };

  function root(): string {
    const dir = join(tmp.dir, `rendered-${++counter}`);
    const rows: string[][] = [];
    for (const [i, t] of TIMES.entries()) {
      for (const col of ['accepted_at', 'event_at', 'ingested_at']) {
        const r = [...base];
        r[ORDERS.indexOf('order_id')] = `ORD-${col}-${i}`;
        r[ORDERS.indexOf(col)] = t;
        rows.push(r);
      }
    }
    mkdirSync(join(dir, 'orders'), { recursive: true });
    writeFileSync(join(dir, 'orders', 'extract.csv'), [ORDERS, ...rows].map(csvLine).join('\n') + '\n');
    mkdirSync(join(dir, 'bank_statement_lines'), { recursive: true });
    const lines = DATES.map((d, i) => ['ST-1', `L${i}`, '100', d, '']);
    writeFileSync(join(dir, 'bank_statement_lines', 'extract.csv'), [['statement_id', 'line_id', 'amount_minor', 'value_date', 'reference'], ...lines].map(csvLine).join('\n') + '\n');
    return dir;
  }

  async function written(dir: string): Promise<Map<string, WrittenFile>> {
    const m = new Map<string, WrittenFile>();
    for (const d of Object.keys(rendered)) {
      const path = realpathSync(join(dir, d, 'extract.csv'));
      const scan = new CsvShapeScan();
      const h = await hashFile(path, (b) => scan.chunk(b));
      m.set(path, { sha256: h.sha256, size: h.size, shape: scan.result(), rendered: rendered[d] });
    }
    return m;
  }

  it('checks a rendered timestamptz or date by its pattern and range instead of the regular expression, and nothing else', () => {
    const plan = (types: Record<string, string> | undefined) => {
      const spec = datasetSpec('orders');
      const sources = new Map<string, SourceColumn>(spec.columns.map((c, i) => [c.name, { type: 'VARCHAR', ref: `s.c${i}`, rendered: types?.[c.name] }]));
      const p = planFast(spec, sources, 'csv', 'HALF_EVEN');
      if ('reason' in p) throw new Error(p.reason);
      return p;
    };
    const text = plan(undefined);
    const typed = plan(rendered.orders);
    const count = (s: string, what: string) => s.split(what).length - 1;
    expect([count(text.inner, 'regexp_full_match'), count(typed.inner, 'regexp_full_match')]).toEqual([5, 2]);
    expect(count(typed.inner, `LIKE '____-__-__T__:__:__%Z'`)).toBe(3);
    expect(typed.values).toEqual(text.values);
    expect(typed.outer).toEqual(text.outer);
    // A timestamp column rendered from a timestamp without zone keeps the text check (it is rejected there).
    expect(count(plan({ accepted_at: 'timestamp' }).inner, 'regexp_full_match')).toBe(5);
  });

  it('loads and quarantines exactly what the text checks do, on the fast path', async () => {
    const dir = root();
    const datasets = Object.keys(rendered);
    const paths: FilePath[] = [];
    const plain = await load(dir, { datasets });
    const a = await snapshot(plain, datasets);
    const typed = await load(dir, { datasets, written: await written(dir), onFile: (f) => paths.push(f) });
    const b = await snapshot(typed, datasets);
    expect(b).toEqual(a);
    expect(paths.map((f) => [f.path, f.loadedBy, f.sqlRecords])).toEqual([['orders/extract.csv', 'fast', 12], ['bank_statement_lines/extract.csv', 'fast', 2]]);
    expect(typed.datasets.find((d) => d.dataset === 'orders')!.records_loaded).toBe(18);
    expect(typed.quarantine.map((q) => [q.dataset, q.row, q.column, q.rule])).toEqual([
      ...[7, 8, 9, 10].flatMap((k) => ['accepted_at', 'event_at', 'ingested_at'].map((c, j) => ['orders', (k - 1) * 3 + j + 1, c, 'timestamp_form'])),
      ...['accepted_at', 'event_at', 'ingested_at'].map((c, j) => ['orders', 10 * 3 + j + 1, c, 'timestamp_without_zone']),
      ...[5, 6, 7, 8].map((row) => ['bank_statement_lines', row, 'value_date', 'date_form']),
    ]);
  });
});
