/**
 * Issue 20: the delivery cache (pipeline/load/delivery-cache.ts). A file's check is kept by
 * content and read back by later runs; the results must not depend on it. Runs go through the
 * real CLI (in process, or spawned for the concurrent pair) on the bundled sample day plus files
 * with quarantined records (plain CSV handed back to JS, a Parquet file of a view dataset with
 * records the SQL hands back, one JS accepts and one it quarantines), a duplicate delivery across
 * files and an extra column, so every part of a kept check is exercised.
 */
import { cpSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadResult } from '../pipeline/load/load.js';
import { treeDigest } from '../pipeline/core/tree-digest.js';
import { rawEnd, writeKeptRows } from '../pipeline/load/cached-load.js';
import { SAMPLE_DAY } from './fixtures/days.js';
import { AS_IN_A_RUN, loadDefault, withDuck } from './helpers/duckdb.js';
import { reckon, reckonIn, reckonSpawned, scratchDir, type CliResult } from './helpers/cli.js';

const tmp = scratchDir('reckon-cache-test-');
const SOURCES = join(tmp.dir, 'sources');
const DATE = '2026-11-02';

beforeAll(async () => {
  cpSync(SAMPLE_DAY, SOURCES, { recursive: true });
  const orders = readFileSync(join(SOURCES, 'orders', 'part-00001.csv'), 'utf8').split('\n');
  // Plain CSV (the fast path), an extra column, bad records handed back to JS, a duplicate delivery.
  writeFileSync(join(SOURCES, 'orders', 'late-00001.csv'), [
    `${orders[0]},note`,
    `${orders[1]},again`,
    '2026-11-02T10:00:00Z,ORD-X1,1,C-X1,ACC-000001,LU-FUND,BUY,-5,ACCEPTED,2026-11-02T10:00:00Z,2026-11-02T10:00:01Z,bad qty',
    '2026-11-02T10:00:00,ORD-X2,1,C-X2,ACC-000001,LU-FUND,BUY,5,ACCEPTED,2026-11-02T10:00:00Z,2026-11-02T10:00:01Z,no zone',
  ].join('\n') + '\n');
  // A Parquet file of a view dataset: one record the SQL hands back and JS accepts (a non-ASCII
  // id), one JS quarantines (an id with a leading space), one taken by the SQL.
  await withDuck((conn) => conn.run(`COPY (SELECT * FROM (VALUES
      (TIMESTAMPTZ '2026-11-02 09:00:00+00', 'INT-ÄX1', 'ORD-000001', 'fill-v3', 'EMAIL', true, TIMESTAMPTZ '2026-11-03 09:00:00+00'),
      (TIMESTAMPTZ '2026-11-02 09:00:00+00', ' INT-X2', 'ORD-000001', 'fill-v3', 'EMAIL', true, TIMESTAMPTZ '2026-11-03 09:00:00+00'),
      (TIMESTAMPTZ '2026-11-02 09:00:00+00', 'INT-X3', 'ORD-000001', 'fill-v3', 'SMS', false, TIMESTAMPTZ '2026-11-03 09:00:00+00'))
    t(created_at, intent_id, authority_ref, template_version, channel, required, expires_at))
    TO '${join(SOURCES, 'notification_intents', 'extra-00001.parquet')}' (FORMAT parquet)`));
});
afterAll(() => tmp.cleanup());

/**
 * The results cache of the cache folder emptied: a run that found its evaluation there would skip
 * the load (results-cache.ts), and these runs are about what the load reads from the delivery cache.
 */
const forgetResults = (cacheDir: string | undefined) => { if (cacheDir) rmSync(join(cacheDir, 'results'), { recursive: true, force: true }); };

/** One run of the sample day with these settings (the results cache emptied first); returns the CLI result and the manifest. */
async function run(name: string, env: Record<string, string>, extra: string[] = [], sources = SOURCES): Promise<{ cli: CliResult; manifest: any }> {
  forgetResults(env.RECKON_CACHE_DIR);
  const cli = await reckonIn(['run', '--date', DATE, '--sources', sources, '--store', join(tmp.dir, `store-${name}`), '--json', '--quiet', ...extra], { env });
  expect(cli.json?.manifest, cli.stderr).toBeDefined();
  return { cli, manifest: JSON.parse(readFileSync(cli.json.manifest.path, 'utf8')) };
}

