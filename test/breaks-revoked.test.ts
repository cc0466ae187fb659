/**
 * A signer removed from the registry (a revoked key) after a run recorded the new registry: a
 * copy of the old configuration no longer signs (the CLI refuses it, exit 2), and a
 * countersignature made after that run under the old registry — written by an older reckon, or
 * by hand — fails `manifest verify` and `breaks show`, with and without the trusted registry;
 * a proposal made before the rotation and approved after it under the new registry still
 * verifies. Also: `manifest verify --config`, `evidence pack --config` and `evidence verify
 * --config` refuse a countersignature by a key from a registry an attacker wrote into signers/
 * (before, only `breaks show` did; the others passed with a note).
 */
import { cpSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckonAsync, reckonIn, scratchDir } from './helpers/cli.js';
import { makeKey, sshKeygenSign } from './helpers/ssh.js';
import { canonicalJson } from '../pipeline/core/canonical.js';
import { ID, WINDOW, rc06Sources, signers } from './fixtures/breaks.js';

let tmp: ReturnType<typeof scratchDir>;
let src: ReturnType<typeof rc06Sources>;
let people: ReturnType<typeof signers>;
/** The configuration after the rotation: the same people and pipeline key, amy's line removed. */
let rotated: string;
/** A store at CONTAINED (v3, countersigned by amy) with one run under the first registry. */
let base: string;
afterAll(() => tmp?.cleanup());

const E = (v: number) => `breaks/${ID}/events/${String(v).padStart(6, '0')}.json`;
const breaks = (store: string, config: string, who: string, ...args: string[]) => reckonIn(['breaks', ...args, '--store', store, '--config', config, '--key', people.keys[who].key]);
const run = (store: string, config: string) => reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--config', config, '--json', '--quiet']);

beforeAll(async () => {
  tmp = scratchDir('reckon-breaks-revoked-');
  src = rc06Sources(tmp.dir);
  people = signers(tmp.dir);
  const registry2 = join(tmp.dir, 'allowed_signers.2');
  writeFileSync(registry2, readFileSync(people.registry, 'utf8').split('\n').filter((l) => !l.startsWith('amy ')).join('\n'));
  rotated = join(tmp.dir, 'reckon.2.json');
  writeFileSync(rotated, JSON.stringify({ signing: { registry: registry2, pipeline_key: people.keys.reconciler.key } }));
  base = join(tmp.dir, 'store');
  expect((await run(base, people.config)).code).toBe(1);
  const ok = async (who: string, ...args: string[]) => { const r = await breaks(base, people.config, who, ...args); expect(r.code, r.stderr).toBe(0); };
  await ok('tom', 'advance', ID, '--to', 'TRIAGED', '--expected-version', '1', '--owner', 'olivia', '--classification', 'MISSING');
  await ok('olivia', 'advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--approver', 'amy', '--note', 'notices paused');
  await ok('amy', 'approve', ID, '--version', '3');
});

/** The HTML of `path` from `reckon console` on `store` with `config` (a child process on a free loopback port, stopped after). */
async function consolePage(store: string, config: string, path: string): Promise<string> {
  const proc = reckonAsync(['console', '--store', store, '--config', config, '--port', '0']);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d) => { out += String(d); const m = /^reckon console: (http:\/\/127\.0\.0\.1:[0-9]+) /.exec(out); if (m) resolve(m[1]); });
      proc.once('exit', (code) => reject(new Error(`console exited ${code}: ${out}`)));
    });
    return await (await fetch(url + path)).text();
  } finally { proc.kill('SIGTERM'); }
}

