/**
 * Issue 20: the results cache (pipeline/run/results-cache.ts). A run whose evaluation key equals
 * an earlier run's reuses that evaluation instead of running the control SQL; everything it
 * reports must be what evaluating would have given. Runs go through the real CLI (in process, or
 * spawned for the concurrent pair) on a copy of the bundled sample day, with real DuckDB, real
 * files and the published Parquet outputs read back.
 */
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DAY } from './fixtures/days.js';
import { withDuck } from './helpers/duckdb.js';
import { reckon, reckonIn, reckonSpawned, scratchDir, type CliResult } from './helpers/cli.js';

const tmp = scratchDir('reckon-results-cache-test-');
const SOURCES = join(tmp.dir, 'sources');
const CHANGED = join(tmp.dir, 'sources-changed');
const DATE = '2026-11-02';

beforeAll(() => {
  cpSync(SAMPLE_DAY, SOURCES, { recursive: true });
  cpSync(SAMPLE_DAY, CHANGED, { recursive: true });
  // One input file changed: its last order's quantity (a new SHA-256, other totals).
  const file = join(CHANGED, 'orders', 'part-00001.csv');
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const last = lines[lines.length - 1].split(',');
  last[7] = String(Number(last[7]) + 1);
  lines[lines.length - 1] = last.join(',');
  writeFileSync(file, `${lines.join('\n')}\n`);
});
afterAll(() => tmp.cleanup());

interface Run { cli: CliResult; manifest: any }
let stores = 0;

/** One run into a fresh store with these settings; returns the CLI result and the manifest. */
async function run(env: Record<string, string>, extra: string[] = [], sources = SOURCES): Promise<Run> {
  const when = extra.includes('--window') ? [] : ['--date', DATE];
  const cli = await reckonIn(['run', ...when, '--sources', sources, '--store', join(tmp.dir, `store-${++stores}`), '--json', '--quiet', ...extra], { env });
  expect(cli.json?.manifest, cli.stderr).toBeDefined();
  return { cli, manifest: JSON.parse(readFileSync(cli.json.manifest.path, 'utf8')) };
}

/** A run with the cache off, then, on the cache of `env`, a miss and a hit (in that order: the hit reuses the miss's entry). */
async function offMissHit(env: Record<string, string>, sources: string): Promise<{ off: Run; miss: Run; hit: Run }> {
  const off = await run({ RECKON_CACHE: 'off' }, [], sources);
  const miss = await run(env, [], sources);
  return { off, miss, hit: await run(env, [], sources) };
}

/** `--json`'s controls without the next steps (they name the run's store). */
const controlsJson = (r: Run) => JSON.stringify(r.cli.json.controls, (k, v: unknown) => (k === 'next' ? undefined : v));
const evaluated = (r: Run) => new Set(Object.values(r.manifest.evaluation).map((e: any) => e.evaluated));

/** The rows of the run's published outputs without what names the run (its id and start), as JSON text per table. */
async function outputRows(r: Run): Promise<Record<string, string>> {
  const store = r.cli.json.manifest.path.replace(/\/manifests\/[^/]+$/, '');
  const out: Record<string, string> = {};
  await withDuck(async (conn) => {
    for (const o of r.manifest.outputs.filter((x: any) => ['control_totals', 'differences', 'difference_records', 'quarantine', 'runs'].includes(x.table))) {
      const rows = (await conn.runAndReadAll(`SELECT * EXCLUDE (run_id${o.table === 'runs' ? ', started_at' : ''}) FROM read_parquet('${join(store, o.key)}', hive_partitioning = false)`)).getRowObjectsJson();
      out[o.table] = JSON.stringify(rows);
    }
  });
  return out;
}

