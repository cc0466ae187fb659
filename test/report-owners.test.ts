/**
 * The run report leads with what matters (issue 19, item 9): a headline (breaks, new, past SLA,
 * by owner), the owners with their contact, route, runbook and first step (from the control
 * definitions, overridden by the run's configuration), each difference linked to its break's
 * history, and provenance and hashes last. One RC06 run in process, the page read as text
 * (report-chromium.test.ts lays it out in a real browser).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reckonIn, scratchDir } from './helpers/cli.js';
import { ID, WINDOW, rc06Sources } from './fixtures/breaks.js';

const tmp = scratchDir('reckon-report-owners-');
afterAll(() => tmp.cleanup());
let html: string;

beforeAll(async () => {
  const src = rc06Sources(tmp.dir);
  const store = join(tmp.dir, 'store');
  const config = join(tmp.dir, 'config.json');
  writeFileSync(config, JSON.stringify({
    controls: { RC06: { by_kind: { NOTICE_UNDELIVERED: { owner: 'payments-ops', owner_name: 'Payments operations', contact: '#payments-oncall' } } } },
    runbooks: { RBK06: { link: 'https://wiki.example/rbk06' } },
  }));
  const run = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--config', config, '--json', '--quiet']);
  expect(run.code, run.stderr).toBe(1);
  const out = join(tmp.dir, 'report.html');
  const r = await reckonIn(['report', '--run', 'latest', '--store', store, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  html = readFileSync(out, 'utf8');
});

it('leads with a headline: status, open breaks, new, past SLA and breaks by owner', () => {
  const body = html.slice(html.indexOf('<article'));
  expect(body.indexOf('id="headline"')).toBeLessThan(body.indexOf('id="owners"'));
  expect(body.indexOf('id="owners"')).toBeLessThan(body.indexOf('id="controls"'));
  const headline = /<section id="headline"[^>]*>(.*?)<\/section>/s.exec(html)![1].replace(/<[^>]+>/g, '');
  expect(headline).toMatch(/^BREAKS 1 open break\(s\): 1 new, 0 reopened, 0 re-observed, 1 past SLA; 0 timing\.By owner: payments-ops 1\. Window \[2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z\), run run-[0-9a-z-]+, quarantined 0\.$/);
});

it('names the owner of each break with contact, route and the runbook’s first step, the configuration over the definition', () => {
  const owners = /<section id="owners">(.*?)<\/section>/s.exec(html)![1].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
  expect(owners).toContain('Payments operations payments-ops #payments-oncall payments-ops 1 1 1');
  expect(owners).toContain('RBK06 External exchange or bank timeout ( https://wiki.example/rbk06 ): Do not repeat effect; open circuit for optional requests; preserve intent and block conflict');
  expect(owners).toContain('reckon breaks list --owner payments-ops --store');
  // The control's own owner (the definition's) in the controls table.
  expect(/<tr data-control="RC06">.*?<\/tr>/s.exec(html)![0]).toContain('Notification owner <span class="mono muted">notification-owner</span>');
});

it('links each difference to its break’s history, and puts provenance and hashes last', () => {
  expect(html).toContain(`<a class="mono" href="#break-${ID}">${ID}</a>`);
  const row = new RegExp(`<tr id="break-${ID}">(.*?)</tr>`, 's').exec(html)![1];
  expect(row).toMatch(/new → OPEN<\/span> <span class="mono">20[0-9-]+T[0-9:.]+Z<\/span> <span class="tok">reconciler<\/span>/);
  const body = html.slice(html.indexOf('<article'));
  expect(body.indexOf('id="quarantine"')).toBeLessThan(body.indexOf('id="summary"'));
  expect(body.indexOf('<h2>Provenance and hashes</h2>')).toBeGreaterThan(body.indexOf('id="differences"'));
});
