/**
 * Tampering with the break log (issue 17): each kind of object — a person's event, a run's event,
 * the order of events, an event in the middle, the newest event, a proposal, an observation, the
 * checkpoint of heads, a manifest's break list — edited or removed in a copy of a real store and
 * of an evidence bag made from it (the bag re-manifested by a forger who knows BagIt), and
 * `reckon manifest verify` and `reckon evidence verify` name the object first.
 */
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckonIn, scratchDir } from './helpers/cli.js';
import { makeKey, sshKeygenSign } from './helpers/ssh.js';
import { canonicalJson } from '../pipeline/core/canonical.js';
import { ID, WINDOW, rc06Sources, signers } from './fixtures/breaks.js';

let tmp: ReturnType<typeof scratchDir>;
let base: string;
let bag: string;
let manifests: string[];
let runs: string[];
let pendingProposal: string;
let people: ReturnType<typeof signers>;
afterAll(() => tmp?.cleanup());

const E = (v: number) => `breaks/${ID}/events/${String(v).padStart(6, '0')}.json`;

beforeAll(async () => {
  tmp = scratchDir('reckon-breaks-tamper-');
  people = signers(tmp.dir);
  const src = rc06Sources(tmp.dir);
  base = join(tmp.dir, 'store');
  const cfg = ['--store', base, '--config', people.config];
  const run = async () => { const r = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--json', '--quiet', ...cfg]); expect(r.code).toBe(1); return r.json.run_id as string; };
  const ok = async (who: string, ...args: string[]) => { const r = await reckonIn(['breaks', ...args, ...cfg, '--key', people.keys[who].key]); expect(r.code, r.stderr).toBe(0); };
  const first = await run();
  await ok('tom', 'advance', ID, '--to', 'TRIAGED', '--expected-version', '1', '--owner', 'olivia', '--classification', 'MISSING');
  await ok('olivia', 'advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--approver', 'amy', '--note', 'notices paused');
  await ok('amy', 'approve', ID, '--version', '3');
  await ok('olivia', 'advance', ID, '--to', 'CORRECTED', '--expected-version', '3', '--approver', 'amy', '--evidence-ref', 'RCP-2 resent');
  const second = await run();
  runs = [first, second];
  manifests = readdirSync(join(base, 'manifests')).filter((f) => f.endsWith('.json')).sort().map((f) => `manifests/${f}`);
  pendingProposal = `breaks/${ID}/proposals/${readdirSync(join(base, 'breaks', ID, 'proposals')).find((f) => f.startsWith('000004-'))}`;
  const v = await reckonIn(['manifest', 'verify', '--store', base, '--json']);
  expect(v.code, JSON.stringify(v.json?.problems)).toBe(0);
  bag = join(tmp.dir, 'bag');
  const p = await reckonIn(['evidence', 'pack', '--break', ID, '--store', base, '--out', bag, '--config', people.config]);
  expect(p.code, p.stderr).toBe(0);
  expect((await reckonIn(['evidence', 'verify', bag])).code).toBe(0);
});

/** Rewrites an object's payload (signatures, digests and binding left as they were). */
function editPayload(path: string, from: string, to: string): void {
  const o = JSON.parse(readFileSync(path, 'utf8'));
  expect(o.payload).toContain(from);
  o.payload = o.payload.replace(from, to);
  writeFileSync(path, JSON.stringify(o));
}

/** Adds a field outside the signed payload (the envelope or a signature record). */
function addField(path: string, add: (o: Record<string, unknown>) => void): void {
  const o = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  add(o);
  writeFileSync(path, JSON.stringify(o));
}

/** Rewrites the bag's manifests, Payload-Oxum and tag manifest to match its files (a forger who knows BagIt). */
function rebag(dir: string): void {
  const files: string[] = [];
  const walk = (d: string) => { for (const e of readdirSync(d, { withFileTypes: true })) { const p = join(d, e.name); if (e.isDirectory()) walk(p); else files.push(relative(dir, p)); } };
  walk(join(dir, 'data'));
  files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const hash = (alg: string, p: string) => createHash(alg).update(readFileSync(join(dir, p))).digest('hex');
  for (const alg of ['sha256', 'sha512']) writeFileSync(join(dir, `manifest-${alg}.txt`), files.map((f) => `${hash(alg, f)}  ${f}\n`).join(''));
  const octets = files.reduce((a, f) => a + readFileSync(join(dir, f)).length, 0);
  writeFileSync(join(dir, 'bag-info.txt'), readFileSync(join(dir, 'bag-info.txt'), 'utf8').replace(/^Payload-Oxum: .*$/m, `Payload-Oxum: ${octets}.${files.length}`));
  writeFileSync(join(dir, 'tagmanifest-sha256.txt'), ['bag-info.txt', 'bagit.txt', 'manifest-sha256.txt', 'manifest-sha512.txt'].map((t) => `${hash('sha256', t)}  ${t}\n`).join(''));
}

interface Tamper {
  readonly name: string;
  /** Edits the objects under `root` (the store, or the bag's data/ folder), by store key. */
  readonly edit: (root: string) => void;
  /** The store key the first problem must name (for the store, and under data/ for the bag). */
  readonly names: () => string;
  /** Where the bag's first problem is named, when not at the same key. */
  readonly bagNames?: () => string;
  readonly bag?: boolean;
}

const TAMPERS: Tamper[] = [
  { name: "a person's event edited (the classification of TRIAGED)", edit: (r) => editPayload(join(r, E(2)), '"classification":"MISSING"', '"classification":"TIMING"'), names: () => E(2) },
  { name: "a run's event edited (the detail of OPEN)", edit: (r) => editPayload(join(r, E(1)), 'no DELIVERED receipt', 'a DELIVERED receipt'), names: () => E(1) },
  {
    name: 'two events reordered (versions 2 and 3 swapped)',
    edit: (r) => { renameSync(join(r, E(2)), join(r, `${E(2)}.x`)); renameSync(join(r, E(3)), join(r, E(2))); renameSync(join(r, `${E(2)}.x`), join(r, E(3))); },
    names: () => E(2),
  },
  { name: 'an event removed from the middle (version 2)', edit: (r) => rmSync(join(r, E(2))), names: () => E(3) },
  { name: 'the newest event removed (version 3, the countersigned CONTAINED)', edit: (r) => rmSync(join(r, E(3))), names: () => E(3) },
  { name: 'an unsigned field added beside a signature (a comment on the countersignature)', edit: (r) => addField(join(r, E(3)), (o) => { (o.signatures as Record<string, unknown>[])[1].comment = 'approved by the CEO'; }), names: () => E(3) },
  { name: "an unsigned top-level field added to a run's event", edit: (r) => addField(join(r, E(1)), (o) => { o.note = 'reviewed, nothing to do'; }), names: () => E(1) },
  { name: 'a pending proposal edited', edit: (r) => editPayload(join(r, pendingProposal), 'RCP-2 resent', 'RCP-9 resent'), names: () => pendingProposal },
  { name: 'a pending proposal removed', edit: (r) => rmSync(join(r, pendingProposal)), names: () => pendingProposal },
  { name: 'an observation edited', edit: (r) => editPayload(join(r, `breaks/${ID}/observations/${runs[0]}.json`), '"disposition":"OPENED"', '"disposition":"TIMING"'), names: () => `breaks/${ID}/observations/${runs[0]}.json` },
  { name: 'an observation removed', edit: (r) => rmSync(join(r, `breaks/${ID}/observations/${runs[1]}.json`)), names: () => `breaks/${ID}/observations/${runs[1]}.json` },
  {
    name: "a run's checkpoint of heads edited",
    edit: (r) => { const p = join(r, `heads/${runs[1]}.json`); writeFileSync(p, readFileSync(p, 'utf8').replace('"version":3', '"version":2')); },
    names: () => `heads/${runs[1]}.json`,
  },
  {
    name: "the newest manifest's break list edited (its digest file left as it was)",
    edit: (r) => { const p = join(r, manifests[1]); writeFileSync(p, readFileSync(p, 'utf8').replace('"disposition":"REOBSERVED"', '"disposition":"REOPENED"')); },
    names: () => manifests[1],
  },
  {
    name: "an earlier manifest's break list edited, its digest file rewritten to match",
    edit: (r) => {
      const p = join(r, manifests[0]);
      const text = readFileSync(p, 'utf8').replace('"disposition":"OPENED"', '"disposition":"REOBSERVED"');
      writeFileSync(p, text);
      writeFileSync(p.replace(/\.json$/, '.sha256'), `${createHash('sha256').update(text).digest('hex')}  ${manifests[0].split('/')[1]}\n`);
    },
    // The edited manifest's own signature fails first (issue 18); the bag's chain.json names it too.
    names: () => manifests[0], bagNames: () => manifests[0],
  },
];

describe('manifest verify names what was changed in a store', () => {
  for (const t of TAMPERS) {
    it(t.name, async () => {
      const store = join(tmp.dir, `store-${TAMPERS.indexOf(t)}`);
      cpSync(base, store, { recursive: true });
      t.edit(store);
      const r = await reckonIn(['manifest', 'verify', '--store', store, '--json']);
      expect(r.code).toBe(1);
      expect(r.json.problems[0].key, JSON.stringify(r.json.problems, null, 1)).toBe(t.names());
    });
  }
});

describe('evidence verify names what was changed in a bag, even re-manifested', () => {
  for (const t of TAMPERS) {
    it(t.name, async () => {
      const copy = join(tmp.dir, `bag-${TAMPERS.indexOf(t)}`);
      cpSync(bag, copy, { recursive: true });
      t.edit(join(copy, 'data'));
      rebag(copy);
      const r = await reckonIn(['evidence', 'verify', copy, '--json']);
      expect(r.code).toBe(1);
      expect(r.json.problems[0], JSON.stringify(r.json.problems, null, 1)).toContain(`data/${(t.bagNames ?? t.names)()}`);
    });
  }
});

describe('breaks list over a tampered log', () => {
  for (const [name, edit] of [
    ['an event removed from the middle', (r: string) => rmSync(join(r, E(2)))],
    ['two events reordered', (r: string) => { renameSync(join(r, E(2)), join(r, `${E(2)}.x`)); renameSync(join(r, E(3)), join(r, E(2))); renameSync(join(r, `${E(2)}.x`), join(r, E(3))); }],
  ] as const) {
    it(`${name}: the break is left out and named on stderr, as a corrupt object is (exit 0, never 70; store-integrity.test.ts shows the others listed)`, async () => {
      const store = join(tmp.dir, `store-list-${name.split(' ')[1]}`);
      cpSync(base, store, { recursive: true });
      const all = (await reckonIn(['breaks', 'list', '--store', base, '--json'])).json.map((b: { break_id: string }) => b.break_id);
      edit(store);
      const r = await reckonIn(['breaks', 'list', '--store', store, '--json']);
      expect([r.code, r.stderr.split('\n')[0]]).toEqual([0, expect.stringMatching(new RegExp(`^reckon: break ${ID} is left out of the list: break ${ID}: event breaks/${ID}/events/00000[23][.]json holds version 3, expected 2; the log has a gap or its events were reordered`))]);
      expect(all).toEqual([ID]);
      expect(r.json).toEqual([]);
    });
  }
});

/**
 * A forged version 4 chained on version 3, signed with a key the attacker made, under olivia's
 * name; `registry` is the registry version the signature record names (by default the real one).
 */
function forgeEvent(store: string, registry?: string): void {
  const prev = JSON.parse(readFileSync(join(store, E(3)), 'utf8'));
  const evil = makeKey(tmp.dir, `evil-${Math.random().toString(36).slice(2, 8)}`);
  const body = { ...JSON.parse(prev.payload), actor: 'olivia', at: '2026-12-02T08:00:00.000Z', from_state: 'CONTAINED', to_state: 'CORRECTED', version: 4, expected_version: 3,
    previous_event_sha256: createHash('sha256').update(prev.payload).digest('hex'), dual_control: false, evidence: { note: 'forged' } };
  const file = join(tmp.dir, `forged-${Math.random().toString(36).slice(2, 8)}`);
  writeFileSync(file, canonicalJson(body));
  const sshsig = sshKeygenSign(evil.key, 'reckon-break', file);
  let registrySha = prev.signatures[0].registry_sha256 as string;
  if (registry === 'own') {
    const own = `olivia ${evil.line}\n`;
    registrySha = createHash('sha256').update(own).digest('hex');
    writeFileSync(join(store, 'signers', `${registrySha}.allowed_signers`), own);
  }
  writeFileSync(join(store, E(4)), canonicalJson({ payload: canonicalJson(body), signatures: [{ role: 'actor', signer: 'olivia', key: evil.fingerprint, namespace: 'reckon-break', registry_sha256: registrySha, signed_at: '2026-12-02T08:00:00.100Z', sshsig }] }));
}

describe('breaks show and list check the log (attack pass, issue 17)', () => {
  const show = (store: string, ...more: string[]) => reckonIn(['breaks', 'show', ID, '--store', store, '--config', people.config, ...more]);

  it('show says per signature that it verified, and that the log verified', async () => {
    const r = await show(base);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/signed: actor olivia SHA256:\S+ verified, approver amy SHA256:\S+ verified/);
    expect(r.stdout).toContain(`log: verified (chain, bindings, heads against the published manifests; signatures checked against the registry they name and ${people.registry})`);
    const j = await show(base, '--json');
    expect(j.json.verification).toMatchObject({ ok: true, problems: [] });
    expect(j.json.proofs[2].checks.map((c: { ok: boolean }) => c.ok)).toEqual([true, true]);
  });

  it("show exits 1 on an event signed by an attacker's key under a signer's name, naming the event", async () => {
    const store = join(tmp.dir, 'forged-show');
    cpSync(base, store, { recursive: true });
    forgeEvent(store);
    const r = await show(store);
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/v4 .* CONTAINED → CORRECTED by olivia/);
    expect(r.stdout).toMatch(/signed: actor olivia SHA256:\S+ NOT VERIFIED \(/);
    expect(r.stdout).toContain('LOG DOES NOT VERIFY');
    expect(r.stdout).toContain(`${E(4)}: `);
    expect(r.stdout).not.toContain('next:');
    const j = await show(store, '--json');
    expect(j.code).toBe(1);
    expect(j.json.verification.ok).toBe(false);
    expect(j.json.verification.problems.map((p: { key: string }) => p.key)).toContain(E(4));
  });

  it("show exits 1 when the attacker also wrote a registry of their own into signers/: the configuration's registry does not give olivia that key", async () => {
    const store = join(tmp.dir, 'forged-own-registry');
    cpSync(base, store, { recursive: true });
    forgeEvent(store, 'own');
    const j = await show(store, '--json');
    expect(j.code).toBe(1);
    expect(j.json.proofs[3].checks[0]).toMatchObject({ ok: false, problem: expect.stringContaining('recorded by no published run') });
    expect(j.json.proofs[3].checks[0].problem).toContain(`not olivia's in the trusted registry ${people.registry}`);
  });
});