describe('the results cache', () => {
  const cacheDir = join(tmp.dir, 'cache');
  const env = { RECKON_CACHE_DIR: cacheDir };
  let off: Run;
  let miss: Run;
  let hit: Run;

  beforeAll(async () => {
    ({ off, miss, hit } = await offMissHit(env, SOURCES));
  });

  it('gives byte-identical results digests, totals, differences and outputs on a miss and on a hit', async () => {
    expect(off.cli.json.results_digest).toBe('fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3');
    const ids = ['RC01', 'RC02', 'RC03', 'RC04', 'RC05', 'RC06'];
    expect(off.manifest.evaluation).toEqual(Object.fromEntries(ids.map((id) => [id, { evaluated: 'now', entry: null, first_run: off.manifest.run_id }])));
    const entry = miss.manifest.evaluation.RC01.entry;
    expect(entry).toMatch(/^[0-9a-f]{64}$/);
    expect(miss.manifest.evaluation).toEqual(Object.fromEntries(ids.map((id) => [id, { evaluated: 'now', entry, first_run: miss.manifest.run_id }])));
    expect(hit.manifest.evaluation).toEqual(Object.fromEntries(ids.map((id) => [id, { evaluated: 'reused', entry, first_run: miss.manifest.run_id }])));
    expect(hit.manifest.notes).toContain(`results cache: the evaluation of ${ids.join(', ')} reused from run ${miss.manifest.run_id} (results entry ${entry}: same code, configuration, window and inputs); statuses, breaks and outputs computed by this run`);
    const offRows = await outputRows(off);
    expect(Object.keys(offRows).sort()).toEqual(['control_totals', 'difference_records', 'differences', 'quarantine', 'runs']);
    for (const r of [miss, hit]) {
      expect(r.cli.json.results_digest).toBe(off.cli.json.results_digest);
      expect(JSON.stringify(r.manifest.results)).toBe(JSON.stringify(off.manifest.results));
      expect(controlsJson(r)).toBe(controlsJson(off));
      expect(r.manifest.notes.filter((n: string) => !/^(delivery|results) cache/.test(n))).toEqual(off.manifest.notes);
      expect(await outputRows(r)).toEqual(offRows);
      expect(r.cli.code).toBe(off.cli.code);
    }
    // The hit ran no control SQL: its per-control records timing is zero.
    expect(hit.manifest.timings_ms.control_rc03_records_ms).toBe(0);
    expect(miss.manifest.timings_ms.control_rc03_records_ms).toBeGreaterThan(0);
  });

  it('detects an edited entry, evaluates again, reports it, and replaces the entry', async () => {
    const entries = join(cacheDir, 'results', 'entries');
    const [key] = readdirSync(entries);
    const file = join(entries, key, 'difference_records.parquet');
    const bytes = readFileSync(file);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    writeFileSync(file, bytes);
    const edited = await run(env);
    expect(edited.cli.json.results_digest).toBe(off.cli.json.results_digest);
    const why = edited.manifest.evaluation.RC01.refused as string;
    expect(why.replace(/\(SHA-256 .*\)/, '(…)')).toBe('difference_records.parquet differs from its entry (…)');
    expect(edited.manifest.evaluation.RC01).toEqual({ evaluated: 'now', entry: key, first_run: edited.manifest.run_id, refused: why });
    expect(edited.manifest.notes).toContain(`results cache: the results entry ${key} was refused (${why}); the controls were evaluated again`);
    expect(edited.cli.stderr).toMatch(/results cache entry [0-9a-f]{12}… refused and the controls evaluated again: difference_records.parquet differs/);
    expect(await outputRows(edited)).toEqual(await outputRows(off));
    // The entry was replaced by the edited run's own: the next run reuses that one.
    const again = await run(env);
    expect(again.manifest.evaluation.RC01).toEqual({ evaluated: 'reused', entry: key, first_run: edited.manifest.run_id });
    expect(again.cli.json.results_digest).toBe(off.cli.json.results_digest);
    // An edited body (evaluation.json is covered by the body's digest of its data files) is refused too.
    const doc = JSON.parse(readFileSync(join(entries, key, 'entry.json'), 'utf8'));
    doc.body.first_run = 'run-forged';
    writeFileSync(join(entries, key, 'entry.json'), JSON.stringify(doc));
    const forged = await run(env);
    expect(forged.manifest.evaluation.RC01).toMatchObject({ evaluated: 'now', refused: 'entry.json does not match its own SHA-256' });
    expect(forged.cli.json.results_digest).toBe(off.cli.json.results_digest);
  });

  it('refuses, reports and replaces an entry one of whose data files was deleted (not a silent miss forever)', async () => {
    const entries = join(cacheDir, 'results', 'entries');
    const [key] = readdirSync(entries);
    rmSync(join(entries, key, 'difference_records.parquet'));
    const deleted = await run(env);
    expect(deleted.cli.json.results_digest).toBe(off.cli.json.results_digest);
    expect(deleted.manifest.evaluation.RC01).toEqual({ evaluated: 'now', entry: key, first_run: deleted.manifest.run_id, refused: 'difference_records.parquet is missing from its entry' });
    expect(deleted.cli.stderr).toMatch(/results cache entry [0-9a-f]{12}… refused and the controls evaluated again: difference_records.parquet is missing from its entry/);
    expect(await outputRows(deleted)).toEqual(await outputRows(off));
    const again = await run(env);
    expect(again.manifest.evaluation.RC01).toEqual({ evaluated: 'reused', entry: key, first_run: deleted.manifest.run_id });
    expect(again.cli.json.results_digest).toBe(off.cli.json.results_digest);
  });

  it('misses when an input file, a control param, the rounding mode, the window or the code changes', async () => {
    const entry = hit.manifest.evaluation.RC01.entry;
    const changed = await run(env, [], CHANGED);
    expect(evaluated(changed)).toEqual(new Set(['now']));
    expect(changed.cli.json.results_digest).not.toBe(off.cli.json.results_digest);
    const param = join(tmp.dir, 'param.json');
    writeFileSync(param, JSON.stringify({ controls: { RC05: { params: { stale_sla_s: 301 } } } }));
    const halfUp = join(tmp.dir, 'half-up.json');
    writeFileSync(halfUp, JSON.stringify({ rounding_mode: 'HALF_UP' }));
    const keys = new Set([entry, changed.manifest.evaluation.RC01.entry]);
    for (const extra of [['--config', param], ['--config', halfUp], ['--window', '2026-11-02T00:00:00Z/2026-11-02T23:00:00Z']]) {
      const r = await run(env, extra);
      expect(evaluated(r), extra.join(' ')).toEqual(new Set(['now']));
      keys.add(r.manifest.evaluation.RC01.entry);
      // Evaluated under that change, then reused by the same run again.
      const again = await run(env, extra);
      expect(evaluated(again), extra.join(' ')).toEqual(new Set(['reused']));
      expect(again.cli.json.results_digest).toBe(r.cli.json.results_digest);
    }
    // Other code: the CLI from dist/ (compiled JS) is not the TypeScript vitest runs, so its code digest differs.
    const other = reckon(['run', '--date', DATE, '--sources', SOURCES, '--store', join(tmp.dir, `store-${++stores}`), '--json', '--quiet'], { env });
    const otherManifest = JSON.parse(readFileSync(other.json.manifest.path, 'utf8'));
    expect(otherManifest.evaluation.RC01).toMatchObject({ evaluated: 'now', first_run: otherManifest.run_id });
    expect(other.json.results_digest).toBe(off.cli.json.results_digest);
    keys.add(otherManifest.evaluation.RC01.entry);
    expect(keys.size).toBe(6);
    // The unchanged run still reuses its own entry.
    expect((await run(env)).manifest.evaluation.RC01).toMatchObject({ evaluated: 'reused', entry });
  });
});

