/**
 * The break console (issue 22) in Debian's Chromium driven by playwright-core: the sample day run
 * into a temp store with the demo signers (fixtures/demo), console A (olivia's key) started in
 * this process, console B (amy's key) as a child process (`reckon console --port 0`), one browser
 * for the file with a context per operator. The flow: queue → RC03 past SLA → a break → triage →
 * propose CONTAINED as olivia → countersign as amy in console B → CONTAINED, both signatures
 * verified, chain intact, `reckon manifest verify` passes. Then a stale form, keyboard-only use,
 * labelled fields, a read-only console, screenshots (var/screenshots/), and last an event edited
 * on disk shown as failing verification.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckonAsync, reckonIn, ROOT, scratchDir } from './helpers/cli.js';
import { startConsole, type RunningConsole } from '../pipeline/console/server.js';
import { loadConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { openStore } from '../pipeline/store/open-store.js';
import { breakId } from '../pipeline/breaks/break-id.js';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const CONFIG = join(ROOT, 'fixtures', 'demo', 'reckon.yaml');
const KEY = (name: string) => join(ROOT, 'fixtures', 'demo', 'keys', name);
const SHOTS = join(ROOT, 'var', 'screenshots');
/** The break of the flow: RC03's posting amount difference of the sample day (past its SLA of 0 s). */
const FLOW = breakId('RC03', 'POSTING_AMOUNT_MISMATCH', 'EXE-000280-1');

let tmp: { dir: string; cleanup: () => void };
let store: string;
let a: RunningConsole;
let bProc: ChildProcess;
let bUrl: string;
let browser: Browser;
let ctxA: BrowserContext;
let ctxB: BrowserContext;
const foreign: string[] = [];