describe('a signer removed from the registry', () => {
  it('cannot sign with the old configuration once a run recorded the new registry (exit 2, naming both versions)', async () => {
    const store = join(tmp.dir, 'store-cli');
    cpSync(base, store, { recursive: true });
    expect((await run(store, rotated)).code).toBe(1);
    const r = await breaks(store, people.config, 'olivia', 'advance', ID, '--to', 'CORRECTED', '--expected-version', '3', '--approver', 'amy', '--note', 'resent');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^reckon: ConfigError: the signer registry \S+allowed_signers \([0-9a-f]{12}…\) is an older version than the one the store's newest run recorded \([0-9a-f]{12}… in manifests\/00000002-run-\S+\.json\)/);
  });

  it('countersigning after that run under the old registry fails manifest verify and breaks show, naming the event', async () => {
    const store = join(tmp.dir, 'store-revoked');
    cpSync(base, store, { recursive: true });
    expect((await run(store, rotated)).code).toBe(1);
    // An older reckon (without the CLI's check) does not see run 2: its manifest is hidden while amy signs.
    const hidden = join(tmp.dir, 'hidden');
    const names = readdirSync(join(store, 'manifests')).filter((f) => /^[0-9]{8}-.*\.json$/.test(f)).sort();
    expect(names).toHaveLength(2);
    const name = names[1];
    renameSync(join(store, 'manifests', name), hidden);
    expect((await breaks(store, people.config, 'olivia', 'advance', ID, '--to', 'CORRECTED', '--expected-version', '3', '--approver', 'amy', '--note', 'resent')).code).toBe(0);
    expect((await breaks(store, people.config, 'amy', 'approve', ID, '--version', '4')).code).toBe(0);
    renameSync(hidden, join(store, 'manifests', name));
    for (const trust of [['--config', rotated], ['--config', people.config], []]) {
      const v = await reckonIn(['manifest', 'verify', '--store', store, '--json', ...trust]);
      expect(v.code).toBe(1);
      expect(v.json.problems.map((p: { key: string }) => p.key)).toEqual([E(4)]);
      expect(v.json.problems[0].problem).toMatch(new RegExp(`^the approver's countersignature by amy: it names registry [0-9a-f]{12}… but was made after manifests/${name.replace('.', '[.]')}, whose run recorded registry [0-9a-f]{12}…, under which it does not verify \\(SIGNER_UNKNOWN_KEY: .*\\): a key revoked, or a name removed, before it signed$`));
    }
    const show = await reckonIn(['breaks', 'show', ID, '--store', store, '--config', rotated, '--json']);
    expect(show.code).toBe(1);
    expect(show.json.verification.problems.map((p: { key: string }) => p.key)).toEqual([E(4)]);
    // Each signature's own line says so too: amy's countersignature of v3 verifies, that of v4 does not.
    const human = await reckonIn(['breaks', 'show', ID, '--store', store, '--config', rotated]);
    const amy = human.stdout.split('\n').filter((l) => /approver amy \S+ /.test(l));
    expect(amy).toHaveLength(2);
    expect(amy[0]).toMatch(/approver amy \S+ verified/);
    expect(amy[1]).toMatch(new RegExp(`approver amy \\S+ NOT VERIFIED \\(the approver's countersignature by amy: it names registry [0-9a-f]{12}… but was made after manifests/${name.replace('.', '[.]')}, whose run recorded registry`));
    // The console's break page, the same.
    const page = await consolePage(store, rotated, `/breaks/${ID}`);
    const items = [...page.matchAll(/<li>(?:(?!<\/li>).)*approver <strong>amy<\/strong>(?:(?!<\/li>).)*<\/li>/g)].map((m) => m[0]);
    expect(items.map((i) => (i.includes('✓ verified') ? 'verified' : i.includes('✗ does not verify') && i.includes('but was made after manifests/') ? 'refused' : i))).toEqual(['verified', 'refused']);
  });

  it('a proposal made before the rotation and countersigned after it by a signer still in the registry verifies', async () => {
    const store = join(tmp.dir, 'store-rotation');
    cpSync(base, store, { recursive: true });
    expect((await breaks(store, people.config, 'olivia', 'advance', ID, '--to', 'CORRECTED', '--expected-version', '3', '--approver', 'vera', '--note', 'resent')).code).toBe(0);
    expect((await run(store, rotated)).code).toBe(1);
    const a = await breaks(store, rotated, 'vera', 'approve', ID, '--version', '4');
    expect(a.code, a.stderr).toBe(0);
    for (const trust of [['--config', rotated], []]) {
      const v = await reckonIn(['manifest', 'verify', '--store', store, '--json', ...trust]);
      expect([v.code, v.json.problems]).toEqual([0, []]);
    }
  });
});

describe('a registry written into signers/ by an attacker', () => {
  it('manifest verify with the trusted registry refuses a countersignature by a key from it, naming the event; without it, a note', async () => {
    const store = join(tmp.dir, 'store-planted');
    cpSync(base, store, { recursive: true });
    const evil = makeKey(tmp.dir, 'evil');
    const own = readFileSync(people.registry, 'utf8').split('\n').filter((l) => l && !l.startsWith('amy ')).concat(`amy ${evil.line}`).join('\n') + '\n';
    const sha = createHash('sha256').update(own).digest('hex');
    writeFileSync(join(store, 'signers', `${sha}.allowed_signers`), own);
    const ev = JSON.parse(readFileSync(join(store, E(3)), 'utf8'));
    const file = join(tmp.dir, 'payload-3');
    writeFileSync(file, ev.payload);
    ev.signatures[1] = { ...ev.signatures[1], key: evil.fingerprint, registry_sha256: sha, sshsig: sshKeygenSign(evil.key, 'reckon-break', file) };
    writeFileSync(join(store, E(3)), canonicalJson(ev));
    const v = await reckonIn(['manifest', 'verify', '--store', store, '--json', '--config', people.config]);
    expect(v.code).toBe(1);
    expect(v.json.problems.map((p: { key: string }) => p.key)).toEqual([E(3)]);
    expect(v.json.problems[0].problem).toBe(`the approver's countersignature by amy: key ${evil.fingerprint} is not amy's in the trusted registry ${people.registry}, and the registry ${sha.slice(0, 12)}… the signature names is recorded by no published run: a registry written into the store`);
    const loose = await reckonIn(['manifest', 'verify', '--store', store, '--json']);
    expect(loose.code).toBe(0);
    expect(JSON.stringify(loose.json)).toContain(`registry ${sha.slice(0, 12)}… verified signatures but no published run records it`);
    const pack = await reckonIn(['evidence', 'pack', '--break', ID, '--store', store, '--out', join(tmp.dir, 'bag-refused'), '--config', people.config]);
    expect([pack.code, pack.stderr]).toEqual([1, `reckon: EvidenceIntegrityError: the break log does not verify: ${E(3)}: ${v.json.problems[0].problem}; run 'reckon manifest verify' on the store. No bag was written.\n`]);
    // Packed without the trusted registry (the key from the environment), the bag fails evidence verify --config.
    const bag = join(tmp.dir, 'bag-planted');
    expect((await reckonIn(['evidence', 'pack', '--break', ID, '--store', store, '--out', bag], { env: { RECKON_PIPELINE_KEY_FILE: people.keys.reconciler.key } })).code).toBe(0);
    const bagCheck = await reckonIn(['evidence', 'verify', bag, '--config', people.config, '--json']);
    expect(bagCheck.code).toBe(1);
    expect(bagCheck.json.problems[0]).toBe(`data/${E(3)}: ${v.json.problems[0].problem}`);
  });
});