describe('the caches and a configuration holding a secret', () => {
  it('write no alert secret into the cache folder, and an alerts change is no miss (neither loading nor evaluation reads alerts)', async () => {
    const cacheDir = join(tmp.dir, 'secret-cache');
    const secret = 'R0UT1NG-KEY-never-on-disk-5b1f';
    const config = join(tmp.dir, 'secret.json');
    // A route nothing sends to (no default route, no owner names it): the run delivers nothing.
    writeFileSync(config, JSON.stringify({ alerts: { routes: { pager: { format: 'pagerduty', routing_key: secret }, hook: { format: 'webhook', url: `http://127.0.0.1:9/hook?token=${secret}` } } } }));
    const first = await run({ RECKON_CACHE_DIR: cacheDir }, ['--config', config]);
    expect(evaluated(first)).toEqual(new Set(['now']));
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
    const written = files(cacheDir);
    expect(written.filter((f) => f.endsWith('entry.json')).length).toBeGreaterThan(1);
    expect(written.filter((f) => readFileSync(f).includes(secret))).toEqual([]);
    const plain = await run({ RECKON_CACHE_DIR: cacheDir });
    expect(plain.manifest.evaluation.RC01).toMatchObject({ evaluated: 'reused', entry: first.manifest.evaluation.RC01.entry });
    expect(plain.cli.json.results_digest).toBe('fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3');
  });
});

