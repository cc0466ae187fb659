/**
 * Alerts (issue 19, docs/alerts.md) against real HTTP receivers on loopback (node:http, started
 * here): one delivery per new break, none for a re-observed one within its SLA, a resolve for a
 * VERIFIED one (PagerDuty Events v2, dedup key = break id); a receiver that fails (500) or hangs
 * never changes the run's exit code, is retried within its bounds and recorded once per run; the
 * Slack, Alertmanager and webhook formats; --no-alerts and --alerts-dry-run; no secret (the route
 * URL's path, the routing key) in anything printed or stored. Runs are in process (reckonIn).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, reckonAsync, reckonIn, scratchDir } from './helpers/cli.js';
import { startReceiver, type Receiver } from './helpers/http-receiver.js';
import { breakCommands, ID, rc06Sources, signers, WINDOW } from './fixtures/breaks.js';
import { planAlerts } from '../pipeline/alerts/plan.js';
import { AlertsConfig } from '../pipeline/config/alerts-config.js';
import { defaultConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { breakId } from '../pipeline/breaks/break-id.js';

const ROUTING_KEY = 'pd-routing-key-0123456789abcdef';
const SECRET_PATH = 'services/T0SECRET/B0SECRET/xoxsecret';
const ENV = { PD_KEY: ROUTING_KEY };

/** Every file under `dir`, concatenated (to prove no secret was stored). */
function storeText(dir: string): string {
  const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.parquet') ? [] : [readFileSync(join(d, e.name), 'latin1')]));
  return walk(dir).join('\n');
}

/**
 * A configuration routing RC06 to a PagerDuty route on `receiver`. Against a receiver that fails
 * or hangs the bounds are short, so the test is quick; against one that answers they are long (the
 * receiver shares this process's event loop with the run, which a loaded machine can stall).
 */
