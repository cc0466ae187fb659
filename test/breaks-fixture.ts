/**
 * A tiny RC06 source set for break tests, written from CONTRACT §2 alone: two required
 * notification intents on 2026-11-02, one delivered, and one whose only receipt FAILED — the
 * faulty row. `fix()` turns that receipt into DELIVERED (the correction), `breakAgain()` puts the
 * fault back. Every dataset RC06 reads has a declared watermark (default 2026-11-03T00:05:00Z).
 *
 * The faulty intent INT-2 was created at 2026-11-02T10:00:00.000001Z, so with the default
 * watermark (the control's as-of) its NOTICE_UNDELIVERED break is 50699.999999 s old.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reckon, scratchDir } from './helpers/cli.js';
import { breakId } from '../pipeline/breaks/break-id.js';

export const WINDOW = '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z';
export const FAULT = { control_id: 'RC06', kind: 'NOTICE_UNDELIVERED', key: 'INT-2' } as const;

const INTENTS = [
  'created_at,intent_id,authority_ref,template_version,channel,required,expires_at',
  '2026-11-02T09:00:00Z,INT-1,ORD-1,fill-v3,EMAIL,true,2026-11-03T09:00:00Z',
  '2026-11-02T10:00:00.000001Z,INT-2,ORD-2,fill-v3,EMAIL,true,2026-11-03T10:00:00Z',
];
const receipts = (status: 'FAILED' | 'DELIVERED') => [
  'provider_time_local,provider_timezone,receipt_id,intent_id,channel,status',
  '2026-11-02T09:01:00,Europe/London,RCP-1,INT-1,EMAIL,DELIVERED',
  `2026-11-02T10:01:00,Europe/London,RCP-2,INT-2,EMAIL,${status}`,
];

/** The source folder and the operations a test performs on it. */
export interface Rc06Sources {
  readonly dir: string;
  fix(): void;
  breakAgain(): void;
  setWatermark(ts: string): void;
}

/** Writes the faulty source set under `root/sources` and returns it. */
export function rc06Sources(root: string, watermark = '2026-11-03T00:05:00Z'): Rc06Sources {
  const dir = join(root, 'sources');
  const write = (dataset: string, lines: string[]) => {
    mkdirSync(join(dir, dataset), { recursive: true });
    writeFileSync(join(dir, dataset, 'part-0001.csv'), `${lines.join('\n')}\n`);
  };
  const setWatermark = (ts: string) => {
    for (const d of ['notification_intents', 'notification_receipts', 'notification_exceptions']) {
      mkdirSync(join(dir, d), { recursive: true });
      writeFileSync(join(dir, d, '_watermark.json'), JSON.stringify({ watermark: ts, complete: true }));
    }
  };
  write('notification_intents', INTENTS);
  write('notification_receipts', receipts('FAILED'));
  write('notification_exceptions', ['approved_at,intent_id,approved_by,reason']);
  setWatermark(watermark);
  return {
    dir,
    fix: () => write('notification_receipts', receipts('DELIVERED')),
    breakAgain: () => write('notification_receipts', receipts('FAILED')),
    setWatermark,
  };
}

/** The id of the fixture's break. */
export const ID = breakId(FAULT.control_id, FAULT.kind, FAULT.key);

/** A scratch folder with the faulty sources, a store, and CLI shortcuts on them. */
export function setup(prefix: string) {
  const tmp = scratchDir(prefix);
  const src = rc06Sources(tmp.dir);
  const store = join(tmp.dir, 'store');
  const run = (extra: string[] = [], window = WINDOW) => reckon(['run', '--control', 'RC06', '--window', window, '--sources', src.dir, '--store', store, '--json', '--quiet', ...extra]);
  const advance = (to: string, version: number, ...args: string[]) => reckon(['breaks', 'advance', ID, '--to', to, '--expected-version', String(version), '--store', store, '--json', ...args]);
  const show = () => reckon(['breaks', 'show', ID, '--store', store, '--json']).json;
  const list = (...args: string[]) => reckon(['breaks', 'list', '--store', store, '--json', ...args]).json;
  return { tmp, src, store, run, advance, show, list };
}

/** The disposition a run's --json gave the fixture's difference. */
export function dispositionOf(r: { json?: { controls: { differences: { kind: string; key: string; disposition: string }[] }[] } }): string | undefined {
  return r.json?.controls[0].differences.find((d) => d.kind === FAULT.kind && d.key === FAULT.key)?.disposition;
}
