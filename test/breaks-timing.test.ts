/**
 * Timing rules and break ageing across real runs (CONTRACT §5): a young difference matched by a
 * timing rule is TIMING and opens only when a later window still observes it; ages are exact to
 * the microsecond on the runs' as-of, and an SLA is breached only when strictly exceeded.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckonIn } from './helpers/cli.js';
import { ID, dispositionOf, setup } from './fixtures/breaks.js';

describe('timing rules', () => {
  let t: ReturnType<typeof setup>;
  beforeAll(() => { t = setup('reckon-breaks-timing-'); });
  afterAll(() => t?.tmp.cleanup());
  const config = (maxAgeS: number) => {
    const path = join(t.tmp.dir, `timing-${maxAgeS}.json`);
    writeFileSync(path, JSON.stringify({ timing_rules: [{ control: 'RC06', kind: 'NOTICE_UNDELIVERED', max_age_s: maxAgeS }] }));
    return path;
  };

  it('records a young difference as TIMING and opens it when a later window still observes it', async () => {
    // end − 50400 s = 2026-11-02T10:00:00Z: the record (10:00:00.000001) is at or after it → TIMING.
    const cfg = config(50400);
    const r1 = await t.run(['--config', cfg]);
    expect(r1.code).toBe(0);
    expect(r1.json.controls[0].status).toBe('CLEAN');
    expect(dispositionOf(r1)).toBe('TIMING');
    expect(await t.list()).toEqual([]);
    // A rerun of the same window is not a later window: still TIMING.
    expect(dispositionOf(await t.run(['--config', cfg]))).toBe('TIMING');
    expect(await t.list()).toEqual([]);
    // One microsecond less of tolerance: the record is before end − max_age → opens at once.
    const strict = await t.run(['--config', config(50399)]);
    expect(dispositionOf(strict)).toBe('OPENED');
    expect(await t.list()).toHaveLength(1);
  });

  it('opens in a later window that still observes it', async () => {
    const u = setup('reckon-breaks-timing-later-');
    try {
      u.src.setWatermark('2026-11-03T06:05:00Z');
      const path = join(u.tmp.dir, 'timing.json');
      writeFileSync(path, JSON.stringify({ timing_rules: [{ control: 'RC06', kind: 'NOTICE_UNDELIVERED', max_age_s: 172800 }] }));
      expect(dispositionOf(await u.run(['--config', path]))).toBe('TIMING');
      expect(await u.list()).toEqual([]);
      // A window ending later that still holds the record: still young by the rule, but it was
      // TIMING in an earlier window, so the break opens now.
      const later = await u.run(['--config', path], '2026-11-02T00:00:00Z/2026-11-03T06:00:00Z');
      expect(dispositionOf(later)).toBe('OPENED');
      const [b] = await u.list();
      expect(b).toMatchObject({ break_id: ID, state: 'OPEN', version: 1, observation_count: 2, window: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T06:00:00Z' } });
      expect((await reckonIn(['breaks', 'show', ID, '--store', u.store, '--json'])).json.observations.map((o: { disposition: string }) => o.disposition)).toEqual(['TIMING', 'OPENED']);
    } finally {
      u.tmp.cleanup();
    }
  });
});

describe('ageing and SLA', () => {
  let t: ReturnType<typeof setup>;
  beforeAll(() => { t = setup('reckon-breaks-sla-'); });
  afterAll(() => t?.tmp.cleanup());
  const withSla = (slaS: number, byKind = false) => {
    const path = join(t.tmp.dir, `sla-${slaS}-${byKind}.yaml`);
    writeFileSync(path, byKind ? `controls:\n  RC06:\n    sla_s: 1\n    sla_s_by_kind:\n      NOTICE_UNDELIVERED: ${slaS}\n` : `controls:\n  RC06:\n    sla_s: ${slaS}\n    owner: notices-desk\n`);
    return path;
  };

  it('is exact to the microsecond and breached only when strictly greater', async () => {
    expect((await t.run()).code).toBe(1);
    const [b] = await t.list();
    expect(b).toMatchObject({ age_s: '50699.999999', sla_s: 3600, sla_breached: true });
    expect((await t.list('--config', withSla(50700)))[0]).toMatchObject({ age_s: '50699.999999', sla_s: 50700, sla_breached: false, owner: 'notices-desk' });
    expect((await t.list('--config', withSla(50699)))[0]).toMatchObject({ sla_s: 50699, sla_breached: true });
    expect((await t.list('--config', withSla(50700, true)))[0]).toMatchObject({ sla_s: 50700, sla_breached: false });
    // A later as-of (the watermark moved on) ages the break: age = largest observed as-of − record time.
    t.src.setWatermark('2026-11-03T00:05:00.000001Z');
    expect((await t.run()).code).toBe(1);
    expect((await t.list('--config', withSla(50700)))[0]).toMatchObject({ age_s: '50700', as_of: '2026-11-03T00:05:00.000001Z', sla_breached: false, observation_count: 2 });
    t.src.setWatermark('2026-11-03T00:05:00.000002Z');
    expect((await t.run()).code).toBe(1);
    expect((await t.list('--config', withSla(50700)))[0]).toMatchObject({ age_s: '50700.000001', sla_breached: true, observation_count: 3 });
    // A rerun at an older as-of does not make it younger.
    t.src.setWatermark('2026-11-03T00:05:00Z');
    expect((await t.run()).code).toBe(1);
    expect((await t.list())[0]).toMatchObject({ age_s: '50700.000001', observation_count: 4 });
  });

  it('refuses a configuration naming an unknown kind, with its path', async () => {
    const path = join(t.tmp.dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ controls: { RC06: { sla_s_by_kind: { NOTICE_LATE: 5 } } }, timing_rules: [{ control: 'RC09', kind: 'X', max_age_s: 1 }] }));
    const r = await reckonIn(['breaks', 'list', '--store', t.store, '--config', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('controls.RC06.sla_s_by_kind.NOTICE_LATE');
    expect(r.stderr).toContain('timing_rules.0.control');
  });
});