function pagerdutyConfig(dir: string, receiver: Receiver, slaS = 7 * 86_400): string {
  const path = join(dir, `alerts-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(pagerdutyDocument(receiver, slaS)));
  return path;
}

/** The configuration document of pagerdutyConfig. */
function pagerdutyDocument(receiver: Receiver, slaS = 7 * 86_400) {
  const short = receiver.mode !== 'ok';
  return {
    controls: { RC06: { route: 'pd', sla_s_by_kind: { NOTICE_UNDELIVERED: slaS } } },
    alerts: {
      routes: { pd: { format: 'pagerduty', url: `${receiver.url}/${SECRET_PATH}`, routing_key_env: 'PD_KEY' } },
      attempts: 3, backoff_base_ms: 5, backoff_cap_ms: 20, timeout_ms: short ? 300 : 20_000, deadline_ms: short ? 4_000 : 60_000,
    },
  };
}

describe('alerts to a PagerDuty receiver', () => {
  const tmp = scratchDir('reckon-alerts-');
  let receiver: Receiver;
  beforeAll(async () => { receiver = await startReceiver('ok'); });
  afterAll(async () => { await receiver.close(); tmp.cleanup(); });

  it('sends one trigger per new break, none for a re-observed one within its SLA, a resolve when VERIFIED', async () => {
    const src = rc06Sources(join(tmp.dir, 'a'));
    const store = join(tmp.dir, 'a', 'store');
    // People sign their transitions (issue 17): the alert configuration with a signer registry.
    const { keys, config } = signers(join(tmp.dir, 'a'), pagerdutyDocument(receiver));
    const run = () => reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--config', config, '--json', '--quiet'], { env: ENV });
    const { advance } = breakCommands(store, config, keys);

    const first = await run();
    expect(first.code).toBe(1);
    expect(receiver.requests.map((q) => q.body), first.stderr).toHaveLength(1);
    const [trigger] = receiver.requests;
    expect([trigger.method, trigger.path, trigger.headers['content-type']]).toEqual(['POST', `/${SECRET_PATH}`, 'application/json']);
    expect(trigger.body).toMatchObject({
      routing_key: ROUTING_KEY, event_action: 'trigger', dedup_key: ID,
      payload: { source: 'reckon', severity: 'error', component: 'RC06', group: 'notification-owner', class: 'NOTICE_UNDELIVERED' },
    });
    expect(trigger.body.payload.summary).toBe('RC06 NOTICE_UNDELIVERED INT-2: new break (age 14h04m, within SLA 7d00h)');
    expect(trigger.body.payload.custom_details.runbook).toMatchObject({ id: 'RBK06', first_step: 'Do not repeat effect; open circuit for optional requests; preserve intent and block conflict' });
    expect(first.json.alerts).toMatchObject({ mode: 'send', record: `alerts/${first.json.run_id}.json`, counts: { sent: 1, failed: 0, unrouted: 0 } });
    expect(first.json.alerts.deliveries[0]).toMatchObject({ event: 'opened', break_id: ID, route: 'pd', format: 'pagerduty', target: `${receiver.url}/…`, status: 'sent' });
    // The commands it suggests carry the configuration it read (the signer registry a signed store needs).
    expect(first.json.next).toEqual([`reckon breaks show ${ID} --store ${store} --config ${config}`]);

    const second = await run();
    expect([second.code, second.json.controls[0].differences[0].disposition, second.json.controls[0].differences[0].sla_breached]).toEqual([1, 'REOBSERVED', false]);
    expect(receiver.requests).toHaveLength(1);
    expect(second.json.alerts.counts.sent).toBe(0);

    expect((await advance('TRIAGED', 1, '--actor', 'tom', '--owner', 'olivia', '--classification', 'MISSING')).code).toBe(0);
    expect((await advance('CONTAINED', 2, '--actor', 'olivia', '--approver', 'amy')).code).toBe(0);
    expect((await advance('CORRECTED', 3, '--actor', 'olivia', '--approver', 'amy', '--evidence-ref', 'RCP-2 resent')).code).toBe(0);
    src.fix();
    const third = await run();
    expect(third.code).toBe(0);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1].body).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: ID });
    expect(third.json.alerts.deliveries).toEqual([expect.objectContaining({ event: 'resolved', break_id: ID, status: 'sent' })]);
    expect([third.json.verified, third.json.corrected_still_observed, third.json.warnings]).toEqual([[{ break_id: ID, control_id: 'RC06', kind: 'NOTICE_UNDELIVERED', key: 'INT-2' }], [], []]);

    // `reckon runs` shows each run's alerts; nothing printed or stored holds a secret.
    const runs = await reckonIn(['runs', '--store', store]);
    expect(runs.stdout.split('\n').filter(Boolean).map((l) => l.replace(/^.*alerts: /, ''))).toEqual(['1 sent', 'none to send', '1 sent']);
    for (const text of [first.stdout, first.stderr, second.stdout, third.stdout, runs.stdout, storeText(store)]) {
      expect(text).not.toContain(ROUTING_KEY);
      expect(text).not.toContain('T0SECRET');
    }
  });

  it('a re-observed break is alerted once when its age crosses the SLA, not again after', async () => {
    // A half-day window first (as-of 12:05: INT-2 is 2h05m old, within a 3 h SLA), then the whole
    // day (as-of 00:05 next day: 14h04m, past it), then the whole day again.
    const src = rc06Sources(join(tmp.dir, 'b'), '2026-11-02T12:05:00Z');
    const store = join(tmp.dir, 'b', 'store');
    const config = pagerdutyConfig(tmp.dir, receiver, 10_800);
    const run = (window: string) => reckonIn(['run', '--control', 'RC06', '--window', window, '--sources', src.dir, '--store', store, '--config', config, '--json', '--quiet'], { env: ENV });
    const before = receiver.requests.length;
    const half = await run('2026-11-02T00:00:00Z/2026-11-02T12:00:00Z');
    expect(half.json.controls[0].differences[0]).toMatchObject({ key: 'INT-2', disposition: 'OPENED', sla_breached: false });
    src.setWatermark('2026-11-03T00:05:00Z');
    const day = await run(WINDOW);
    expect(day.json.controls[0].differences[0]).toMatchObject({ disposition: 'REOBSERVED', sla_breached: true });
    const again = await run(WINDOW);
    expect([half, day, again].map((r) => r.json.alerts.deliveries.map((d: { event: string }) => d.event))).toEqual([['opened'], ['past_sla'], []]);
    expect(receiver.requests.slice(before).map((q) => [q.body.event_action, q.body.payload.severity, q.body.payload.summary])).toEqual([
      ['trigger', 'error', 'RC06 NOTICE_UNDELIVERED INT-2: new break (age 2h04m, within SLA 3h00m)'],
      ['trigger', 'critical', 'RC06 NOTICE_UNDELIVERED INT-2: break past its SLA (age 14h04m, past SLA 3h00m)'],
    ]);
  });
  it('a run stopped after its manifest: the run rolling it forward sends its trigger, recorded as the stopped run\'s', async () => {
    const { store, args, before, stoppedId } = await stoppedRun('c');
    const unfinished = await reckonIn(['runs', '--store', store]);
    expect(unfinished.stdout.split('\n')[1]).toBe('        publication unfinished: its outputs and break objects are not all written yet; the next run on this store writes them (reckon run again)');
    expect((await reckonIn(['runs', '--store', store, '--json'])).json.map((r: { publication_unfinished: boolean }) => r.publication_unfinished)).toEqual([true]);
    const next = await reckonIn(args, { env: ENV });
    expect([next.code, next.json.controls[0].differences[0].disposition]).toEqual([1, 'REOBSERVED']);
    expect(next.stderr).toContain(`alerts of run ${stoppedId}, rolled forward by this run (it stopped before its alerts): 1 sent, 0 unrouted, 0 failed`);
    expect(receiver.requests.slice(before).map((q) => [q.body.event_action, q.body.dedup_key, q.body.payload?.summary])).toEqual([
      ['trigger', ID, 'RC06 NOTICE_UNDELIVERED INT-2: new break (age 14h04m, within SLA 7d00h)'],
    ]);
    const record = JSON.parse(readFileSync(join(store, 'alerts', `${stoppedId}.json`), 'utf8'));
    expect(record).toMatchObject({ schema: 'reckon.alert-delivery/v1', run_id: stoppedId, mode: 'send', counts: { sent: 1, failed: 0, unrouted: 0 } });
    // The claim that made this run the one to send them (two runs rolling it forward at once would both page).
    expect(JSON.parse(readFileSync(join(store, 'alerts', `${stoppedId}.roll-forward.json`), 'utf8'))).toMatchObject({ schema: 'reckon.alert-roll-forward/v1', run_id: stoppedId, sent_by: next.json.run_id });
    const runs = await reckonIn(['runs', '--store', store]);
    expect(runs.stdout.split('\n').filter(Boolean).map((l) => l.replace(/^.*alerts: /, ''))).toEqual(['1 sent', 'none to send']);

    // A third run finds the record and sends nothing again.
    const third = await reckonIn(args, { env: ENV });
    expect([third.code, third.stderr.includes('rolled forward')]).toEqual([1, false]);
    expect(receiver.requests).toHaveLength(before + 1);
    expect(storeText(store) + next.stderr).not.toContain(ROUTING_KEY);
  });

  it('a run stopped after its manifest whose alerts another rolling run claimed: this one sends nothing and writes no record', async () => {
    const { store, args, before, stoppedId } = await stoppedRun('e');
    mkdirSync(join(store, 'alerts'), { recursive: true });
    writeFileSync(join(store, 'alerts', `${stoppedId}.roll-forward.json`), JSON.stringify({ schema: 'reckon.alert-roll-forward/v1', run_id: stoppedId, sent_by: 'run-other', claimed_at: '2026-11-03T00:06:00.000Z' }));
    const next = await reckonIn(args, { env: ENV });
    expect(next.stderr).toContain(`rolled forward run ${stoppedId}`);
    expect(next.stderr).not.toContain(`alerts of run ${stoppedId}, rolled forward`);
    expect(receiver.requests).toHaveLength(before);
    expect(existsSync(join(store, 'alerts', `${stoppedId}.json`))).toBe(false);
  });

  it('a run stopped after its manifest, rolled forward by a --no-alerts run: nothing sent, left pending; the next sending run sends them once', async () => {
    const { store, args, before, stoppedId } = await stoppedRun('d');
    const off = await reckonIn([...args, '--no-alerts'], { env: ENV });
    expect(off.stderr).toContain(`alerts of run ${stoppedId}, rolled forward by this run (it stopped before its alerts): none sent (alerts are off for this run); they stay pending for the next run that sends alerts (alerts/pending/${stoppedId}.json)`);
    expect(receiver.requests).toHaveLength(before);
    expect(existsSync(join(store, 'alerts', `${stoppedId}.json`))).toBe(false);
    expect(JSON.parse(readFileSync(join(store, 'alerts', 'pending', `${stoppedId}.json`), 'utf8'))).toMatchObject({ schema: 'reckon.alert-pending/v1', run_id: stoppedId, rolled_forward_by: off.json.run_id, mode: 'off' });
    const runs = await reckonIn(['runs', '--store', store]);
    expect(runs.stdout.split('\n').filter(Boolean).map((l) => l.replace(/^.*alerts: /, ''))).toEqual(['pending (rolled forward by a run that did not send them; the next run that sends alerts does)', 'off']);

    const sending = await reckonIn(args, { env: ENV });
    expect(sending.stderr).toContain(`alerts of run ${stoppedId}, pending since an earlier run rolled it forward without sending them: 1 sent, 0 unrouted, 0 failed`);
    expect(receiver.requests.slice(before).map((q) => [q.body.event_action, q.body.dedup_key])).toEqual([['trigger', ID]]);
    expect(JSON.parse(readFileSync(join(store, 'alerts', `${stoppedId}.json`), 'utf8'))).toMatchObject({ run_id: stoppedId, mode: 'send', counts: { sent: 1 } });
    const again = await reckonIn(args, { env: ENV });
    expect(again.stderr).not.toContain(`alerts of run ${stoppedId}`);
    expect(receiver.requests).toHaveLength(before + 1);
  });

  it('a run stopped after its manifest, rolled forward by a dry run: counted, not sent, still pending after a --no-alerts run', async () => {
    const { store, args, before, stoppedId } = await stoppedRun('g');
    const dry = await reckonIn([...args, '--alerts-dry-run'], { env: ENV });
    expect(dry.stderr).toContain(`alerts of run ${stoppedId}, rolled forward by this run (it stopped before its alerts): 1 dry run, none sent; they stay pending for the next run that sends alerts (alerts/pending/${stoppedId}.json)`);
    const off = await reckonIn([...args, '--no-alerts'], { env: ENV });
    expect(off.stderr).not.toContain(`alerts of run ${stoppedId}`);
    expect(receiver.requests).toHaveLength(before);
    expect(JSON.parse(readFileSync(join(store, 'alerts', 'pending', `${stoppedId}.json`), 'utf8'))).toMatchObject({ rolled_forward_by: dry.json.run_id, mode: 'dry-run' });
    // A marker that names another run than its key is never acted on.
    writeFileSync(join(store, 'alerts', 'pending', 'run-forged.json'), JSON.stringify({ schema: 'reckon.alert-pending/v1', run_id: stoppedId }));
    const sending = await reckonIn(args, { env: ENV });
    expect(sending.stderr).toContain(`alerts of run ${stoppedId}, pending since an earlier run rolled it forward without sending them: 1 sent`);
    expect(sending.stderr).toContain('alerts/pending/run-forged.json is ignored: it is not a reckon.alert-pending/v1 marker naming its own run; nothing is sent on its word');
    expect(receiver.requests).toHaveLength(before + 1);
  });

  it('pending alerts stay pending for a run with no route, and are never sent over a claim of a stopped sender or a record that is not one', async () => {
    const { store, args, before, stoppedId } = await stoppedRun('h');
    await reckonIn([...args, '--no-alerts'], { env: ENV });
    const unconfigured = args.filter((a, i) => a !== '--config' && args[i - 1] !== '--config');
    const bare = await reckonIn(unconfigured, { env: ENV });
    expect(bare.stderr).toContain(`alerts of run ${stoppedId}, pending since an earlier run rolled it forward without sending them: none sent (this run has no route for any of the 1); they stay pending for the next run that sends alerts (alerts/pending/${stoppedId}.json)`);
    expect(existsSync(join(store, 'alerts', `${stoppedId}.json`))).toBe(false);

    writeFileSync(join(store, 'alerts', `${stoppedId}.roll-forward.json`), JSON.stringify({ schema: 'reckon.alert-roll-forward/v1', run_id: stoppedId, sent_by: 'run-dead', claimed_at: '2026-11-03T00:06:00.000Z' }));
    const sending = await reckonIn(args, { env: ENV });
    expect(sending.stderr).not.toContain(`alerts of run ${stoppedId}, pending since`);
    expect(receiver.requests).toHaveLength(before);
    const runs = await reckonIn(['runs', '--store', store]);
    expect(runs.stdout.split('\n')[0]).toContain('alerts: claimed by run run-dead, which stopped before recording them: some may have been sent, none will be now; page by hand');

    writeFileSync(join(store, 'alerts', `${stoppedId}.json`), 'not json');
    const over = await reckonIn(args, { env: ENV });
    expect(over.stderr).toContain(`alerts/pending/${stoppedId}.json is ignored: alerts/${stoppedId}.json is there but is not a delivery record (it is not JSON), so its alerts are not sent over it`);
    expect(receiver.requests).toHaveLength(before);
  });

  it('pending alerts of a stopped run whose manifest was edited since are not sent, and stay pending', async () => {
    const { store, args, before, key, stoppedId } = await stoppedRun('i');
    await reckonIn([...args, '--no-alerts'], { env: ENV });
    const path = join(store, 'manifests', key);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"INT-2"', '"INT-9"'));
    const sending = await reckonIn(args, { env: ENV });
    expect(sending.stderr).toContain(`alerts of run ${stoppedId}, pending since an earlier run rolled it forward without sending them, not sent: run ${stoppedId} stopped after publishing manifests/${key}, but the manifest's bytes hash to`);
    expect(receiver.requests).toHaveLength(before);
    expect(existsSync(join(store, 'alerts', `${stoppedId}.json`))).toBe(false);
    expect((await reckonIn(['runs', '--store', store])).stdout.split('\n')[0]).toContain('alerts: pending');
  });

  it('pending alerts of a break verified since are not paged as new: the stopped run is recorded none to send', async () => {
    const src = rc06Sources(join(tmp.dir, 'l'));
    const store = join(tmp.dir, 'l', 'store');
    const { keys, config } = signers(join(tmp.dir, 'l'), pagerdutyDocument(receiver));
    const args = ['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--config', config, '--json', '--quiet'];
    const before = receiver.requests.length;
    expect((await stopAtPublished(args)).code).toBe(130);
    const [key] = readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json'));
    const stoppedId = /^[0-9]{8}-(.+)\.json$/.exec(key)![1];
    expect((await reckonIn([...args, '--no-alerts'], { env: ENV })).code).toBe(1);
    const { advance } = breakCommands(store, config, keys);
    expect((await advance('TRIAGED', 1, '--actor', 'tom', '--owner', 'olivia', '--classification', 'MISSING')).code).toBe(0);
    expect((await advance('CONTAINED', 2, '--actor', 'olivia', '--approver', 'amy')).code).toBe(0);
    expect((await advance('CORRECTED', 3, '--actor', 'olivia', '--approver', 'amy', '--evidence-ref', 'RCP-2 resent')).code).toBe(0);
    // The run summary says what became of a corrected break: still observed, then verified.
    const text = args.filter((a) => a !== '--json');
    const still = await reckonIn([...text, '--no-alerts'], { env: ENV });
    expect(still.stdout).toContain(`  CORRECTED but still observed: ${ID} RC06 NOTICE_UNDELIVERED INT-2: the correction did not remove the difference, so it is not verified`);
    src.fix();
    const verifying = await reckonIn([...text, '--no-alerts'], { env: ENV });
    expect(verifying.code).toBe(0);
    expect(verifying.stdout).toContain(`  VERIFIED ${ID} RC06 NOTICE_UNDELIVERED INT-2: no longer observed; it closes with 'reckon breaks advance ${ID} --to CLOSED …'`);
    const sending = await reckonIn(args, { env: ENV });
    expect(sending.stderr).toContain(`alerts of run ${stoppedId}, pending since an earlier run rolled it forward without sending them: 0 sent, 0 unrouted, 0 failed`);
    expect(receiver.requests).toHaveLength(before);
    expect(JSON.parse(readFileSync(join(store, 'alerts', `${stoppedId}.json`), 'utf8'))).toMatchObject({ run_id: stoppedId, mode: 'send', deliveries: [] });
  });

  it('a run still alive between its manifest and its alerts is not rolled forward by another run meanwhile: it pages once itself', async () => {
    const src = rc06Sources(join(tmp.dir, 'k'));
    const store = join(tmp.dir, 'k', 'store');
    const config = pagerdutyConfig(tmp.dir, receiver);
    const before = receiver.requests.length;
    const slow = reckonAsync(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--config', config, '--json', '--quiet'], { env: { ...ENV, RECKON_FAULT_PAUSE: 'published:3000' } });
    let stderr = '';
    const paused = new Promise<void>((resolve) => slow.stderr!.on('data', (b: Buffer) => { stderr += b.toString(); if (stderr.includes('paused at published')) resolve(); }));
    const finished = new Promise<number | null>((resolve) => slow.on('close', resolve));
    await paused;
    expect((await reckonIn(['runs', '--store', store])).stdout.split('\n')[1]).toBe('        publication in progress: the run is still going (it writes its outputs and break objects itself)');
    const other = await reckonIn(['run', '--control', 'RC06', '--window', '2026-11-02T00:00:00Z/2026-11-02T12:00:00Z', '--sources', src.dir, '--store', store, '--config', config, '--json', '--quiet', '--no-alerts'], { env: ENV });
    expect(other.stderr).not.toContain('rolled forward run');
    expect(await finished).toBe(1);
    const [first] = readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json')).sort();
    const slowId = /^[0-9]{8}-(.+)\.json$/.exec(first)![1];
    expect(existsSync(join(store, 'alerts', 'pending', `${slowId}.json`))).toBe(false);
    expect(JSON.parse(readFileSync(join(store, 'alerts', `${slowId}.json`), 'utf8'))).toMatchObject({ run_id: slowId, mode: 'send', counts: { sent: 1 } });
    expect(receiver.requests.slice(before).map((q) => [q.body.event_action, q.body.dedup_key])).toEqual([['trigger', ID]]);
  });

  it('a run stopped after its manifest whose .sha256 was changed, not the manifest: the refusal says which', async () => {
    const { store, args, before, key, stoppedId } = await stoppedRun('j');
    writeFileSync(join(store, 'manifests', key.replace(/\.json$/, '.sha256')), `${'0'.repeat(64)}  ${key}\n`);
    const next = await reckonIn(args, { env: ENV });
    expect(next.code).toBe(2);
    expect(next.stderr).toContain(`run ${stoppedId} stopped after publishing manifests/${key}, but the manifest's bytes hash to ${createHash('sha256').update(readFileSync(join(store, 'manifests', key))).digest('hex')} and its .sha256 says ${'0'.repeat(64)}: its .sha256 was changed after publication (the bytes match the digest its run recorded before publishing), so it is not rolled forward`);
    expect(receiver.requests).toHaveLength(before);
  });

  it('a run stopped after its manifest, the manifest edited since: not rolled forward, no alert sent, exit 2 naming both digests', async () => {
    const { store, args, before, key, stoppedId } = await stoppedRun('f');
    const published = readFileSync(join(store, 'manifests', key), 'utf8');
    const edited = published.replace('"INT-2"', '"INT-9"');
    expect(edited).not.toBe(published);
    writeFileSync(join(store, 'manifests', key), edited);
    const sha = (t: string) => createHash('sha256').update(t).digest('hex');
    const storeBefore = listTree(store);

    const next = await reckonIn(args, { env: ENV });
    expect(next.code, next.stderr).toBe(2);
    expect(next.stderr).toContain(`run ${stoppedId} stopped after publishing manifests/${key}, but the manifest's bytes hash to ${sha(edited)} and its .sha256 says ${sha(published)}: it was changed after publication, so it is not rolled forward (nothing promoted, no break object written, no alert sent)`);
    expect(next.stderr).not.toContain('rolled forward run');
    expect(receiver.requests).toHaveLength(before);
    expect(existsSync(join(store, 'alerts'))).toBe(false);
    expect(listTree(store)).toEqual(storeBefore);
  });

  /** A store whose one RC06 run was stopped after publishing its manifest (SIGINT), under `tmp.dir/<name>`. */
  async function stoppedRun(name: string) {
    const src = rc06Sources(join(tmp.dir, name));
    const store = join(tmp.dir, name, 'store');
    const args = ['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--config', pagerdutyConfig(tmp.dir, receiver), '--json', '--quiet'];
    const before = receiver.requests.length;
    const stopped = await stopAtPublished(args);
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(receiver.requests).toHaveLength(before);
    const [key] = readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json'));
    return { store, args, before, key, stoppedId: /^[0-9]{8}-(.+)\.json$/.exec(key)![1] };
  }
});

