/**
 * Page timings of the break console with many breaks (issue 22). Runs the sample day into a fresh
 * store (real manifests and 41 real breaks), then writes N synthetic breaks directly through the
 * break store API (an OPEN event and one observation each, every tenth one TRIAGED too), starts a
 * console in this process and times its pages over HTTP: start (index load), the queue unfiltered
 * and filtered, a deep page, free text, the CSV of a filtered view, a break page, the ageing and
 * runs pages, a refresh that finds no new run (the 15 s tick) and a sweep of every break key that
 * finds no change. Prints one JSON object.
 *
 * The synthetic objects are not listed by any manifest, so the store check reports them (as it
 * must: no run wrote them); the timings do not depend on it.
 *
 *   node dist/scripts/console-bench.js [N=100000] [DIR]   (DIR/store kept: a second sitting times it again)
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { breakId } from '../pipeline/breaks/break-id.js';
import { BREAK_KEYS, encodeObject, FORMATS, payloadDigest, payloadOf } from '../pipeline/breaks/break-objects.js';
import { BreakStore } from '../pipeline/breaks/break-store.js';
import { main } from '../pipeline/cli/main.js';
import { captureIo } from '../pipeline/cli/io.js';
import { startConsole } from '../pipeline/console/server.js';
import { refreshState } from '../pipeline/console/state.js';
import { loadConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { repoPath } from '../pipeline/core/paths.js';
import { listManifests } from '../pipeline/store/manifests.js';
import { openStore } from '../pipeline/store/open-store.js';

const N = Number(process.argv[2] ?? 100_000);
const dir = process.argv[3] ?? mkdtempSync(join(tmpdir(), 'reckon-console-bench-'));
const KINDS: readonly [string, string][] = [['RC01', 'ORDER_VERSION_GAP'], ['RC02', 'FILL_QTY_MISMATCH'], ['RC03', 'POSTING_AMOUNT_MISMATCH'], ['RC03', 'EXECUTION_WITHOUT_POSTING'], ['RC04', 'BANK_LINE_UNMATCHED'], ['RC05', 'PROJECTION_STALE'], ['RC06', 'NOTICE_UNDELIVERED']];

async function writeBreaks(storeDir: string): Promise<number> {
  const store = await openStore(storeDir);
  const [m] = await listManifests(store);
  const bs = new BreakStore(store);
  const limit = pLimit(32);
  const t0 = Date.now();
  const end = Date.parse(m.manifest.window.end);
  await Promise.all(Array.from({ length: N }, (_, i) => limit(async () => {
    const [control_id, kind] = KINDS[i % KINDS.length];
    const key = `BENCH-${String(i).padStart(7, '0')}`;
    const id = breakId(control_id, kind, key);
    const record_time = new Date(end - ((i * 7_919) % (10 * 86_400)) * 1000).toISOString();
    const open = {
      format: FORMATS.event, break_id: id, version: 1, expected_version: 0, previous_event_sha256: null, control_id, kind, key,
      from_state: null, to_state: 'OPEN', actor: 'reconciler', at: m.manifest.finished_at, evidence: {}, proof: 'manifest', dual_control: false,
      config_sha256: null, window: m.manifest.window, record_time, run_id: m.manifest.run_id,
    };
    const payload = payloadOf(open);
    const binding = { manifest_key: m.key, manifest_sha256: m.sha256 };
    await bs.putEvent(id, 1, { payload, signatures: [], binding });
    const obs = { format: FORMATS.observation, break_id: id, run_id: m.manifest.run_id, window: m.manifest.window, observed_at: m.manifest.finished_at, record_time, as_of: m.manifest.window.end, detail: `synthetic difference ${i}: internal ${i} vs external ${i + 1}`, disposition: 'OPENED' };
    await store.putOnce(BREAK_KEYS.observation(id, m.manifest.run_id), encodeObject({ payload: payloadOf(obs), signatures: [], binding }));
    if (i % 10 === 0) {
      const triaged = { ...open, version: 2, expected_version: 1, previous_event_sha256: payloadDigest(payload), from_state: 'OPEN', to_state: 'TRIAGED', actor: 'olivia', evidence: { owner: 'olivia', classification: 'VALUE' }, proof: 'unsigned', window: undefined, record_time: undefined, run_id: undefined };
      await bs.putEvent(id, 2, { payload: payloadOf(JSON.parse(JSON.stringify(triaged))), signatures: [] });
    }
  })));
  return Date.now() - t0;
}

async function time(url: string, runs = 5): Promise<{ median_ms: number; bytes: number; status: number }> {
  const ms: number[] = [];
  let bytes = 0, status = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = await fetch(url);
    bytes = (await r.arrayBuffer()).byteLength;
    status = r.status;
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { median_ms: Math.round(ms[Math.floor(ms.length / 2)] * 10) / 10, bytes, status };
}

async function run(): Promise<void> {
  const storeDir = join(dir, 'store');
  const cfg = repoPath('fixtures/demo/reckon.yaml');
  // A DIR that already holds the store of an earlier sitting is timed again as it is.
  let write_ms: number | null = null;
  if (!existsSync(storeDir)) {
    const code = await main(['run', '--date', '2026-11-02', '--sources', repoPath('fixtures/sample-day/sources'), '--store', storeDir, '--config', cfg, '--quiet'], captureIo({}));
    if (code !== 1) throw new Error(`sample-day run exited ${code}`);
    write_ms = await writeBreaks(storeDir);
  }
  const controls = await loadControls();
  const t0 = Date.now();
  const c = await startConsole({ store: await openStore(storeDir), config: await loadConfig(cfg, controls), controls, key: { file: repoPath('fixtures/demo/keys/olivia') }, port: 0, refreshMs: 0 });
  const start_ms = Date.now() - t0;
  const load_ms = c.state.index.lastLoadMs;
  const v0 = Date.now();
  await c.verified;
  const verify_ms = Date.now() - v0;
  const someId = breakId('RC03', 'POSTING_AMOUNT_MISMATCH', 'BENCH-0000002');
  const pages: Record<string, string> = {
    'queue (default: oldest first, 50 a page)': '/',
    'queue RC03 past SLA': '/?control=RC03&sla=breached',
    'queue TRIAGED, owner olivia, sorted by key': '/?state=TRIAGED&owner=olivia&sort=key&dir=asc',
    'queue page 1000 of 2000 (size 50)': '/?page=1000',
    'queue free text on key': '/?q=BENCH-00099',
    'queue age bucket 1-3 d, 200 a page': '/?age=1d-3d&size=200',
    'CSV of RC03 past SLA': '/queue.csv?control=RC03&sla=breached',
    'break page (synthetic)': `/breaks/${someId}`,
    'break page (sample day, signed registry)': `/breaks/${breakId('RC03', 'POSTING_AMOUNT_MISMATCH', 'EXE-000280-1')}`,
    ageing: '/ageing',
    runs: '/runs',
  };
  const timings: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(pages)) timings[name] = await time(`${c.url}${path}`);
  const r0 = Date.now();
  const changedByRuns = await refreshState(c.state, false);
  const refresh_ms = Date.now() - r0;
  const s0 = Date.now();
  const changed = await c.state.index.refreshChanged(c.state.manifests);
  const sweep_ms = Date.now() - s0;
  await c.close();
  process.stdout.write(`${JSON.stringify({
    breaks: c.state.index.all().length, write_ms, console_start_ms: start_ms, index_load_ms: load_ms, store_verify_ms: verify_ms,
    store_verification: { status: c.state.verification.status, problems: c.state.verification.problems.length },
    refresh_no_change_ms: refresh_ms, refresh_changed: changedByRuns.length, sweep_no_change_ms: sweep_ms, sweep_changed: changed.length, rss_mib: Math.round(process.memoryUsage().rss / 2 ** 20), timings, store: storeDir,
  }, null, 2)}\n`);
}

run().catch((e) => { process.stderr.write(`${(e as Error).stack}\n`); process.exit(70); });