const objects = (m: any) => Object.values(m.sources.datasets).flatMap((d: any) => d.objects) as any[];
const checkedBy = (m: any) => Object.fromEntries(objects(m).map((o) => [o.path, o.checked]));
/** What a run read, without how (checked now or from the cache) and without the cache's own note. */
function reading(m: any) {
  const datasets = Object.fromEntries(Object.entries(m.sources.datasets).map(([k, d]: [string, any]) => [k, {
    ...d, objects: d.objects.map(({ checked: _c, cache_refused: _r, ...o }: any) => o),
  }]));
  return { datasets, quarantine: m.quarantine, cutoff_mappings: m.cutoff_mappings, notes: m.notes.filter((n: string) => !/^(delivery|results) cache/.test(n)), results: m.results };
}

describe('the delivery cache', () => {
  const cacheDir = join(tmp.dir, 'cache');
  let off: { cli: CliResult; manifest: any };
  let miss: { cli: CliResult; manifest: any };
  let hit: { cli: CliResult; manifest: any };

  beforeAll(async () => {
    off = await run('off', { RECKON_CACHE: 'off' });
    miss = await run('miss', { RECKON_CACHE_DIR: cacheDir });
    hit = await run('hit', { RECKON_CACHE_DIR: cacheDir });
  });

  it('gives byte-identical results digests and quarantine entries on a miss and on a hit', () => {
    expect(off.cli.code).toBe(3);
    expect(off.manifest.quarantine.count).toBe(3);
    expect(off.manifest.quarantine.entries.map((e: any) => [e.file, e.row, e.rule])).toEqual([
      ['orders/late-00001.csv', 2, 'range_positive'], ['orders/late-00001.csv', 3, 'timestamp_without_zone'], ['notification_intents/extra-00001.parquet', 2, 'id_whitespace'],
    ]);
    expect(new Set(Object.values(checkedBy(off.manifest)))).toEqual(new Set(['now']));
    expect(new Set(Object.values(checkedBy(miss.manifest)))).toEqual(new Set(['now']));
    expect(new Set(Object.values(checkedBy(hit.manifest)))).toEqual(new Set(['cache']));
    for (const r of [miss, hit]) {
      expect(r.cli.json.results_digest).toBe(off.cli.json.results_digest);
      expect(JSON.stringify(r.manifest.quarantine)).toBe(JSON.stringify(off.manifest.quarantine));
      expect(reading(r.manifest)).toEqual(reading(off.manifest));
    }
    // What the hit read beside the checks: duplicate deliveries (one across files), the extra column.
    const d = hit.manifest.sources.datasets;
    expect([d.orders.duplicates > 0, d.orders.extra_columns]).toEqual([true, ['note']]);
    expect(d.notification_intents.objects.find((o: any) => o.path.endsWith('extra-00001.parquet'))).toMatchObject({ rows: 3, loaded: 2, quarantined: 1 });
    expect(hit.manifest.notes).toContain(`delivery cache: ${objects(hit.manifest).length} of ${objects(hit.manifest).length} objects read from their earlier check (same bytes, code and rules)`);
    expect(hit.manifest.cutoff_mappings.length).toBeGreaterThan(0);
  });

  it('keeps each file\'s own records, taken from the raw table its dataset\'s files share', async () => {
    const entries = join(cacheDir, 'entries');
    const orders = readdirSync(entries).map((k) => ({ k, body: JSON.parse(readFileSync(join(entries, k, 'entry.json'), 'utf8')).body }))
      .filter((e) => e.body.key_parts.file.dataset === 'orders');
    const kept = await withDuck(async (conn) => Promise.all(orders.map(async (e) => [e.body.kind, e.body.records, e.body.loaded, e.body.rowCount, ...(await conn.runAndReadAll(
      `SELECT count(*)::INTEGER, count(DISTINCT __row)::INTEGER, min(__row)::INTEGER, max(__row)::INTEGER, string_agg(order_id, ',' ORDER BY __row) FILTER (WHERE __row <= 2) FROM read_parquet('${join(entries, e.k, 'rows.parquet')}')`,
    )).getRows()[0]])));
    // Sorted by records: redelivery-00001.csv, late-00001.csv (two of its three quarantined), part-00001.csv.
    expect(kept.sort((x, y) => Number(x[1]) - Number(y[1]))).toEqual([
      ['table', 1, 1, 1, 1, 1, 1, 1, 'ORD-000038'],
      ['table', 3, 1, 1, 1, 1, 1, 1, 'ORD-000001'],
      ['table', 1018, 1018, 1018, 1018, 1018, 1, 1018, 'ORD-000001,ORD-000001'],
    ]);
  });

  it('gives the same results when new deliveries join files read from the cache (both in one table dataset)', async () => {
    // The next window: executions gain a file with a new record and a redelivery of a cached one
    // (a duplicate across a checked and a cached file), receipts a file with a new receipt.
    const later = join(tmp.dir, 'sources-later');
    cpSync(SOURCES, later, { recursive: true });
    const exec = readFileSync(join(SOURCES, 'executions', 'part-00001.jsonl'), 'utf8').split('\n');
    writeFileSync(join(later, 'executions', 'late-00001.jsonl'), `${exec[0]}\n${exec[1].replace('EXE-000001-2', 'EXE-LATE-1').replace('VF-000001-2', 'VF-LATE-1')}\n`);
    const receipts = readFileSync(join(SOURCES, 'notification_receipts', 'part-00001.csv'), 'utf8').split('\n');
    writeFileSync(join(later, 'notification_receipts', 'late-00001.csv'), `${receipts[0]}\n${receipts[1].replace('RCP-000001-1', 'RCP-LATE-1')}\n`);
    const offLater = await run('later-off', { RECKON_CACHE: 'off' }, [], later);
    const mixed = await run('later-mixed', { RECKON_CACHE_DIR: cacheDir }, [], later);
    const late = ['executions/late-00001.jsonl', 'notification_receipts/late-00001.csv'];
    expect(Object.entries(checkedBy(mixed.manifest)).filter(([, c]) => c === 'now').map(([p]) => p).sort()).toEqual(late);
    expect(mixed.cli.json.results_digest).toBe(offLater.cli.json.results_digest);
    expect(JSON.stringify(mixed.manifest.quarantine)).toBe(JSON.stringify(offLater.manifest.quarantine));
    expect(reading(mixed.manifest)).toEqual(reading(offLater.manifest));
    const d = mixed.manifest.sources.datasets;
    expect([d.executions.duplicates, d.executions.records_loaded - hit.manifest.sources.datasets.executions.records_loaded]).toEqual([1, 1]);
    expect(d.notification_receipts.records_loaded - hit.manifest.sources.datasets.notification_receipts.records_loaded).toBe(1);
  });

  it('detects an edited entry, checks the file again, reports it, and replaces the entry', async () => {
    const entries = join(cacheDir, 'entries');
    const bodies = readdirSync(entries).map((k) => ({ k, doc: JSON.parse(readFileSync(join(entries, k, 'entry.json'), 'utf8')) }));
    // One entry's typed records rewritten (same size, one byte changed), another's body edited without its digest.
    const rowsEntry = bodies.find((b) => b.doc.body.data.rows && b.doc.body.key_parts.file.dataset === 'orders' && b.doc.body.entries.length > 0)!;
    const rowsFile = join(entries, rowsEntry.k, 'rows.parquet');
    const bytes = readFileSync(rowsFile);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    writeFileSync(rowsFile, bytes);
    const bodyEntry = bodies.find((b) => b.doc.body.key_parts.file.dataset === 'notification_intents' && b.doc.body.kind === 'view' && b.doc.body.entries.length > 0)!;
    bodyEntry.doc.body.entries = [];
    writeFileSync(join(entries, bodyEntry.k, 'entry.json'), JSON.stringify(bodyEntry.doc));

    const edited = await run('edited', { RECKON_CACHE_DIR: cacheDir });
    expect(edited.cli.json.results_digest).toBe(off.cli.json.results_digest);
    expect(JSON.stringify(edited.manifest.quarantine)).toBe(JSON.stringify(off.manifest.quarantine));
    const refused = objects(edited.manifest).filter((o) => o.cache_refused).map((o) => [o.path, o.checked, o.cache_refused.replace(/\(SHA-256 .*\)/, '(…)')]);
    expect(refused, JSON.stringify(refused)).toEqual([
      ['notification_intents/extra-00001.parquet', 'now', 'entry.json does not match its own SHA-256'],
      ['orders/late-00001.csv', 'now', 'rows.parquet differs from its entry (…)'],
    ]);
    expect(edited.manifest.notes).toContain('delivery cache: the entry of orders/late-00001.csv was refused (' + objects(edited.manifest).find((o) => o.path === 'orders/late-00001.csv').cache_refused + '); the object was checked again');
    expect(edited.cli.stderr).toMatch(/delivery cache entry of orders\/late-00001.csv refused and the file checked again/);
    // The refused entries were replaced by fresh ones: the next run reads every object from the cache.
    const again = await run('again', { RECKON_CACHE_DIR: cacheDir });
    expect(new Set(Object.values(checkedBy(again.manifest)))).toEqual(new Set(['cache']));
    expect(again.cli.json.results_digest).toBe(off.cli.json.results_digest);
  });

  it('misses when the rounding mode changes (every object is checked again under the new rules)', async () => {
    const config = join(tmp.dir, 'half-up.json');
    writeFileSync(config, JSON.stringify({ rounding_mode: 'HALF_UP' }));
    const halfUp = await run('half-up', { RECKON_CACHE_DIR: cacheDir }, ['--config', config]);
    expect(new Set(Object.values(checkedBy(halfUp.manifest)))).toEqual(new Set(['now']));
    const again = await run('half-up-again', { RECKON_CACHE_DIR: cacheDir }, ['--config', config]);
    expect(new Set(Object.values(checkedBy(again.manifest)))).toEqual(new Set(['cache']));
    expect(again.cli.json.results_digest).toBe(halfUp.cli.json.results_digest);
  });
});