describe('the results cache shared by two runs at once', () => {
  it('is not corrupted: both runs agree, and a third reuses their evaluation', async () => {
    const cacheDir = join(tmp.dir, 'shared-cache');
    const both = await Promise.all(['a', 'b'].map((name) => reckonSpawned(['run', '--date', DATE, '--sources', SOURCES, '--store', join(tmp.dir, `store-concurrent-${name}`), '--json', '--quiet'], { env: { RECKON_CACHE_DIR: cacheDir } })));
    const firsts = both.map((r) => { expect(r.code, r.err).toBe(1); return JSON.parse(r.out); });
    expect(firsts[0].results_digest).toBe('fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3');
    expect(firsts[1].results_digest).toBe(firsts[0].results_digest);
    // Spawned too: the CLI from dist/ runs other code than vitest does, so it has another key.
    const third = reckon(['run', '--date', DATE, '--sources', SOURCES, '--store', join(tmp.dir, 'store-concurrent-c'), '--json', '--quiet'], { env: { RECKON_CACHE_DIR: cacheDir } });
    expect(third.json.results_digest).toBe(firsts[0].results_digest);
    const m = JSON.parse(readFileSync(third.json.manifest.path, 'utf8'));
    expect(m.evaluation.RC01.evaluated).toBe('reused');
    expect(firsts.map((f) => f.run_id)).toContain(m.evaluation.RC01.first_run);
    // One entry, whole; nothing left half written.
    const entries = readdirSync(join(cacheDir, 'results', 'entries'));
    expect(entries).toEqual([m.evaluation.RC01.entry]);
    expect(statSync(join(cacheDir, 'results', 'entries', entries[0], 'entry.json')).isFile()).toBe(true);
    expect(readdirSync(join(cacheDir, 'results', 'tmp'))).toEqual([]);
  });
});

/** Every object of the run's manifest, in dataset order. */
const objectsOf = (r: Run): any[] => Object.values(r.manifest.sources.datasets).flatMap((d: any) => d.objects);

/**
 * The manifest without what is the run's own (id, times, timings, chain, leases, outputs' keys,
 * break events and observations, which name the run), the caches' notes and the objects' `checked`.
 */
function stableManifest(r: Run): unknown {
  const { run_id: _i, started_at: _s, finished_at: _f, timings_ms: _t, evaluation: _e, chain: _c, leases: _l, outputs: _o, break_log: _b, manifest_signing: _m, breaks: _k, notes, sources, ...rest } = r.manifest;
  const datasets = Object.fromEntries(Object.entries(sources.datasets).map(([k, d]: [string, any]) => [k, { ...d, objects: d.objects.map(({ checked: _k, ...o }: any) => o) }]));
  return { ...rest, sources: { ...sources, datasets }, notes: notes.filter((n: string) => !/^(delivery|results) cache/.test(n)) };
}

