/**
 * A ready window with no records (CONTRACT §2: an empty dataset with a watermark is ready): every
 * control closes CLEAN with its zero totals. RC05's totals are all keyed, so its totals query
 * returns no rows at all; that once ended the run with exit 70 (an internal error) and published
 * nothing for any control.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, reckonIn, scratchPerTest } from './helpers/cli.js';

const SAMPLE = join(ROOT, 'fixtures', 'sample-day', 'sources');
const WATERMARK = '{"watermark":"2026-11-03T00:01:00Z","complete":true}';
const scratch = scratchPerTest('reckon-empty-window-');

/** A sources folder of `datasets`, each a watermark and the given files (name → text). */
function sources(datasets: readonly string[], files: Record<string, string> = {}): string {
  const root = join(scratch(), 'sources');
  for (const d of datasets) {
    mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(root, d, '_watermark.json'), WATERMARK);
  }
  for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
  return root;
}

const run = (src: string, select: string[]) =>
  reckonIn(['run', ...select, '--date', '2026-11-02', '--sources', src, '--store', join(src, '..', 'store'), '--json']);

describe('a ready window with no records', () => {
  it('RC05 over a header-only positions file, an empty executions file and no projection rows is CLEAN with no totals', async () => {
    const src = sources(['positions', 'executions', 'portfolio_projection'], {
      'positions/part-00001.csv': 'as_of,account_id,instrument_id,quantity,cost_minor,cost_currency\n',
      'executions/part-00001.jsonl': '',
    });
    const r = await run(src, ['--control', 'RC05']);
    expect(r.code).toBe(0);
    expect(r.json.status).toBe('CLEAN');
    expect(r.json.controls.map((c: any) => [c.control_id, c.status, c.totals, c.differences])).toEqual([['RC05', 'CLEAN', {}, []]]);
  });

  it('all six controls over fifteen datasets holding only their watermarks are CLEAN with zero totals', async () => {
    const r = await run(sources(readdirSync(SAMPLE)), ['--all']);
    expect(r.code).toBe(0);
    expect([r.json.status, r.json.quarantine_count]).toEqual(['CLEAN', 0]);
    const classes = { CANCELED: '0', EXECUTED: '0', PENDING: '0', REJECTED: '0' };
    expect(Object.fromEntries(r.json.controls.map((c: any) => [c.control_id, [c.status, c.totals, c.differences.length]]))).toEqual({
      RC01: ['CLEAN', { accepted_count: '0', class_count: classes, class_ordered_qty: classes }, 0],
      RC02: ['CLEAN', { internal_fill_count: '0', venue_fill_count: '0' }, 0],
      RC03: ['CLEAN', { posting_set_count: '0' }, 0],
      RC04: ['CLEAN', { statement_count: '0' }, 0],
      RC05: ['CLEAN', {}, 0],
      RC06: ['CLEAN', { delivered_count: '0', exception_count: '0', failed_count: '0', intent_count: '0', oldest_undelivered_age_s: '0' }, 0],
    });
  });

  it('a sources folder with no dataset folder at all is NOT_READY (exit 4) for every control, naming the missing folders', async () => {
    const src = sources([]);
    mkdirSync(src, { recursive: true });
    const r = await run(src, ['--all']);
    expect(r.code).toBe(4);
    expect(r.json.controls.map((c: any) => [c.control_id, c.status])).toEqual(['RC01', 'RC02', 'RC03', 'RC04', 'RC05', 'RC06'].map((id) => [id, 'NOT_READY']));
    const rc05 = r.json.controls.find((c: any) => c.control_id === 'RC05');
    expect([...rc05.readiness.reasons].sort()).toEqual(['executions', 'portfolio_projection', 'positions'].map((d) =>
      `${d}: the dataset folder ${d}/ is missing from the sources (an empty dataset without a watermark, CONTRACT §2)`));
  });
});