async function consoleB(): Promise<string> {
  bProc = reckonAsync(['console', '--store', store, '--config', CONFIG, '--key', KEY('amy'), '--port', '0']);
  return new Promise((resolve, reject) => {
    let out = '';
    bProc.stdout!.on('data', (d) => {
      out += String(d);
      const m = /reckon console: (http:\/\/127\.0\.0\.1:[0-9]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    bProc.once('exit', (code) => reject(new Error(`console B exited ${code}: ${out}`)));
  });
}

async function context(): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  ctx.on('request', (r) => { if (!r.url().startsWith('http://127.0.0.1:')) foreign.push(r.url()); });
  return ctx;
}

/** Every visible form control of the page that has neither a label nor an aria-label. */
async function unlabelled(page: Page): Promise<string[]> {
  return page.$$eval('input:not([type=hidden]), select, textarea', (els) => els
    .filter((e) => !((e as HTMLInputElement).labels?.length) && !e.getAttribute('aria-label'))
    .map((e) => e.outerHTML.slice(0, 80)));
}

/** Presses Tab until the focused element matches `selector` (at most `max` times); returns how many. */
async function tabTo(page: Page, selector: string, max = 60): Promise<number> {
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return i;
  }
  throw new Error(`Tab never reached ${selector}`);
}

const eventFiles = (id: string) => readdirSync(join(store, 'breaks', id, 'events')).sort();

beforeAll(async () => {
  tmp = scratchDir('reckon-console-');
  store = join(tmp.dir, 'store');
  const run = await reckonIn(['run', '--date', '2026-11-02', '--sources', 'fixtures/sample-day/sources', '--store', store, '--config', CONFIG, '--json', '--quiet']);
  expect(run.code, run.stderr).toBe(1);
  const controls = await loadControls();
  a = await startConsole({ store: await openStore(store), config: await loadConfig(CONFIG, controls), controls, key: { file: KEY('olivia') }, port: 0, refreshMs: 0 });
  await a.verified;
  bUrl = await consoleB();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  ctxA = await context();
  ctxB = await context();
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  bProc?.kill('SIGTERM');
  await a?.close();
  tmp?.cleanup();
});

describe('reckon console in Chromium', () => {
  it('works a break end to end: filter, triage, propose as olivia, countersign as amy in a second console', async () => {
    const page = await ctxA.newPage();
    await page.goto(a.url);
    expect(await page.textContent('header .who')).toContain('acting as olivia');
    await page.selectOption('#f-control', 'RC03');
    await page.selectOption('#f-sla', 'breached');
    await page.click('button:has-text("Apply")');
    expect(new URL(page.url()).search).toBe('?control=RC03&sla=breached');
    expect(await page.textContent('#match-count')).toBe('6');
    const csv = await (await page.request.get(`${a.url}/queue.csv?control=RC03&sla=breached`)).text();
    expect(csv.trimEnd().split('\r\n')).toHaveLength(7);
    expect(csv).toContain(`${FLOW},RC03,POSTING_AMOUNT_MISMATCH,EXE-000280-1,OPEN,1,ledger-operations,false,,65861.332894,0,true`);

    await page.click(`a[href="/breaks/${FLOW}"]`);
    expect(await page.locator('table[data-side="execution"] tbody tr').allTextContents()).toEqual(['executionsexecutions/part-00001.jsonl361EXE-000280-1']);
    expect(await page.locator('table[data-side="ledger"] tbody tr').allTextContents()).toEqual([
      'ledger_postingsledger_postings/part-00001.csv955PS-T000280-1|1', 'ledger_postingsledger_postings/part-00001.csv956PS-T000280-1|2',
    ]);
    expect(await page.textContent('#records-source')).toBe('3 record(s), read from the run\'s verified difference_records output');
    await page.selectOption('#a-owner', 'olivia');
    await page.selectOption('#a-class', 'VALUE');
    await page.fill('#a-note', 'posting rounded half up; <b>not</b> markup');
    await page.click('button:has-text("Move to TRIAGED")');
    expect(await page.textContent('#flash')).toContain('OPEN → TRIAGED by olivia; version 2');
    expect(await page.locator('td:has-text("<b>not</b> markup")').count()).toBeGreaterThan(0);

    await page.selectOption('#a-approver', 'amy');
    await page.click('button:has-text("Propose CONTAINED")');
    expect(await page.textContent('#flash')).toContain('TRIAGED → CONTAINED proposed by olivia for version 3; it lands when amy countersigns');
    expect(await page.textContent('.proposal')).toContain('PENDING');
    expect(await page.textContent('.proposal')).toContain('Approve unavailable');

    const pageB = await ctxB.newPage();
    await pageB.goto(`${bUrl}/breaks/${FLOW}`);
    await pageB.click('button:has-text("Approve CONTAINED")');
    expect(await pageB.textContent('#flash')).toContain('TRIAGED → CONTAINED by olivia, countersigned by amy; version 3');
    const v3 = pageB.locator('table[aria-label="Events"] tbody tr').nth(2);
    expect(await v3.locator('li').allTextContents()).toEqual([
      expect.stringMatching(/^✓ verified actor olivia SHA256:/),
      expect.stringMatching(/^✓ verified approver amy SHA256:/),
    ]);
    expect(await pageB.textContent('#chain-status')).toContain('Chain intact: 3 event(s)');
    expect(await pageB.textContent('dl.kv')).toContain('CONTAINED version 3');
    await pageB.screenshot({ path: join(SHOTS, 'break.png'), fullPage: true });

    const verify = await reckonIn(['manifest', 'verify', '--store', store]);
    expect(verify.code, verify.stdout).toBe(0);
    expect(verify.stdout).toContain('3 event(s): 2 signed (1 countersigned)');
    expect(eventFiles(FLOW)).toEqual(['000001.json', '000002.json', '000003.json']);
  });

  it('a stale form gets the lost-race message and writes nothing', async () => {
    const id = breakId('RC03', 'EXECUTION_MULTIPLE_POSTINGS', 'EXE-000271-1');
    const page = await ctxA.newPage();
    await page.goto(`${a.url}/breaks/${id}`);
    await page.selectOption('#a-owner', 'olivia');
    await page.selectOption('#a-class', 'DUPLICATE');
    const cli = await reckonIn(['breaks', 'advance', id, '--to', 'TRIAGED', '--expected-version', '1', '--owner', 'olivia', '--classification', 'TIMING', '--store', store, '--config', CONFIG, '--key', KEY('tom')]);
    expect(cli.code, cli.stderr).toBe(0);
    const [resp] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/advance')), page.click('button:has-text("Move to TRIAGED")')]);
    expect(resp.status()).toBe(409);
    expect(await page.textContent('#flash')).toContain('This break moved on while you were looking: your page showed version 1, it is now TRIAGED at version 2. Nothing was written');
    expect(eventFiles(id)).toEqual(['000001.json', '000002.json']);
    expect(JSON.parse(JSON.parse(readFileSync(join(store, 'breaks', id, 'events', '000002.json'), 'utf8')).payload).evidence.classification).toBe('TIMING');
  });

  it('is usable with the keyboard alone: filter the queue, open a break, triage it', async () => {
    const page = await ctxA.newPage();
    await page.goto(a.url);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await tabTo(page, '#f-control');
    await page.keyboard.type('RC03');
    await tabTo(page, '#f-q');
    await page.keyboard.type('EXE-000255');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=EXE-000255/);
    expect(new URL(page.url()).searchParams.get('control')).toBe('RC03');
    expect(await page.textContent('#match-count')).toBe('1');
    const id = breakId('RC03', 'EXECUTION_WITHOUT_POSTING', 'EXE-000255-2');
    await tabTo(page, `a[href="/breaks/${id}"]`);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/breaks/${id}$`));
    await tabTo(page, '#a-owner');
    await page.keyboard.type('olivia');
    await page.keyboard.press('Tab');
    await page.keyboard.type('MISSING');
    await tabTo(page, '#a-note');
    await page.keyboard.type('keyboard only');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#flash');
    expect(await page.textContent('#flash')).toContain('OPEN → TRIAGED by olivia; version 2');
    expect(await page.textContent('dl.kv')).toContain('MISSING');
  });

  it('labels every form field of the queue, a break page and the ageing page', async () => {
    const page = await ctxA.newPage();
    for (const path of ['/', `/breaks/${breakId('RC06', 'NOTICE_UNDELIVERED', 'INT-000288')}`, `/breaks/${FLOW}`, '/ageing', '/runs', '/verify']) {
      await page.goto(`${a.url}${path}`);
      expect(await unlabelled(page), path).toEqual([]);
    }
  });

  it('a console without a key is read-only and says so', async () => {
    const controls = await loadControls();
    const ro = await startConsole({ store: await openStore(store), config: await loadConfig(CONFIG, controls), controls, key: null, port: 0, refreshMs: 0 });
    try {
      await ro.verified;
      const page = await ctxA.newPage();
      await page.goto(`${ro.url}/breaks/${breakId('RC06', 'NOTICE_UNDELIVERED', 'INT-000288')}`);
      expect(await page.textContent('.banner.warn')).toContain('Read-only console: started without a signing key');
      expect(await page.textContent('#action-why')).toContain('TRIAGED unavailable: started without a signing key');
      expect(await page.locator('form[action$="/advance"]').count()).toBe(0);
    } finally {
      await ro.close();
    }
  });

  it('saves screenshots of the queue and the ageing page; nothing is fetched from elsewhere', async () => {
    await a.state.index.refreshChanged();
    const page = await ctxA.newPage();
    await page.goto(`${a.url}/?control=RC03`);
    await page.screenshot({ path: join(SHOTS, 'queue.png'), fullPage: false });
    await page.goto(`${a.url}/ageing`);
    expect(await page.locator('svg[role=img]').count()).toBe(3);
    await page.screenshot({ path: join(SHOTS, 'ageing.png'), fullPage: true });
    for (const f of ['queue.png', 'break.png', 'ageing.png']) expect(readFileSync(join(SHOTS, f)).subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(foreign).toEqual([]);
  });

  it('shows a break whose event was edited on disk as failing verification, and the store check fails', async () => {
    const id = breakId('RC03', 'POSTING_SET_UNBALANCED', 'PS-F000246-1|JPY');
    const file = join(store, 'breaks', id, 'events', '000001.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('PS-F000246-1|JPY', 'PS-F000246-9|JPY'));
    const page = await ctxA.newPage();
    await page.goto(`${a.url}/breaks/${id}`);
    const status = await page.textContent('#chain-status');
    expect(status).toContain('This break fails verification');
    expect(status).toContain(`breaks/${id}/events/000001.json`);
    await page.goto(`${a.url}/verify`);
    await page.click('button:has-text("Verify again")');
    expect(await page.textContent('#verify-status')).toContain('This store fails verification');
    await page.goto(`${a.url}/breaks/${breakId('RC06', 'NOTICE_UNDELIVERED', 'INT-000288')}`);
    expect(await page.textContent('.banner.bad')).toContain('This store fails verification');
    expect(await page.textContent('#action-why')).toContain('the store fails verification');
  });
});