describe('an unchanged rerun skips the load', () => {
  const day = join(tmp.dir, 'sources-quarantined');
  const cacheDir = join(tmp.dir, 'skip-cache');
  const env = { RECKON_CACHE_DIR: cacheDir };
  let off: Run;
  let miss: Run;
  let hit: Run;

  beforeAll(async () => {
    cpSync(SAMPLE_DAY, day, { recursive: true });
    // Two records quarantined (an amount and a side that break their rules), orders' watermark
    // derived from the data, ledger postings' watermark file not JSON, and a file that is not data.
    const orders = join(day, 'orders', 'part-00001.csv');
    const lines = readFileSync(orders, 'utf8').trimEnd().split('\n');
    const bad = lines[1].split(',');
    writeFileSync(orders, `${lines.join('\n')}\n${[...bad.slice(0, 7), 'abc', ...bad.slice(8)].join(',')}\n${[...bad.slice(0, 6), 'SIDEWAYS', ...bad.slice(7)].join(',')}\n`);
    rmSync(join(day, 'orders', '_watermark.json'));
    writeFileSync(join(day, 'ledger_postings', '_watermark.json'), '{"watermark": ');
    writeFileSync(join(day, 'orders', 'notes.txt'), 'not data\n');
    ({ off, miss, hit } = await offMissHit(env, day));
  });

  it('hashes every object and loads none: the manifest, quarantine, watermarks, digest and outputs are a miss\'s', async () => {
    expect(objectsOf(miss).map((o) => o.checked)).toEqual(Array(17).fill('now'));
    expect(objectsOf(hit).map((o) => o.checked)).toEqual(Array(17).fill('reused'));
    expect(hit.manifest.evaluation.RC01).toEqual({ evaluated: 'reused', entry: miss.manifest.evaluation.RC01.entry, first_run: miss.manifest.run_id });
    expect(hit.manifest.notes).toContain(`results cache: the load was skipped: each of the 17 objects was hashed and found as run ${miss.manifest.run_id} read it, and its check, counts, watermarks and quarantine entries were taken from the results entry (objects "checked": "reused")`);
    expect(miss.manifest.notes.filter((n: string) => n.includes('load was skipped'))).toEqual([]);
    // The hit's timings: the inputs hashed, no control SQL.
    expect(hit.manifest.timings_ms.inputs_ms).toBeGreaterThanOrEqual(0);
    expect(hit.manifest.timings_ms.control_rc01_records_ms).toBe(0);
    expect(stableManifest(hit)).toEqual(stableManifest(miss));
    expect(stableManifest(miss)).toEqual(stableManifest(off));
    // The quarantine, exactly: the two records, the watermark file, in the order the load gave them (datasets in CONTRACT §2 order).
    expect(hit.manifest.quarantine.count).toBe(3);
    expect(hit.manifest.quarantine.entries.map((q: any) => [q.dataset, q.file, q.row, q.column, q.rule])).toEqual([
      ['orders', 'orders/part-00001.csv', 1019, 'ordered_qty', 'decimal_form'],
      ['orders', 'orders/part-00001.csv', 1020, 'side', 'enum_value'],
      ['ledger_postings', 'ledger_postings/_watermark.json', null, null, 'watermark_not_json'],
    ]);
    expect(JSON.stringify(hit.manifest.quarantine)).toBe(JSON.stringify(off.manifest.quarantine));
    expect(hit.manifest.sources.datasets.orders.watermark).toEqual({ source: 'derived', value: off.manifest.sources.datasets.orders.watermark.value });
    expect(hit.manifest.sources.datasets.orders.watermark.value).toMatch(/^2026-11-0[23]T/);
    expect(hit.manifest.sources.datasets.ledger_postings.watermark).toEqual({ source: 'none', value: null });
    expect(hit.manifest.sources.datasets.orders.ignored_files).toEqual(['orders/notes.txt']);
    expect(hit.cli.json.results_digest).toBe(off.cli.json.results_digest);
    expect(miss.cli.json.results_digest).toBe(off.cli.json.results_digest);
    expect(hit.cli.json.quarantine_count).toBe(3);
    const offRows = await outputRows(off);
    expect(await outputRows(hit)).toEqual(offRows);
    expect(await outputRows(miss)).toEqual(offRows);
  });

  it('loads again when a source file is edited in place, a side file changes, or the cache is off', async () => {
    const orders = join(day, 'orders', 'redelivery-00001.csv');
    const before = readFileSync(orders, 'utf8');
    writeFileSync(orders, before.replace(',185.437000,', ',185.438000,'));
    expect(readFileSync(orders, 'utf8')).not.toBe(before);
    const edited = await run(env, [], day);
    expect(evaluated(edited)).toEqual(new Set(['now']));
    expect(objectsOf(edited).filter((o) => o.checked === 'now').map((o) => o.path)).toEqual(['orders/redelivery-00001.csv']);
    expect(objectsOf(edited).filter((o) => o.checked === 'cache')).toHaveLength(16);
    expect(edited.cli.json.results_digest).not.toBe(off.cli.json.results_digest);
    writeFileSync(orders, before);
    // The original bytes again: the first entry is still there, and reused without a load.
    const back = await run(env, [], day);
    expect(objectsOf(back).map((o) => o.checked)).toEqual(Array(17).fill('reused'));
    expect(back.manifest.evaluation.RC01).toEqual({ evaluated: 'reused', entry: miss.manifest.evaluation.RC01.entry, first_run: miss.manifest.run_id });
    expect(back.cli.json.results_digest).toBe(off.cli.json.results_digest);
    // A side file: another declared watermark is another key.
    const wm = join(day, 'orders', '_watermark.json');
    writeFileSync(wm, '{"watermark": "2026-11-03T00:05:00Z"}\n');
    const declared = await run(env, [], day);
    rmSync(wm);
    expect(evaluated(declared)).toEqual(new Set(['now']));
    expect(objectsOf(declared).map((o) => o.checked)).toEqual(Array(17).fill('cache'));
    expect(declared.manifest.sources.datasets.orders.watermark).toEqual({ source: 'declared', value: '2026-11-03T00:05:00Z' });
    const offAgain = await run({ ...env, RECKON_CACHE: 'off' }, [], day);
    expect(objectsOf(offAgain).map((o) => o.checked)).toEqual(Array(17).fill('now'));
    expect(offAgain.cli.json.results_digest).toBe(off.cli.json.results_digest);
  });
});

