/**
 * A command line without traps (issue 19, item 6), one test per trap seen on main before this
 * change (each of these failed there): `--help` on every subcommand; unknown `--control`/`--kind`
 * refused by `breaks list`; `--run latest` for `report` and `evidence pack`, and `evidence pack`'s
 * default store; a configuration's mistakes reported all at once; a missing dataset folder named
 * as missing; `schedule --dry-run`; one line with a count for a setting twenty MT940 statements
 * lack; the AWS SDK's Node-version warning not repeated on an S3 command. Also item 8 through a
 * run: a 0-byte JSON Lines file is zero records, RC06 is not INCOMPLETE. In process where the CLI
 * itself is not under test; the SDK warning needs the real process (it is the process's stderr).
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, reckonIn, scratchDir } from './helpers/cli.js';
import { startS3rver, type S3rverHandle } from './helpers/s3rver.js';
import { WINDOW, rc06Sources } from './fixtures/breaks.js';

const tmp = scratchDir('reckon-cli-traps-');
afterAll(() => tmp.cleanup());

describe('--help on every command and subcommand', () => {
  const cases: [string[], string][] = [
    [['run', '--help'], 'usage: reckon run'], [['runs', '--help'], 'usage: reckon runs'], [['manifest', 'verify', '--help'], 'usage: reckon manifest verify'],
    [['breaks', 'list', '--help'], 'usage: reckon breaks list'], [['breaks', 'show', '--help'], 'usage: reckon breaks show'],
    [['breaks', 'advance', '-h'], 'usage: reckon breaks advance'], [['schedule', '--help'], 'usage: reckon schedule'],
    [['generate', '--help'], 'usage: reckon generate'], [['import', 'mt940', '--help'], 'usage: reckon import'],
    [['evidence', 'pack', '--help'], 'usage: reckon evidence pack'], [['evidence', 'verify', '--help'], 'usage: reckon evidence verify'],
    [['athena', 'ddl', '--help'], 'usage: reckon athena ddl'], [['athena', 'query', '--help'], 'usage: reckon athena query'],
    [['report', '--help'], 'usage: reckon report'], [['breaks', '--help'], 'usage:\n  reckon breaks list'],
  ];
  for (const [args, head] of cases) {
    it(`reckon ${args.join(' ')}`, async () => {
      const r = await reckonIn(args);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout.startsWith(head)).toBe(true);
    });
  }
});

describe('a store with one RC06 break', () => {
  const root = join(tmp.dir, 'one');
  const store = join(root, 'var', 'reckon');
  let runId: string;
  beforeAll(async () => {
    const src = rc06Sources(root);
    const r = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--json', '--quiet']);
    expect(r.code).toBe(1);
    runId = r.json.run_id;
  });

  it('breaks list refuses an unknown --control or --kind like an unknown --state (exit 2, naming what exists)', async () => {
    const control = await reckonIn(['breaks', 'list', '--control', 'RC09', '--store', store]);
    expect([control.code, control.stdout]).toEqual([2, '']);
    expect(control.stderr).toBe('reckon: ConfigError: --control RC09 is not a control; controls: RC01, RC02, RC03, RC04, RC05, RC06\n');
    const kind = await reckonIn(['breaks', 'list', '--kind', 'NOPE', '--control', 'RC06', '--store', store]);
    expect([kind.code, kind.stderr]).toEqual([2, 'reckon: ConfigError: --kind NOPE is not a difference kind of RC06; kinds: NOTICE_UNDELIVERED, NOTICE_RECEIPT_UNKNOWN_INTENT, NOTICE_DUPLICATE_RECEIPT\n']);
    const ok = await reckonIn(['breaks', 'list', '--kind', 'notice_undelivered', '--owner', 'notification-owner', '--store', store, '--json']);
    expect(ok.json.map((b: { key: string }) => b.key)).toEqual(['INT-2']);
    const team = await reckonIn(['breaks', 'list', '--owner', 'ledger-operations', '--store', store, '--json']);
    expect([team.json, team.stderr]).toEqual([[], '']);
    // A name no team and no break owner has: listed empty, as filters do, and said on stderr.
    const typo = await reckonIn(['breaks', 'list', '--owner', 'notifcation-owner', '--store', store, '--json']);
    expect(typo.json).toEqual([]);
    expect(typo.stderr).toMatch(/^reckon: --owner notifcation-owner names no team of the configuration and no owner of a break here \(teams: [^)]*notification-owner[^)]*\)\n$/);
  });

  it('report and evidence pack take --run latest; evidence pack defaults --store to ./var/reckon like the others', async () => {
    const report = await reckonIn(['report', '--run', 'latest', '--out', 'r.html'], { cwd: root });
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain(`report for run ${runId} written to ${join(root, 'r.html')}`);
    const pack = await reckonIn(['evidence', 'pack', '--run', 'latest', '--out', 'bag.zip', '--json'], { cwd: root });
    expect(pack.code, pack.stderr).toBe(0);
    expect(pack.json).toMatchObject({ ok: true, kind: 'zip', runs: [runId] });
    const empty = join(tmp.dir, 'empty-store');
    mkdirSync(empty);
    expect((await reckonIn(['report', '--run', 'latest', '--out', join(tmp.dir, 'x.html'), '--store', empty])).stderr)
      .toBe(`reckon: ConfigError: --run latest: the store ${empty} has no published run yet\n`);
  });
});

it('an unknown option names the closest known one, and only when one is near (exit 2)', async () => {
  const err = async (...args: string[]) => { const r = await reckonIn(args); expect(r.code, args.join(' ')).toBe(2); return r.stderr; };
  expect(await err('run', '--source', 'x')).toBe("reckon: ConfigError: Unknown option '--source': did you mean --sources?\n");
  expect(await err('run', '--date', '2026-11-02', '--confg', 'x')).toBe("reckon: ConfigError: Unknown option '--confg': did you mean --config?\n");
  expect(await err('breaks', 'list', '--stat', 'OPEN')).toBe("reckon: ConfigError: Unknown option '--stat': did you mean --state?\n");
  expect(await err('run', '--xyz')).toBe("reckon: ConfigError: Unknown option '--xyz'\n");
});

it('a configuration with three mistakes reports all three at once', async () => {
  const config = join(tmp.dir, 'three.json');
  writeFileSync(config, JSON.stringify({
    controls: { RC01: { sla_s: -5 }, RC09: { sla_s: 1 } },
    timing_rules: [{ control: 'RC02', kind: 'NOPE', max_age_s: 1 }],
  }));
  const r = await reckonIn(['run', '--date', '2026-11-02', '--sources', tmp.dir, '--store', join(tmp.dir, 's3'), '--config', config]);
  expect(r.code).toBe(2);
  const lines = r.stderr.split('\n');
  expect(lines[0]).toBe(`reckon: ConfigError: configuration ${config} is invalid (3 problems):`);
  expect(lines.slice(1, 4).map((l) => l.split(':')[0])).toEqual(['  controls.RC01.sla_s', '  controls.RC09', '  timing_rules.0.kind']);
});

it('a dataset folder that does not exist is reported as missing, not as having no watermark', async () => {
  const src = rc06Sources(join(tmp.dir, 'missing'));
  rmSync(join(src.dir, 'notification_exceptions'), { recursive: true });
  const r = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', join(tmp.dir, 'missing', 'store'), '--json', '--quiet']);
  expect(r.code).toBe(4);
  expect(r.json.controls[0].readiness.reasons).toEqual(['notification_exceptions: the dataset folder notification_exceptions/ is missing from the sources (an empty dataset without a watermark, CONTRACT §2)']);
});

it('an empty .jsonl (0 bytes) is zero records: RC06 is not INCOMPLETE on a quiet day; a 0-byte CSV is still a file fault', async () => {
  const src = rc06Sources(join(tmp.dir, 'quiet'));
  writeFileSync(join(src.dir, 'notification_exceptions', 'export-0001.jsonl'), '');
  const store = join(tmp.dir, 'quiet', 'store');
  const r = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--json', '--quiet']);
  expect([r.code, r.json.controls[0].status, r.json.quarantine_count]).toEqual([1, 'BREAKS', 0]);
  writeFileSync(join(src.dir, 'notification_exceptions', 'export-0002.csv'), '');
  const csv = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--json', '--quiet']);
  expect([csv.code, csv.json.controls[0].status, csv.json.quarantine_count]).toEqual([3, 'INCOMPLETE', 1]);
});

describe('schedule', () => {
  const root = join(tmp.dir, 'sched');
  const schedule = (...extra: string[]) => reckonIn(['schedule', '--plan', 'nightly', '--now', '2026-11-03T00:10:00Z', '--lookback', '1d', '--control', 'RC06', '--sources', join(root, 'sources'), '--store', join(root, 'store'), '--json', '--quiet', ...extra]);
  const actions = (r: { json?: { windows: { start: string; action: string }[] } }) => r.json!.windows.map((w) => [w.start, w.action]);

  it('--dry-run shows the windows it would run and runs nothing', async () => {
    rc06Sources(root);
    const dry = await schedule('--dry-run');
    expect([dry.code, dry.json.dry_run, actions(dry)]).toEqual([0, true, [['2026-11-02T00:00:00Z', 'would-run']]]);
    expect(existsSync(join(root, 'store', 'manifests'))).toBe(false);
    const human = await reckonIn(['schedule', '--plan', 'nightly', '--now', '2026-11-03T00:10:00Z', '--lookback', '1d', '--control', 'RC06', '--sources', join(root, 'sources'), '--store', join(root, 'store'), '--dry-run']);
    expect(human.stdout.split('\n')[0]).toBe('[2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z)  would-run');
  });

  it('an ad-hoc run and an incident rerun on other sources into the same store do not make the night’s run look done', async () => {
    const scratch = rc06Sources(join(root, 'scratch'));
    const store = join(root, 'store');
    const adhoc = await reckonIn(['run', '--control', 'RC06', '--date', '2026-11-02', '--sources', scratch.dir, '--store', store, '--json', '--quiet']);
    const rerun = await reckonIn(['run', '--control', 'RC06', '--date', '2026-11-02', '--sources', scratch.dir, '--store', store, '--json', '--quiet',
      '--trigger', 'incident', '--rerun-of', adhoc.json.run_id, '--reason', 'try a corrected receipt']);
    expect([adhoc.code, rerun.code]).toEqual([1, 1]);
    const night = await schedule();
    expect(actions(night)).toEqual([['2026-11-02T00:00:00Z', 'ran']]);
    const again = await schedule();
    expect(again.json.windows[0]).toMatchObject({ action: 'complete', run_id: night.json.windows[0].run_id });
  });
});

it('one MT940 file whose 20 statements name no bank gives one line with a count, not 20', async () => {
  const dir = join(tmp.dir, 'mt940');
  mkdirSync(dir);
  const file = join(dir, 'day.sta');
  const statement = (i: number) => [`:20:R${i}`, ':25:ACC-1', `:28C:${i}`, ':60F:C261101EUR1,00', ':62F:C261102EUR1,00', '-'];
  writeFileSync(file, Array.from({ length: 20 }, (_, i) => statement(i + 1)).flat().join('\n'));
  const r = await reckonIn(['import', 'mt940', file, '--out', join(dir, 'out'), '--timezone', 'Europe/Berlin', '--cutoff', '18:00']);
  expect(r.code).toBe(2);
  const lines = r.stderr.split('\n').filter((l) => l.includes('--bank-id'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^ {2}day\.sta: 20 statements \(ACC-1\/1\/2026-11-02 \(account ACC-1\) … ACC-1\/20\/2026-11-02 \(account ACC-1\)\): the file names no bank for this account; give --bank-id or bank_id in the account map$/);
});

describe('an S3 command on Node 20', () => {
  let s3: S3rverHandle;
  beforeAll(async () => { s3 = await startS3rver(['reckon-store']); });
  afterAll(async () => { await s3?.stop(); });

  it('does not print the AWS SDK’s Node-version warning (reckon --version says it once)', () => {
    const env: NodeJS.ProcessEnv = { ...s3.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined };
    const r = reckon(['runs', '--store', 's3://reckon-store/nightly'], { env });
    expect([r.code, r.stdout]).toEqual([0, 'no published runs\n']);
    expect(r.stderr).not.toContain('NodeVersionSupportWarning');
    expect(r.stderr).toBe('');
    const v = reckon(['--version']);
    expect(v.stdout).toMatch(/^reckon [0-9.]+ \(Node v[0-9.]+\)\n/);
    if (Number(process.versions.node.split('.')[0]) < 22) expect(v.stdout).toContain('need Node 22 or later; reckon runs on Node 20, 22 and 24');
  });
});
