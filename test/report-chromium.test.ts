/**
 * The run report (issue 9) in real headless Chromium (Debian's `chromium`, driven by playwright-core
 * with a fresh user-data-dir): a real run of the bundled sample day into a temp store and
 * `reckon report`, both through the CLI in this process (the file written is under test, not the
 * process), then the page opened from disk with JavaScript off. Checks
 * that every control's status is visible, that nothing is fetched, and compares a full-page
 * screenshot structurally (dimensions within bounds, key elements laid out and non-empty), not
 * pixel by pixel. Hostile values are rendered with JavaScript on, to prove none becomes markup.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckonHere, scratchDir } from './helpers/cli.js';
import { renderReport } from '../pipeline/report/render-report.js';
import { esc, formatAge } from '../pipeline/report/html.js';
import type { RunView, StoredManifest } from '../pipeline/report/run-view.js';
import { SAMPLE_DAY as SOURCES } from './fixtures/days.js';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const VIEWPORT = { width: 1280, height: 900 };

let tmp: { dir: string; cleanup: () => void };
let store: string;
let runId: string;
let manifest: any;
let reportPath: string;

/** Runs `fn` in a fresh Chromium profile; records every request the page makes. */
async function withChromium<T>(javaScriptEnabled: boolean, fn: (ctx: BrowserContext, requests: string[]) => Promise<T>): Promise<T> {
  const profile = mkdtempSync(join(tmpdir(), 'reckon-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, javaScriptEnabled, viewport: VIEWPORT, offline: true,
  });
  const requests: string[] = [];
  ctx.on('request', (r) => { requests.push(r.url()); });
  try {
    return await fn(ctx, requests);
  } finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Width and height of a PNG from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

beforeAll(async () => {
  tmp = scratchDir('reckon-report-');
  store = join(tmp.dir, 'store');
  const r = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--json', '--quiet']);
  expect(r.code, r.stderr).toBe(1);
  runId = r.json.run_id;
  manifest = JSON.parse(readFileSync(r.json.manifest.path, 'utf8'));
  reportPath = join(tmp.dir, 'report.html');
  const w = await reckonHere(['report', '--run', runId, '--store', store, '--out', reportPath]);
  expect(w.code, w.stderr).toBe(0);
});

afterAll(() => tmp?.cleanup());

describe('reckon report', () => {
  it('writes one static file with no script and no external reference', () => {
    const html = readFileSync(reportPath, 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|<iframe|<img|@import|url\(/i);
    // No src and no href but in-page links (a difference to its break's history, issue 19).
    expect(html).not.toMatch(/src=|href="(?!#)|href=[^"]/i);
    expect(html).toMatch(/href="#break-brk-/);
    expect(html).toContain(`default-src 'none'`);
    expect(html).toContain('[2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z)');
  });

  it('refuses to overwrite and names an unknown run (exit 2)', async () => {
    const again = await reckonHere(['report', '--run', runId, '--store', store, '--out', reportPath]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already exists');
    const unknown = await reckonHere(['report', '--run', 'run-unknown', '--store', store, '--out', join(tmp.dir, 'x.html')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no published manifest for run run-unknown');
  });

  it('renders in headless Chromium without JavaScript, every control status visible, nothing fetched', async () => {
    await withChromium(false, async (ctx, requests) => {
      const page = await ctx.newPage();
      await page.goto(pathToFileURL(reportPath).href);
      expect(manifest.results.length).toBe(6);
      for (const r of manifest.results) {
        const cell = page.locator(`tr[data-control="${r.control_id}"] td.status`);
        expect(await cell.isVisible()).toBe(true);
        expect((await cell.innerText()).trim()).toBe(r.status);
        const box = (await cell.boundingBox())!;
        expect(box.width).toBeGreaterThan(20);
        expect(box.height).toBeGreaterThan(10);
        expect(box.x + box.width).toBeLessThanOrEqual(VIEWPORT.width);
      }
      expect(await page.title()).toBe(`reckon run ${runId}`);
      // The SLA chart shows breached breaks in red (the sample day has them) with a text legend.
      expect(await page.locator('#chart-state rect.seg-breached').count()).toBeGreaterThan(0);
      expect(await page.locator('#chart-state rect.seg-breached').first().getAttribute('fill')).toBe('#c62828');
      expect(await page.locator('#chart-state .legend').innerText()).toContain('SLA breached');
      const openRow = page.locator('table.by-state tbody tr').first();
      // 41 open breaks: 27 past their SLA, 2 at 75 % of it or more, 12 within it (age = as-of − first record time).
      expect((await openRow.innerText()).replace(/\s+/g, ' ')).toBe('OPEN 41 27 2 12 0');
      expect(requests.every((u) => u.startsWith('file://'))).toBe(true);
    });
  });

  it('matches the expected layout in a full-page screenshot (structural comparison)', async () => {
    await withChromium(false, async (ctx) => {
      const page = await ctx.newPage();
      await page.goto(pathToFileURL(reportPath).href);
      // More than 40 breaks: the list starts folded; a reader opens it (no script needed).
      const list = page.locator('#breaks details');
      expect(await list.getAttribute('open')).toBeNull();
      await list.locator('summary').click();
      expect(await list.getAttribute('open')).toBe('');
      await page.locator('header.page h1').scrollIntoViewIfNeeded(); // back to the top: boxes are measured from there
      const png = await page.screenshot({ fullPage: true });
      const { width, height } = pngSize(png);
      expect(width).toBe(VIEWPORT.width); // nothing overflows sideways
      expect(height).toBeGreaterThan(3000);
      expect(height).toBeLessThan(40000);
      // Issue 19: the headline and the owners lead; provenance and hashes (#summary) come last.
      const order = ['header.page h1', '#headline', '#owners table', '#controls table', '#differences-by-kind table', 'table.by-state', '#chart-state svg', '#chart-age svg',
        'table.break-list', 'table.break-history', '#differences', '#totals', 'table.watermarks', '#quarantine table', '#summary dl.facts'];
      let lastY = -1;
      for (const sel of order) {
        const el = page.locator(sel).first();
        expect(await el.isVisible(), sel).toBe(true);
        const box = (await el.boundingBox())!;
        expect(box, sel).not.toBeNull();
        expect(box.width, sel).toBeGreaterThan(100);
        expect(box.height, sel).toBeGreaterThan(15);
        expect(box.x, sel).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, sel).toBeLessThanOrEqual(width + 1);
        expect(box.y, sel).toBeGreaterThan(lastY);
        expect(box.y + box.height, sel).toBeLessThanOrEqual(height + 1);
        lastY = box.y;
      }
      // Each chart draws one row per state / age bucket, and the image of the chart is not blank.
      expect(await page.locator('#chart-state svg > text[text-anchor="end"]').count()).toBe(6);
      const chartPng = await page.locator('#chart-state svg').screenshot();
      expect(pngSize(chartPng).width).toBeGreaterThan(500);
      expect(await page.locator('table.watermarks tbody tr').count()).toBe(Object.keys(manifest.sources.datasets).length);
    });
  });
});

describe('hostile values', () => {
  const HOSTILE = `<img src=x onerror="document.title='pwned'">`;
  const SCRIPT = `</td></tr></table><script>document.title='pwned'</script>`;

  it('are escaped everywhere: no markup, no script, no request even with JavaScript on', async () => {
    const m = JSON.parse(JSON.stringify(manifest));
    m.reason = `"><iframe src="https://example.invalid/"></iframe>`;
    m.sources.location = `</title>${SCRIPT}`;
    m.results[0].differences[0].key = HOSTILE;
    m.results[0].differences[0].detail = SCRIPT;
    m.results[1].totals[`n' onmouseover='x`] = `<b>1</b>`;
    m.quarantine = { count: 1, listed: 1, entries: [{ dataset: 'orders', file: `orders/${HOSTILE}.csv`, row: 1, line: 2, column: 'order_id', rule: 'id_form', message: SCRIPT, raw: `\u0000${SCRIPT}` }] };
    m.notes = [HOSTILE];
    const stored: StoredManifest = { key: `manifests/00000001-${runId}.json`, sequence: 1, run_id: runId, bytes: Buffer.from('{}'), sha256: '0'.repeat(64), sidecar: undefined, manifest: m };
    const view: RunView = {
      stored,
      breaks: [{ break_id: 'brk-000000000000000000000000', control_id: 'RC01', kind: 'ORDER_VERSION_GAP', key: HOSTILE, state: 'OPEN', version: 1, run_disposition: 'OPENED',
        first_record_time: '2026-11-02T10:00:00Z', age_us: 300_000_000n, sla_s: 120, sla: 'breached', owner: null, events: [], observations: [] }],
    };
    const html = renderReport([view], { generated_at: '2026-11-03T01:00:00.000Z', store: `/var/${HOSTILE}` });
    expect(html).not.toMatch(/<script|<img|<iframe/i);
    const file = join(tmp.dir, 'hostile.html');
    writeFileSync(file, html);
    await withChromium(true, async (ctx, requests) => {
      const page = await ctx.newPage();
      await page.goto(pathToFileURL(file).href);
      expect(await page.title()).toBe(`reckon run ${runId}`);
      expect(await page.locator('script, img, iframe').count()).toBe(0);
      const text = await page.locator('body').innerText();
      expect(text).toContain(HOSTILE);
      expect(text).toContain(SCRIPT);
      expect(text).toContain('\\x00');
      expect(requests.every((u) => u.startsWith('file://'))).toBe(true);
      // The page still has all six controls, each status visible.
      for (const r of m.results) expect(await page.locator(`tr[data-control="${r.control_id}"] td.status`).isVisible()).toBe(true);
    });
  });

  it('esc and formatAge are exact', () => {
    expect(esc(`<a href="x">'&\`</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#96;&lt;/a&gt;');
    expect(esc(null)).toBe('');
    expect(esc(12n)).toBe('12');
    expect(formatAge(50_700_000_000n)).toEqual({ seconds: '50700', human: '14 h 5 min' });
    expect(formatAge(250_000n)).toEqual({ seconds: '0.25', human: '0.25 s' });
    expect(formatAge(93_784_000_001n)).toEqual({ seconds: '93784.000001', human: '1 d 2 h' });
  });
});