describe('the delivery cache shared by two runs at once', () => {
  it('is not corrupted: both runs agree, and a third reads every object from it', async () => {
    const cacheDir = join(tmp.dir, 'shared-cache');
    const both = await Promise.all(['a', 'b'].map((name) => reckonSpawned(['run', '--date', DATE, '--sources', SOURCES, '--store', join(tmp.dir, `store-concurrent-${name}`), '--json', '--quiet'], { env: { RECKON_CACHE_DIR: cacheDir } })));
    const digests = both.map((r) => { expect(r.code, r.err).toBe(3); return JSON.parse(r.out).results_digest; });
    expect(digests[0]).toBe(digests[1]);
    // Spawned too: the CLI from dist/ has another loader digest than the code vitest runs.
    forgetResults(cacheDir);
    const third = reckon(['run', '--date', DATE, '--sources', SOURCES, '--store', join(tmp.dir, 'store-concurrent-c'), '--json', '--quiet'], { env: { RECKON_CACHE_DIR: cacheDir } });
    expect(third.json.results_digest).toBe(digests[0]);
    expect(objects(JSON.parse(readFileSync(third.json.manifest.path, 'utf8'))).filter((o) => o.checked !== 'cache' || o.cache_refused)).toEqual([]);
    // Nothing left half written: every entry is a folder with its body, nothing in tmp/.
    for (const k of readdirSync(join(cacheDir, 'entries'))) expect(statSync(join(cacheDir, 'entries', k, 'entry.json')).isFile()).toBe(true);
    expect(readdirSync(join(cacheDir, 'tmp'))).toEqual([]);
  });
});

