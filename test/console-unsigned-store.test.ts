/**
 * The console on the store `npm start` makes (the sample day run without a configuration: no
 * signer registry, manifests not signed): `reckon console --store S --port 0` starts read-only
 * instead of exiting 2, serves the queue and break pages, draws no action form, says why and how
 * to act, and refuses a transition posted anyway (nothing written).
 */
import { appendFileSync, cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, reckonAsync, reckonIn, scratchDir } from './helpers/cli.js';
import { breakId } from '../pipeline/breaks/break-id.js';

const WHY = 'break transitions are signed and no configuration was given (--config FILE), so it names no signer registry (signing.registry); '
  + 'to act, start the console with --config FILE naming one and --key FILE (the demo: --config fixtures/demo/reckon.yaml --key fixtures/demo/keys/olivia), '
  + 'or say signing.unsigned: true in the configuration and give --actor NAME';
const NOTICE = breakId('RC06', 'NOTICE_UNDELIVERED', 'INT-000288');

let tmp: { dir: string; cleanup: () => void };
let store: string;
let sources: string;
let proc: ChildProcess;
let url: string;
let firstLine: string;

function startConsole(): Promise<{ url: string; line: string }> {
  proc = reckonAsync(['console', '--store', store, '--port', '0']);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stderr!.on('data', (d) => { err += String(d); });
    proc.stdout!.on('data', (d) => {
      out += String(d);
      const m = /^reckon console: (http:\/\/127\.0\.0\.1:[0-9]+) (.*)\n/.exec(out);
      if (m) resolve({ url: m[1], line: m[2] });
    });
    proc.once('exit', (code) => reject(new Error(`console exited ${code}: ${out}${err}`)));
  });
}

beforeAll(async () => {
  tmp = scratchDir('reckon-console-unsigned-');
  store = join(tmp.dir, 'store');
  sources = join(tmp.dir, 'sources');
  cpSync(join(ROOT, 'fixtures', 'sample-day', 'sources'), sources, { recursive: true });
  const run = await reckonIn(['run', '--date', '2026-11-02', '--sources', sources, '--store', store, '--json', '--quiet']);
  expect(run.code, run.stderr).toBe(1);
  ({ url, line: firstLine } = await startConsole());
});

afterAll(() => {
  proc?.kill('SIGTERM');
  tmp?.cleanup();
});

describe('reckon console on a store without a signer registry', () => {
  it('starts read-only and says why on its first line', () => {
    expect(firstLine).toBe(`read-only: ${WHY}`);
  });

  it('serves the queue and a break page with the reason and no action form', async () => {
    const queue = await fetch(`${url}/`);
    expect(queue.status).toBe(200);
    const q = await queue.text();
    expect(q).toContain(`<p class="banner warn" role="status">Read-only console: ${WHY}. Nothing can be changed here; actions are shown with why they are unavailable.</p>`);
    expect(q).toContain(`href="/breaks/${NOTICE}"`);
    const page = await (await fetch(`${url}/breaks/${NOTICE}`)).text();
    expect(page).toContain(`<p class="why" id="action-why">TRIAGED unavailable: ${WHY}</p>`);
    expect(page).not.toContain('action="/breaks/');
  });

  it('refuses a transition posted anyway and writes nothing', async () => {
    const verify = await fetch(`${url}/verify`);
    const cookie = verify.headers.get('set-cookie')!.split(';')[0];
    const csrf = /name="csrf" value="([0-9a-f]+)"/.exec(await verify.text())![1];
    const before = readdirSync(join(store, 'breaks', NOTICE, 'events'));
    const res = await fetch(`${url}/breaks/${NOTICE}/advance`, {
      method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, expected_version: '1', to: 'TRIAGED', owner: 'olivia', classification: 'MISSING' }).toString(),
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain(WHY);
    expect(readdirSync(join(store, 'breaks', NOTICE, 'events'))).toEqual(before);
    expect(before).toEqual(['000001.json']);
  });

  it('notes an input changed since its run on the store check, and still verifies the store', async () => {
    const file = readdirSync(join(sources, 'orders')).filter((f) => f.endsWith('.csv')).sort()[0];
    appendFileSync(join(sources, 'orders', file), '\n');
    const page = await fetch(`${url}/verify`);
    const cookie = page.headers.get('set-cookie')!.split(';')[0];
    const csrf = /name="csrf" value="([0-9a-f]+)"/.exec(await page.text())![1];
    const res = await fetch(`${url}/verify`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf }).toString() });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain('The store verifies: 1 manifest(s), chain intact');
    expect(text).toContain('1 manifest(s) are NOT signed: a consistent rewrite of those cannot be detected.');
    expect(text).toMatch(new RegExp(`<ul id="inputs-changed"><li><span class="mono">manifests/00000001-run-[^<]+\\.json</span>: input orders/${file} in ${sources} changed since the run: SHA-256 [0-9a-f]{64} ≠ recorded [0-9a-f]{64} \\(outside the store`));
  });
});
