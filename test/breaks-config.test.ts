/**
 * The configuration of breaks (CONTRACT §5): SLAs per control and kind with the contract's
 * defaults, owners, timing rules; JSON or YAML; every problem reported with its path.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchDir } from './helpers/cli.js';
import { controlOwner, defaultConfig, loadConfig, slaSeconds } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { ConfigError } from '../pipeline/core/errors.js';

const controls = await loadControls();
const def = (id: string) => controls.find((c) => c.control_id === id)!;

describe('break configuration', () => {
  let tmp: ReturnType<typeof scratchDir>;
  beforeAll(() => { tmp = scratchDir('reckon-breaks-config-'); });
  afterAll(() => tmp?.cleanup());
  const file = (name: string, text: string) => { const p = join(tmp.dir, name); writeFileSync(p, text); return p; };

  it('defaults to the SLAs of CONTRACT §5 and the controls’ owners', async () => {
    const { config } = defaultConfig();
    const sla = (id: string, kind: string) => slaSeconds(config, def(id), kind);
    expect([sla('RC01', 'ACCEPTED_WITHOUT_ROUTE'), sla('RC02', 'FILL_MISSING_VENUE'), sla('RC03', 'POSTING_SET_UNBALANCED'), sla('RC03', 'RESERVATION_MISMATCH'),
      sla('RC04', 'BANK_CASH_MISMATCH'), sla('RC05', 'PROJECTION_STALE'), sla('RC06', 'NOTICE_UNDELIVERED')]).toEqual([120, 60, 0, 300, 86400, 300, 3600]);
    expect(controlOwner(config, def('RC03'))).toBe('ledger-operations');
    expect(slaSeconds(config, undefined, 'X')).toBeNull();
  });

  it('takes the most specific setting, configuration before definition', async () => {
    const { config } = await loadConfig(file('c.yaml', [
      'controls:',
      '  RC03:',
      '    sla_s: 30',
      '    owner: ledger-desk',
      '  RC06:',
      '    sla_s_by_kind:',
      '      NOTICE_UNDELIVERED: 7200',
      'timing_rules:',
      '  - { control: RC02, kind: FILL_MISSING_VENUE, max_age_s: 300 }',
    ].join('\n')), controls);
    expect(slaSeconds(config, def('RC03'), 'POSTING_SET_UNBALANCED')).toBe(30);
    expect(slaSeconds(config, def('RC03'), 'RESERVATION_MISMATCH')).toBe(300);
    expect(slaSeconds(config, def('RC06'), 'NOTICE_UNDELIVERED')).toBe(7200);
    expect(slaSeconds(config, def('RC06'), 'NOTICE_DUPLICATE_RECEIPT')).toBe(3600);
    expect(controlOwner(config, def('RC03'))).toBe('ledger-desk');
    expect(config.timing_rules).toEqual([{ control: 'RC02', kind: 'FILL_MISSING_VENUE', max_age_s: 300 }]);
    expect(config.rounding_mode).toBe('HALF_EVEN');
  });

  it('reports every problem with its path', async () => {
    const bad = file('bad.json', JSON.stringify({
      controls: { RC01: { sla_s: -1 }, RC02: { owner: '' } },
      timing_rules: [{ control: 'RC02', kind: 'FILL_MISSING_VENUE' }, { control: 'RC2', kind: 'X', max_age_s: 1.5 }],
      rounding_mode: 'BANKERS',
    }));
    const err = await loadConfig(bad, controls).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as ConfigError).message;
    for (const path of ['controls.RC01.sla_s', 'controls.RC02.owner', 'timing_rules.0.max_age_s', 'timing_rules.1.control', 'timing_rules.1.max_age_s', 'rounding_mode']) expect(msg).toContain(`  ${path}: `);

    const unknown = file('unknown.json', JSON.stringify({ controls: { RC07: { sla_s: 5 }, RC01: { sla_s_by_kind: { FILL_MISSING_VENUE: 5 } } }, timing_rules: [{ control: 'RC01', kind: 'NOTICE_UNDELIVERED', max_age_s: 5 }] }));
    const err2 = (await loadConfig(unknown, controls).catch((e: unknown) => e)) as ConfigError;
    expect(err2.message).toContain('  controls.RC07: unknown control');
    expect(err2.message).toContain('  controls.RC01.sla_s_by_kind.FILL_MISSING_VENUE: RC01 emits no difference kind FILL_MISSING_VENUE');
    expect(err2.message).toContain('  timing_rules.0.kind: RC01 emits no difference kind NOTICE_UNDELIVERED');
    expect(err2.path).toBe('controls.RC07');
  });
});