describe('the records kept of a file (cached-load.ts writeKeptRows)', () => {
  it('are the raw table\'s rows from its end before the file on, deleted rows skipped, and none kept when their count is not the file\'s', async () => {
    const out = join(tmp.dir, 'kept-rows.parquet');
    await withDuck(async (conn) => {
      await conn.run(`CREATE TABLE r (v INTEGER, _source VARCHAR)`);
      await conn.run(`INSERT INTO r SELECT range, 'a.csv:' || lpad(range::VARCHAR, 12, '0') FROM range(1, 5)`);
      expect(await rawEnd(conn, 'r')).toBe(4);
      // A fast path that undid its insert (rowids 4-6, deleted), then the JS reader's rows (7-9).
      await conn.run(`INSERT INTO r SELECT range, 'b.csv:' || lpad(range::VARCHAR, 12, '0') FROM range(1, 4)`);
      await conn.run(`DELETE FROM r WHERE _source LIKE 'b.csv:%'`);
      await conn.run(`INSERT INTO r SELECT 10 * range, 'b.csv:' || lpad(range::VARCHAR, 12, '0') FROM range(1, 4)`);
      expect(await writeKeptRows(conn, 'r', 4, 3, out)).toBe(3);
      expect((await conn.runAndReadAll(`SELECT v, __row FROM read_parquet('${out}') ORDER BY __row`)).getRows()).toEqual([[10, 1n], [20, 2n], [30, 3n]]);
      // Past the last live row, not the live count (7), which lies inside b.csv's rows.
      expect(await rawEnd(conn, 'r')).toBe(10);
      await conn.run(`INSERT INTO r VALUES (100, 'c.csv:000000000001')`);
      expect(await writeKeptRows(conn, 'r', 10, 1, out)).toBe(1);
      expect((await conn.runAndReadAll(`SELECT v, __row FROM read_parquet('${out}')`)).getRows()).toEqual([[100, 1n]]);
      // From 9 on, b.csv's last row would be taken too: the count tells, and nothing is kept.
      expect(await writeKeptRows(conn, 'r', 9, 1, out)).toBeUndefined();
      expect(existsSync(out)).toBe(false);
      expect(await writeKeptRows(conn, 'r', await rawEnd(conn, 'r'), 0, out)).toBe(0);
      expect(existsSync(out)).toBe(false);
    });
  });
});