describe('the inputs hashed before the load only when an entry has their listing', () => {
  const day = join(tmp.dir, 'sources-listing');
  const cacheDir = join(tmp.dir, 'listing-cache');
  const env = { RECKON_CACHE_DIR: cacheDir };
  const hashedFirst = (r: Run) => 'inputs_hash_ms' in r.manifest.timings_ms;

  it('keys a first run by the load\'s hashes (the rerun hits that key), and hashes first on a same-size rewrite', async () => {
    cpSync(SAMPLE_DAY, day, { recursive: true });
    const first = await run(env, [], day);
    // No entry at all: the load hashed each file as it read it.
    expect(hashedFirst(first)).toBe(false);
    expect(first.cli.json.results_digest).toBe('fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3');
    const key = first.manifest.evaluation.RC01.entry;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const body = JSON.parse(readFileSync(join(cacheDir, 'results', 'entries', key, 'entry.json'), 'utf8')).body;
    expect(body.listing).toMatch(/^[0-9a-f]{64}$/);
    expect(body.listing).not.toBe(key);
    // The rerun lists the same inputs, hashes them first, and hits the key the first run made from its load.
    const rerun = await run(env, [], day);
    expect(hashedFirst(rerun)).toBe(true);
    expect(rerun.manifest.evaluation.RC01).toEqual({ evaluated: 'reused', entry: key, first_run: first.manifest.run_id });
    expect(objectsOf(rerun).map((o) => o.checked)).toEqual(Array(17).fill('reused'));
    expect(rerun.cli.json.results_digest).toBe(first.cli.json.results_digest);
    // A rewrite of the same size: the listing matches, so every input is hashed first; a miss.
    const orders = join(day, 'orders', 'redelivery-00001.csv');
    const before = readFileSync(orders, 'utf8');
    writeFileSync(orders, before.replace(',185.437000,', ',185.438000,'));
    expect(statSync(orders).size).toBe(Buffer.byteLength(before));
    const rewritten = await run(env, [], day);
    expect(hashedFirst(rewritten)).toBe(true);
    expect(evaluated(rewritten)).toEqual(new Set(['now']));
    const rewrittenKey = rewritten.manifest.evaluation.RC01.entry;
    expect(rewrittenKey).not.toBe(key);
    expect(rewritten.cli.json.results_digest).toBe('412d69be8abbefa998e1920f0d058a81a387e5560ac4b85680193986a5919125');
    expect((await run({ RECKON_CACHE: 'off' }, [], day)).cli.json.results_digest).toBe(rewritten.cli.json.results_digest);
    // Its entry has the same listing as the first: both kept.
    const listings = readdirSync(join(cacheDir, 'results', 'entries')).map((k) => JSON.parse(readFileSync(join(cacheDir, 'results', 'entries', k, 'entry.json'), 'utf8')).body.listing);
    expect(listings).toEqual([body.listing, body.listing]);
    // Another size: no entry has that listing; not hashed first, a miss, then a hit of its key.
    writeFileSync(orders, before.replace(',185.437000,', ',185.4370001,'));
    const grown = await run(env, [], day);
    expect(hashedFirst(grown)).toBe(false);
    expect(evaluated(grown)).toEqual(new Set(['now']));
    expect(grown.cli.json.results_digest).toBe((await run({ RECKON_CACHE: 'off' }, [], day)).cli.json.results_digest);
    const again = await run(env, [], day);
    expect(hashedFirst(again)).toBe(true);
    expect(again.manifest.evaluation.RC01).toEqual({ evaluated: 'reused', entry: grown.manifest.evaluation.RC01.entry, first_run: grown.manifest.run_id });
    expect(again.cli.json.results_digest).toBe(grown.cli.json.results_digest);
    // The original bytes back: the first entry, hit.
    writeFileSync(orders, before);
    const back = await run(env, [], day);
    expect(back.manifest.evaluation.RC01).toEqual({ evaluated: 'reused', entry: key, first_run: first.manifest.run_id });
    expect(back.cli.json.results_digest).toBe(first.cli.json.results_digest);
  });
});