/** Every file under `dir`, relative, sorted (lock files aside: a refused run may leave none or its own). */
function listTree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => statSync(join(dir, f)).isFile() && !f.includes('_lock')).sort();
}

/** Runs `args` in a child paused once its manifest is published, then interrupts it (SIGINT); its exit code and stderr. */
function stopAtPublished(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = reckonAsync(args, { env: { ...ENV, RECKON_FAULT_PAUSE: 'published' } });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
    if (stderr.includes('paused at published')) child.kill('SIGINT');
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('a receiver that fails or hangs', () => {
  const tmp = scratchDir('reckon-alerts-fail-');
  let failing: Receiver;
  let hanging: Receiver;
  beforeAll(async () => { failing = await startReceiver('fail'); hanging = await startReceiver('hang'); });
  afterAll(async () => { await failing.close(); await hanging.close(); tmp.cleanup(); });

  for (const which of ['fail', 'hang'] as const) {
    it(`${which}: the run's exit code is unchanged, the attempts are bounded and recorded`, async () => {
      const receiver = which === 'fail' ? failing : hanging;
      const src = rc06Sources(join(tmp.dir, which));
      const store = join(tmp.dir, which, 'store');
      const t0 = Date.now();
      const r = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--config', pagerdutyConfig(tmp.dir, receiver), '--json', '--quiet'], { env: ENV });
      expect(Date.now() - t0).toBeLessThan(60_000);
      expect([r.code, r.json.status, r.json.exit_code]).toEqual([1, 'BREAKS', 1]);
      expect(receiver.requests).toHaveLength(3);
      const d = r.json.alerts.deliveries[0];
      expect([d.status, d.attempts.length, r.json.alerts.counts.failed]).toEqual(['failed', 3, 1]);
      expect(d.attempts.map((a: { http_status: number | null; error: string }) => [a.http_status, a.error]))
        .toEqual(Array(3).fill(which === 'fail' ? [500, 'HTTP 500'] : [null, 'no answer within the timeout']));
      const record = JSON.parse(readFileSync(join(store, 'alerts', `${r.json.run_id}.json`), 'utf8'));
      expect(record).toMatchObject({ schema: 'reckon.alert-delivery/v1', run_id: r.json.run_id, mode: 'send', counts: { failed: 1, sent: 0 } });
      const runs = await reckonIn(['runs', '--store', store]);
      expect(runs.stdout).toContain('alerts: 1 failed');
      expect(runs.stdout).toContain(`alert failed: opened ${ID} to pd (${receiver.url}/…): 3 attempt(s) failed; last: ${which === 'fail' ? 'HTTP 500' : 'no answer within the timeout'}`);
      expect(storeText(store) + runs.stdout + r.stderr).not.toContain(ROUTING_KEY);
    });
  }
});

describe('the ready formats, --no-alerts and --alerts-dry-run', () => {
  const tmp = scratchDir('reckon-alerts-formats-');
  const day = join(ROOT, 'fixtures', 'sample-day', 'sources');
  let receiver: Receiver;
  let config: string;
  beforeAll(async () => {
    receiver = await startReceiver('ok');
    config = join(tmp.dir, 'formats.yaml');
    writeFileSync(config, [
      'controls:',
      '  RC05: { route: chat, by_kind: { PROJECTION_STALE: { route: hook, owner: platform-team, owner_name: Platform, contact: "#platform" } } }',
      '  RC06: { route: am }',
      'alerts:',
      '  routes:',
      `    chat: { format: slack, url: "${receiver.url}/slack/${SECRET_PATH}" }`,
      `    am: { format: alertmanager, url: "${receiver.url}" }`,
      `    hook: { format: webhook, url: "${receiver.url}/hook?token=s3cr3t-token", headers: { Authorization: "Bearer hdr-secret-value" } }`,
    ].join('\n'));
  });
  afterAll(async () => { await receiver.close(); tmp.cleanup(); });
  const run = (store: string, ...extra: string[]) => reckonIn(['run', '--date', '2026-11-02', '--control', 'RC05,RC06', '--sources', day, '--store', join(tmp.dir, store), '--config', config, '--json', '--quiet', ...extra]);

  it('sends each new break to its owner route in that route’s format', async () => {
    const r = await run('s');
    expect(r.code).toBe(1);
    const byPath = (p: string) => receiver.requests.filter((q) => q.path.startsWith(p));
    expect([byPath('/slack/').length, byPath('/api/v2/alerts').length, byPath('/hook').length]).toEqual([4, 3, 1]);
    const slack = byPath('/slack/').map((q) => q.body);
    expect(slack.every((b) => typeof b.text === 'string' && b.blocks[0].type === 'section')).toBe(true);
    expect(slack.map((b) => b.text.replace(/: .*$/, '')).sort()).toEqual(['RC05 PROJECTION_COST_MISMATCH ACC-000004|DE-SAPG', 'RC05 PROJECTION_KEY_EXTRA ACC-CLOSED|GB-BARC', 'RC05 PROJECTION_KEY_MISSING ACC-000005|JP-7203', 'RC05 PROJECTION_POSITION_MISMATCH ACC-000002|JP-7203']);
    const am = byPath('/api/v2/alerts').map((q) => q.body);
    expect(am.every((b) => Array.isArray(b) && b.length === 1 && b[0].labels.alertname === 'ReckonBreak' && b[0].labels.control === 'RC06' && b[0].labels.owner === 'notification-owner')).toBe(true);
    expect(am.map((b) => b[0].labels.break_id).sort()).toEqual(r.json.controls[1].differences.map((d: { break_id: string }) => d.break_id).sort());
    const [hook] = byPath('/hook');
    expect(hook.headers.authorization).toBe('Bearer hdr-secret-value');
    expect(hook.body).toMatchObject({
      schema: 'reckon.alert/v1', event: 'opened', run: { run_id: r.json.run_id }, break: { control_id: 'RC05', kind: 'PROJECTION_STALE', break_id: breakId('RC05', 'PROJECTION_STALE', hookKey(r)) },
      owner: { owner: 'platform-team', owner_name: 'Platform', contact: '#platform', route: 'hook' }, runbook: { id: 'RBK05' },
    });
    expect(r.json.alerts.counts).toMatchObject({ sent: 8, failed: 0, unrouted: 0 });
    const shown = JSON.stringify(r.json) + r.stderr;
    for (const secret of ['T0SECRET', 's3cr3t-token', 'hdr-secret-value']) expect(shown).not.toContain(secret);
  });

  it('--no-alerts sends nothing and records that; --alerts-dry-run prints what would be sent', async () => {
    const before = receiver.requests.length;
    const off = await run('off', '--no-alerts');
    expect([off.code, off.json.alerts.mode, off.json.alerts.deliveries]).toEqual([1, 'off', []]);
    const dry = await run('dry', '--alerts-dry-run');
    expect(receiver.requests.length).toBe(before);
    expect([dry.code, dry.json.alerts.mode, dry.json.alerts.counts.dry_run]).toEqual([1, 'dry-run', 8]);
    expect(dry.json.alerts.would_send.map((w: { route: string }) => w.route).sort()).toEqual(['am', 'am', 'am', 'chat', 'chat', 'chat', 'chat', 'hook']);
    expect(dry.json.alerts.would_send.find((w: { route: string }) => w.route === 'chat').target).toBe(`${receiver.url}/…`);
    const human = await reckonIn(['run', '--date', '2026-11-02', '--control', 'RC05,RC06', '--sources', day, '--store', join(tmp.dir, 'dry-h'), '--config', config, '--quiet', '--alerts-dry-run']);
    expect(human.stdout).toContain('alerts: 8 would be sent (dry run)');
    expect(human.stdout).toMatch(/would send to hook \(webhook, http:\/\/127\.0\.0\.1:[0-9]+\/…\): \{"schema":"reckon\.alert\/v1","event":"opened"/);
    expect(JSON.stringify(dry.json) + human.stdout).not.toContain('T0SECRET');
    expect(receiver.requests.length).toBe(before);
  });

  it('reckon runs names a delivery record that is not one, and goes on with the others', async () => {
    const store = join(tmp.dir, 'off');
    const [runId] = readdirSync(join(store, 'alerts')).map((f) => f.replace(/\.json$/, ''));
    const record = join(store, 'alerts', `${runId}.json`);
    const original = readFileSync(record, 'utf8');
    const cases: [string, string][] = [
      ['{}', 'schema: '],
      ['not json', 'it is not JSON'],
      [original.replace(runId, 'R-OTHER'), 'it names run R-OTHER'],
      [original.replace('"sent":0', '"sent":5'), 'its counts do not match its deliveries'],
    ];
    for (const [body, why] of cases) {
      writeFileSync(record, body);
      const human = await reckonIn(['runs', '--store', store]);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toContain(`alerts: record alerts/${runId}.json is not a delivery record (${why}`);
      const json = await reckonIn(['runs', '--store', store, '--json']);
      expect(json.code).toBe(0);
      expect(json.json[0].alerts.record).toBe(`alerts/${runId}.json`);
      expect(json.json[0].alerts.invalid).toContain(why);
    }
    writeFileSync(record, original);
    expect((await reckonIn(['runs', '--store', store])).stdout).toContain('alerts: off');
  });
});

/** The key of the run's PROJECTION_STALE difference. */
function hookKey(r: { json?: { controls: { differences: { kind: string; key: string }[] }[] } }): string {
  return r.json!.controls[0].differences.find((d) => d.kind === 'PROJECTION_STALE')!.key;
}

describe('planAlerts', () => {
  let base: Omit<Parameters<typeof planAlerts>[0], 'results' | 'breaks' | 'routes'>;
  beforeAll(async () => { base = { config: defaultConfig().config, controls: await loadControls(), verified: [], observations: new Map(), runId: 'run-x' }; });
  const result = (n: number) => ({ control_id: 'RC03', status: 'BREAKS' as const, as_of: '2026-11-03T00:05:00Z', readiness: { ready: true, reasons: [] }, quarantined_datasets: [], totals: {},
    differences: Array.from({ length: n }, (_, i) => ({ kind: 'POSTING_SET_UNBALANCED', key: `PS-${i}|EUR`, detail: 'd', record_time: null, break_id: `brk-${i}`, disposition: 'OPENED' as const })) });
  const outcomes = (n: number) => Array.from({ length: n }, (_, i) => ({ break_id: `brk-${i}`, control_id: 'RC03', kind: 'POSTING_SET_UNBALANCED', key: `PS-${i}|EUR`, disposition: 'OPENED' as const, state: 'OPEN' as const, version: 1, age_s: String(i), sla_s: 0, sla_breached: i > 0,
    head: { version: 1, sha256: 'a'.repeat(64) }, event: null, observation_sha256: 'b'.repeat(64) }));
  const route = { name: 'ledger-operations', format: 'webhook' as const, url: 'http://127.0.0.1:9/x', routingKey: null, headers: {}, target: 'http://127.0.0.1:9/…' };

  it('keeps at most max_per_route alerts per route, past SLA and oldest first, the rest in one summary', () => {
    const planned = planAlerts({ ...base, results: [result(7)], breaks: outcomes(7), routes: new Map([['ledger-operations', route]]) }, AlertsConfig.parse({ max_per_route: 3 }));
    expect(planned.map((a) => [a.event, a.break_id])).toEqual([['opened', 'brk-6'], ['opened', 'brk-5'], ['summary', 'more-ledger-operations']]);
    expect(planned[2].more).toEqual({ count: 5, by: { 'RC03 POSTING_SET_UNBALANCED': 5 } });
  });

  it('routes to the default route when the owner has none, else leaves the alert unrouted', () => {
    const planned = planAlerts({ ...base, results: [result(1)], breaks: outcomes(1), routes: new Map([['ops', { ...route, name: 'ops' }]]) }, AlertsConfig.parse({ default_route: 'ops' }));
    expect(planned.map((a) => a.route)).toEqual(['ops']);
    const unrouted = planAlerts({ ...base, results: [result(1)], breaks: outcomes(1), routes: new Map() }, AlertsConfig.parse({}));
    expect(unrouted.map((a) => a.route)).toEqual([null]);
  });
});