describe('the delivery cache key and bound', () => {
  async function load(cache: { dir: string; maxBytes: number; loader?: string }): Promise<LoadResult> {
    return withDuck((conn) => loadDefault(conn, SOURCES, join(tmp.dir, `links-${Math.random().toString(36).slice(2)}`), { views: true, cache, datasets: ['orders', 'executions', 'notification_intents'] }), AS_IN_A_RUN);
  }
  const how = (l: LoadResult) => l.datasets.flatMap((d) => d.files.map((f) => f.checked));

  it('misses when the loader version changes', async () => {
    const dir = join(tmp.dir, 'loader-cache');
    expect(new Set(how(await load({ dir, maxBytes: 1e9, loader: 'v-a' })))).toEqual(new Set(['now']));
    expect(new Set(how(await load({ dir, maxBytes: 1e9, loader: 'v-a' })))).toEqual(new Set(['cache']));
    expect(new Set(how(await load({ dir, maxBytes: 1e9, loader: 'v-b' })))).toEqual(new Set(['now']));
  });

  it('stays within its size bound, removing the least recently used entries', async () => {
    const dir = join(tmp.dir, 'small-cache');
    const bound = 12_000;
    await load({ dir, maxBytes: bound, loader: 'v-a' });
    const sizes = readdirSync(join(dir, 'entries')).map((k) => readdirSync(join(dir, 'entries', k)).reduce((a, f) => a + statSync(join(dir, 'entries', k, f)).size, 0));
    expect(sizes.length).toBeGreaterThan(0);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(bound);
    // What was kept is still read back, the rest checked again.
    expect(how(await load({ dir, maxBytes: bound, loader: 'v-a' }))).toContain('cache');
  });

  it('keeps a file whose change time alone moved while it was checked (another run linked it), not one rewritten in place under its old modification time', async () => {
    const src = join(tmp.dir, 'sources-relinked');
    cpSync(SOURCES, src, { recursive: true });
    const orders = join(src, 'orders', 'part-00001.csv');
    const original = readFileSync(orders);
    const reset = () => utimesSync(orders, 1e9, 1e9);
    reset();
    const target = 'orders/part-00001.csv';
    // Called once the file's records are read, before what to keep is decided.
    const during = (edit: boolean) => (info: { path: string }) => {
      if (info.path !== target) return;
      if (!edit) { linkSync(orders, join(tmp.dir, 'relinked.lnk')); unlinkSync(join(tmp.dir, 'relinked.lnk')); return; }
      writeFileSync(orders, original.toString('latin1').replace(/ORD-000001/, 'ORD-00000X'), 'latin1');
      reset();
    };
    const load = (dir: string, onFile?: (info: { path: string }) => void) => withDuck((conn) => loadDefault(conn, src, join(tmp.dir, `links-${Math.random().toString(36).slice(2)}`), { views: true, cache: { dir, maxBytes: 1e9, loader: 'v-a' }, datasets: ['orders'], onFile }), AS_IN_A_RUN);
    const checkedOf = (l: LoadResult) => l.datasets[0].files.find((f) => f.path === target)?.checked;
    expect(checkedOf(await load(join(tmp.dir, 'relinked-cache'), during(false)))).toBe('now');
    expect(statSync(orders).mtimeMs).toBe(1e12);
    expect(checkedOf(await load(join(tmp.dir, 'relinked-cache')))).toBe('cache');
    // Rewritten while checked, same size and modification time: nothing kept under the old digest.
    expect(checkedOf(await load(join(tmp.dir, 'rewritten-cache'), during(true)))).toBe('now');
    writeFileSync(orders, original);
    reset();
    expect(checkedOf(await load(join(tmp.dir, 'rewritten-cache')))).toBe('now');
  });

  it('the loader digest follows the code: an edited file changes it, the memo is only a shortcut', async () => {
    const tree = join(tmp.dir, 'tree');
    mkdirSync(tree, { recursive: true });
    writeFileSync(join(tree, 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(tree, 'b.ts'), 'export const b = 2;\n');
    const spec = [{ dir: tree, include: (p: string) => p.endsWith('.ts') }];
    const memo = join(tmp.dir, 'tree-memo.json');
    const first = await treeDigest(tree, spec, memo);
    expect(await treeDigest(tree, spec, memo)).toBe(first);
    writeFileSync(join(tree, 'b.ts'), 'export const b = 3;\n');
    const second = await treeDigest(tree, spec, memo);
    expect(second).not.toBe(first);
    expect(await treeDigest(tree, spec, join(tmp.dir, 'no-memo.json'))).toBe(second);
  });
});
