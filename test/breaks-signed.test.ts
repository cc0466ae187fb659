/**
 * Signed dual control through the CLI (issue 17), with real OpenSSH keys made by ssh-keygen:
 * every refusal of a key, a signature, a registry and a countersignature, table-driven, each
 * exit 2 with its rule named and nothing written; a stored event checked by `ssh-keygen -Y
 * verify` itself; withdrawing; unsigned mode said everywhere; legacy events still read and
 * reported as legacy, with new transitions on them signed.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../pipeline/core/canonical.js';
import { payloadDigest } from '../pipeline/breaks/break-objects.js';
import { reckonIn, scratchDir } from './helpers/cli.js';
import { makeKey, sshKeygenSign, sshKeygenVerify, startAgent } from './helpers/ssh.js';
import { ID, WINDOW, rc06Sources, signers } from './fixtures/breaks.js';
import { actionContext, approveProposal } from '../pipeline/breaks/actions.js';
import { BreakStore } from '../pipeline/breaks/break-store.js';
import { loadConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { ConcurrencyError } from '../pipeline/core/errors.js';
import { openStore } from '../pipeline/store/open-store.js';

let tmp: ReturnType<typeof scratchDir>;
let base: string;
let people: ReturnType<typeof signers>;
let srcDir: string;
afterAll(() => tmp?.cleanup());

/** Every file of a store with its bytes, for "nothing was written". */
function snapshot(store: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!relative(store, p).startsWith('_locks') && !relative(store, p).startsWith('signers')) out[relative(store, p)] = readFileSync(p, 'base64');
    }
  };
  walk(store);
  return out;
}

const breaks = (store: string, config: string) => (...args: string[]) => reckonIn(['breaks', ...args, '--store', store, '--config', config]);

/** A store with the fixture's break TRIAGED (owner olivia) and a pending proposal of CONTAINED naming amy. */
beforeAll(async () => {
  tmp = scratchDir('reckon-breaks-signed-');
  people = signers(tmp.dir);
  srcDir = rc06Sources(tmp.dir).dir;
  base = join(tmp.dir, 'base');
  expect((await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', srcDir, '--store', base, '--json', '--quiet', '--config', people.config])).code).toBe(1);
  const b = breaks(base, people.config);
  expect((await b('advance', ID, '--to', 'TRIAGED', '--expected-version', '1', '--owner', 'olivia', '--classification', 'MISSING', '--key', people.keys.tom.key)).code).toBe(0);
  const p = await b('advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--approver', 'amy', '--note', 'notices paused', '--key', people.keys.olivia.key, '--json');
  expect(p.code, p.stderr).toBe(0);
  expect(p.json.proposal).toMatchObject({ status: 'pending', version: 3, actor: 'olivia', approver: 'amy' });
});

let n = 0;
function copy(): string {
  const store = join(tmp.dir, `case-${n++}`);
  cpSync(base, store, { recursive: true });
  return store;
}

const proposalFile = (store: string) => {
  const dir = join(store, 'breaks', ID, 'proposals');
  return join(dir, readdirSync(dir).find((f) => f.startsWith('000003-') && !f.includes('withdrawal'))!);
};

/** Writes `object` as a proposal of version 3 under the name its payload's digest gives, replacing the one there. */
function replaceProposal(store: string, object: { payload: string; signatures: unknown[] }): void {
  rmSync(proposalFile(store));
  writeFileSync(join(store, 'breaks', ID, 'proposals', `000003-${payloadDigest(object.payload).slice(0, 16)}.json`), canonicalJson(object));
}

interface Refusal {
  readonly name: string;
  /** Prepares the case in `store` (a copy of the base) and returns the command's arguments and configuration. */
  readonly prepare: (store: string) => Promise<{ args: string[]; config?: string }> | { args: string[]; config?: string };
  readonly rule: string;
}

const approveAs = (who: string, ...more: string[]) => ['approve', ID, '--version', '3', '--key', people.keys[who].key, ...more];

const REFUSALS: Refusal[] = [
  { name: 'an unknown key', rule: 'SIGNER_UNKNOWN_KEY', prepare: () => ({ args: ['advance', ID, '--to', 'TRIAGED', '--expected-version', '2', '--key', makeKey(tmp.dir, `stranger${n}`).key] }) },
  { name: 'a key of another signer', rule: 'SIGNER_KEY_OF_ANOTHER', prepare: () => ({ args: approveAs('abe', '--actor', 'amy') }) },
  {
    name: 'one key under two names in the registry', rule: 'REGISTRY_KEY_TWO_NAMES',
    prepare: () => {
      const reg = join(tmp.dir, `twice-${n}`);
      writeFileSync(reg, `${readFileSync(people.registry, 'utf8')}mallory ${people.keys.amy.line}\n`);
      const config = join(tmp.dir, `twice-${n}.json`);
      writeFileSync(config, JSON.stringify({ signing: { registry: reg } }));
      return { args: approveAs('amy'), config };
    },
  },
  {
    name: 'a registry that does not parse (every problem with its path)', rule: 'REGISTRY_LINE_SYNTAX',
    prepare: () => {
      const reg = join(tmp.dir, `bad-${n}`);
      writeFileSync(reg, `${readFileSync(people.registry, 'utf8')}zoe\nyan ssh-rsa AAAA\n`);
      const config = join(tmp.dir, `bad-${n}.json`);
      writeFileSync(config, JSON.stringify({ signing: { registry: reg } }));
      return { args: approveAs('amy'), config };
    },
  },
  { name: 'an approval by the proposer', rule: 'APPROVER_IS_PROPOSER', prepare: () => ({ args: approveAs('olivia') }) },
  { name: 'an approval by a signer the proposal does not name', rule: 'APPROVER_NOT_DESIGNATED', prepare: () => ({ args: approveAs('vera') }) },
  {
    name: 'two names backed by one key (the proposer\'s key re-registered to the approver)', rule: 'DUAL_CONTROL_SAME_KEY',
    prepare: () => {
      const reg = join(tmp.dir, `rotated-${n}`);
      const lines = readFileSync(people.registry, 'utf8').split('\n').filter((l) => l && !l.startsWith('olivia ') && !l.startsWith('amy '));
      writeFileSync(reg, [...lines, `amy ${people.keys.olivia.line}`].join('\n') + '\n');
      const config = join(tmp.dir, `rotated-${n}.json`);
      writeFileSync(config, JSON.stringify({ signing: { registry: reg } }));
      return { args: approveAs('olivia', '--actor', 'amy'), config };
    },
  },
  {
    name: 'a signature over other bytes (the proposal edited, renamed to its new digest)', rule: 'SIGNATURE_OTHER_BYTES',
    prepare: (store) => {
      const o = JSON.parse(readFileSync(proposalFile(store), 'utf8'));
      replaceProposal(store, { ...o, payload: o.payload.replace('notices paused', 'nothing to contain') });
      return { args: approveAs('amy') };
    },
  },
  {
    name: 'a signature made for another namespace', rule: 'SIGNATURE_NAMESPACE',
    prepare: (store) => {
      const o = JSON.parse(readFileSync(proposalFile(store), 'utf8'));
      const file = join(tmp.dir, `payload-${n}`);
      writeFileSync(file, o.payload);
      const sig = sshKeygenSign(people.keys.olivia.key, 'git', file);
      replaceProposal(store, { ...o, signatures: [{ ...o.signatures[0], sshsig: sig }] });
      return { args: approveAs('amy') };
    },
  },
  {
    name: 'a truncated signature', rule: 'SIGNATURE_MALFORMED',
    prepare: (store) => {
      const o = JSON.parse(readFileSync(proposalFile(store), 'utf8'));
      replaceProposal(store, { ...o, signatures: [{ ...o.signatures[0], sshsig: o.signatures[0].sshsig.slice(0, 120) }] });
      return { args: approveAs('amy') };
    },
  },
  { name: 'a withdrawal by someone who did not propose', rule: 'WITHDRAW_BY_PROPOSER', prepare: () => ({ args: ['withdraw', ID, '--version', '3', '--key', people.keys.amy.key] }) },
  {
    name: 'an approval of a withdrawn proposal', rule: 'PROPOSAL_WITHDRAWN',
    prepare: async (store) => {
      expect((await breaks(store, people.config)('withdraw', ID, '--version', '3', '--note', 'wrong approver', '--key', people.keys.olivia.key)).code).toBe(0);
      return { args: approveAs('amy') };
    },
  },
  { name: 'an approval of a version with no proposal', rule: 'PROPOSAL_UNKNOWN', prepare: () => ({ args: ['approve', ID, '--version', '4', '--key', people.keys.amy.key] }) },
  { name: 'a person acting as reconciler', rule: 'SIGNER_KEY_OF_ANOTHER', prepare: () => ({ args: ['advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--approver', 'amy', '--actor', 'reconciler', '--key', people.keys.olivia.key] }) },
];

describe('refusals: exit 2, the rule named, nothing written', () => {
  for (const row of REFUSALS) {
    it(row.name, async () => {
      const store = copy();
      const { args, config } = await row.prepare(store);
      const before = snapshot(store);
      const r = await breaks(store, config ?? people.config)(...args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${row.rule}`);
      expect(r.stderr).not.toMatch(/PRIVATE KEY/);
      expect(snapshot(store)).toEqual(before);
    });
  }

  it('an approval of a proposal whose version a rival proposal\'s countersignature took first: exit 6 (lost the race, CONTRACT §7), PROPOSAL_NOT_CURRENT named, nothing written', async () => {
    const store = copy();
    const first = readdirSync(join(store, 'breaks', ID, 'proposals'))[0].slice(7, 23);
    const b = breaks(store, people.config);
    expect((await b('advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--approver', 'abe', '--key', people.keys.olivia.key)).code).toBe(0);
    const rival = readdirSync(join(store, 'breaks', ID, 'proposals')).map((f) => f.slice(7, 23)).find((d) => d !== first)!;
    expect((await b('approve', ID, '--version', '3', '--proposal', rival, '--key', people.keys.abe.key)).code).toBe(0);
    const before = snapshot(store);
    const r = await b(...approveAs('amy', '--proposal', first));
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(`break ${ID}: version 3 already landed (CONTAINED by olivia): this proposal expected it and is no longer current (PROPOSAL_NOT_CURRENT); the break is CONTAINED at version 3`);
    expect(r.stderr).not.toMatch(/PRIVATE KEY/);
    expect(snapshot(store)).toEqual(before);
  });

  it('a registry that does not parse names every problem with its path', async () => {
    const reg = join(tmp.dir, 'bad-all');
    writeFileSync(reg, `zoe\nyan ssh-rsa AAAA\nolivia ${people.keys.amy.line}\n`);
    const config = join(tmp.dir, 'bad-all.json');
    writeFileSync(config, JSON.stringify({ signing: { registry: reg } }));
    const r = await breaks(copy(), config)(...approveAs('amy'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${reg}:1: REGISTRY_LINE_SYNTAX`);
    expect(r.stderr).toContain(`${reg}:2: REGISTRY_KEY_TYPE`);
    const run = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', srcDir, '--store', copy(), '--config', config]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${reg}:2: REGISTRY_KEY_TYPE`);
  });
});

describe('countersigned events', () => {
  it('land with both signatures, which ssh-keygen -Y verify accepts over the payload alone', async () => {
    const store = copy();
    const r = await breaks(store, people.config)(...approveAs('amy'), '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.event).toMatchObject({ version: 3, to_state: 'CONTAINED', actor: 'olivia', evidence: { approver: 'amy', note: 'notices paused' }, dual_control: true, proof: 'signed' });
    const stored = JSON.parse(readFileSync(join(store, 'breaks', ID, 'events', '000003.json'), 'utf8'));
    expect(stored.signatures.map((s: { role: string; signer: string }) => [s.role, s.signer])).toEqual([['actor', 'olivia'], ['approver', 'amy']]);
    const previous = JSON.parse(readFileSync(join(store, 'breaks', ID, 'events', '000002.json'), 'utf8'));
    expect(JSON.parse(stored.payload).previous_event_sha256).toBe(payloadDigest(previous.payload));
    for (const [i, who] of [[0, 'olivia'], [1, 'amy']] as const) {
      const sig = join(tmp.dir, `event3-${who}.sig`);
      writeFileSync(sig, stored.signatures[i].sshsig);
      const v = sshKeygenVerify({ registry: people.registry, signer: who, namespace: 'reckon-break', signature: sig, message: stored.payload });
      expect(v.code, v.out).toBe(0);
      expect(v.out).toContain(`Good "reckon-break" signature for ${who} with ED25519 key ${people.keys[who].fingerprint}`);
      expect(sshKeygenVerify({ registry: people.registry, signer: who, namespace: 'reckon-break', signature: sig, message: readFileSync(join(store, 'breaks', ID, 'events', '000003.json')) }).code).not.toBe(0);
    }
    const registries = readdirSync(join(store, 'signers'));
    expect(registries).toEqual([`${stored.signatures[0].registry_sha256}.allowed_signers`]);
    expect(readFileSync(join(store, 'signers', registries[0]))).toEqual(readFileSync(people.registry));
    const shown = (await breaks(store, people.config)('show', ID, '--json')).json;
    expect(shown.proposals.map((p: { status: string }) => p.status)).toEqual(['approved']);
    const verified = await reckonIn(['manifest', 'verify', '--store', store, '--json']);
    expect(verified.code, verified.stdout).toBe(0);
    expect(verified.json.breaks.counts).toMatchObject({ events: 3, signed: 2, countersigned: 1, by_run: 1, proposals: 1, signatures: 4 });
  });

  it('a signer whose key ssh-agent holds countersigns through the agent (the key named by its .pub in RECKON_SIGNING_KEY_FILE)', async () => {
    const agent = startAgent(tmp.dir, [people.keys.amy.key]);
    try {
      const store = copy();
      const r = await reckonIn(['breaks', 'approve', ID, '--version', '3', '--store', store, '--config', people.config, '--json'], { env: { RECKON_SIGNING_KEY_FILE: people.keys.amy.pub, SSH_AUTH_SOCK: agent.socket } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json.proof.signatures.map((s: { signer: string }) => s.signer)).toEqual(['olivia', 'amy']);
    } finally {
      agent.stop();
    }
  });
});

describe('unsigned mode and legacy stores', () => {
  it('runs without signatures only when the configuration says so, and says so in the run, the store check and the evidence', async () => {
    const store = join(tmp.dir, 'unsigned');
    const config = join(tmp.dir, 'unsigned.json');
    writeFileSync(config, JSON.stringify({ signing: { unsigned: true } }));
    const run = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', srcDir, '--store', store, '--config', config]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('break transitions are NOT signed');
    const b = breaks(store, config);
    expect((await b('advance', ID, '--to', 'TRIAGED', '--expected-version', '1', '--owner', 'olivia', '--classification', 'MISSING')).stderr).toContain('--actor NAME is required');
    expect((await b('advance', ID, '--to', 'TRIAGED', '--expected-version', '1', '--actor', 'tom', '--owner', 'olivia', '--classification', 'MISSING')).code).toBe(0);
    expect((await b('advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--actor', 'olivia', '--approver', 'amy')).code).toBe(0);
    expect((await b('approve', ID, '--version', '3', '--actor', 'olivia')).stderr).toContain('APPROVER_IS_PROPOSER');
    expect((await b('approve', ID, '--version', '3', '--actor', 'amy')).code).toBe(0);
    const m = JSON.parse(readFileSync(readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json')).map((f) => join(store, 'manifests', f))[0], 'utf8'));
    expect(m.break_log.signing).toEqual({ mode: 'unsigned', namespace: 'reckon-break', registry_sha256: null });
    expect(m.notes).toContain('break transitions are not signed: the configuration says signing.unsigned: true, so who made each step is not proven');
    const v = await reckonIn(['manifest', 'verify', '--store', store]);
    expect(v.code, v.stdout).toBe(0);
    expect(v.stdout).toContain('2 UNSIGNED by configuration');
    const bag = join(tmp.dir, 'unsigned-bag');
    expect((await reckonIn(['evidence', 'pack', '--break', ID, '--store', store, '--out', bag])).code).toBe(0);
    expect(readFileSync(join(bag, 'bag-info.txt'), 'utf8')).toContain('Break-Signatures: 0 signed step(s), 0 countersigned; 1 by runs; 2 UNSIGNED by configuration; 0 legacy object(s) from before signing');
    expect(readFileSync(join(bag, 'data', 'VERIFYING.txt'), 'utf8')).toContain('Not proven by a signature: 2 unsigned step(s)');
    expect((await reckonIn(['evidence', 'verify', bag])).code).toBe(0);
    // Without a registry and without `unsigned: true`, a person's transition is refused.
    const none = await reckonIn(['breaks', 'advance', ID, '--to', 'CORRECTED', '--expected-version', '3', '--actor', 'olivia', '--approver', 'amy', '--store', store]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('names no signer registry (signing.registry); to run without signatures say signing.unsigned: true');
  });

  it('reads a store written before signing: legacy events are reported as legacy, and new transitions on them are signed and chained', async () => {
    const store = join(tmp.dir, 'legacy');
    const dir = join(store, 'breaks', ID);
    const legacy = {
      break_id: ID, version: 1, expected_version: 0, control_id: 'RC06', kind: 'NOTICE_UNDELIVERED', key: 'INT-2', from_state: null, to_state: 'OPEN',
      actor: 'reconciler', at: '2026-11-03T00:10:00.000Z', evidence: { detail: 'no DELIVERED receipt' },
      window: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' }, record_time: '2026-11-02T10:00:00.000001Z', run_id: 'run-20261103t001000z-00000000',
    };
    mkdirSync(join(dir, 'events'), { recursive: true });
    mkdirSync(join(dir, 'observations'), { recursive: true });
    writeFileSync(join(dir, 'events', '000001.json'), canonicalJson(legacy));
    writeFileSync(join(dir, 'observations', 'run-20261103t001000z-00000000.json'), canonicalJson({
      break_id: ID, run_id: 'run-20261103t001000z-00000000', window: legacy.window, observed_at: legacy.at, record_time: legacy.record_time, detail: 'no DELIVERED receipt', disposition: 'OPENED',
    }));
    const b = breaks(store, people.config);
    const t = await b('advance', ID, '--to', 'TRIAGED', '--expected-version', '1', '--owner', 'olivia', '--classification', 'MISSING', '--key', people.keys.tom.key, '--json');
    expect(t.code, t.stderr).toBe(0);
    expect(t.json.event.previous_event_sha256).toBe(payloadDigest(readFileSync(join(dir, 'events', '000001.json'), 'utf8')));
    const v = await reckonIn(['manifest', 'verify', '--store', store, '--json']);
    expect(v.code, JSON.stringify(v.json.problems)).toBe(0);
    expect(v.json.breaks.counts).toMatchObject({ legacy: 2, signed: 1 });
    expect(v.json.breaks.notices.map((x: { key: string }) => x.key)).toEqual(expect.arrayContaining([`breaks/${ID}/events/000001.json`, `breaks/${ID}/observations/run-20261103t001000z-00000000.json`]));
    // A legacy-form event after a signed one is tampering, not legacy.
    writeFileSync(join(dir, 'events', '000003.json'), canonicalJson({ ...legacy, version: 3, expected_version: 2, from_state: 'TRIAGED', to_state: 'CONTAINED', actor: 'olivia' }));
    const forged = await reckonIn(['manifest', 'verify', '--store', store, '--json']);
    expect(forged.code).toBe(1);
    expect(forged.json.problems[0]).toEqual({ key: `breaks/${ID}/events/000003.json`, problem: expect.stringContaining('legacy events only precede signing') });
  });
});

describe('races and landed proposals (attack pass, issue 17)', () => {
  it('a proposal that landed cannot be withdrawn: exit 2 PROPOSAL_NOT_CURRENT, nothing written', async () => {
    const store = copy();
    const b = breaks(store, people.config);
    expect((await b(...approveAs('amy'))).code).toBe(0);
    const before = snapshot(store);
    const w = await b('withdraw', ID, '--version', '3', '--note', 'late', '--key', people.keys.olivia.key);
    expect(w.code, w.stderr).toBe(2);
    expect(w.stderr).toContain('PROPOSAL_NOT_CURRENT');
    expect(w.stderr).toContain('it landed as version 3');
    expect(snapshot(store)).toEqual(before);
    const shown = await b('show', ID);
    expect(shown.stdout).toMatch(/CONTAINED by olivia, approver amy, .*: APPROVED {2}/);
    expect(shown.stdout).not.toContain('withdrawn');
  });

  it('an approval that loses to another approval of the same proposal exits 6, whether it loses at the read or at the write', async () => {
    const store = copy();
    const b = breaks(store, people.config);
    const both = await Promise.all([b(...approveAs('amy')), b(...approveAs('amy'))]);
    expect(both.map((r) => r.code).sort()).toEqual([0, 6]);
    expect(both.find((r) => r.code === 6)!.stderr).toContain('ConcurrencyError');
    const again = await b(...approveAs('amy'));
    expect(again.code, again.stderr).toBe(6);
    expect(again.stderr).toContain("version 3 already landed with amy's countersignature of this proposal (yours): nothing is left to do");
    // At the write: the approver read the log before the other approval landed.
    const store2 = copy();
    const act = await actionContext(await openStore(store2), await loadConfig(people.config, await loadControls()), { file: people.keys.amy.key });
    const stale = (await new BreakStore(act.store).read(ID))!;
    expect((await breaks(store2, people.config)(...approveAs('amy'))).code).toBe(0);
    await expect(approveProposal(act, stale, 3, {})).rejects.toThrow(ConcurrencyError);
  });

  it('a superseded proposal (another event took its version) cannot be withdrawn either: exit 2 PROPOSAL_NOT_CURRENT', async () => {
    const store = copy();
    const b = breaks(store, people.config);
    const first = readdirSync(join(store, 'breaks', ID, 'proposals'))[0].slice(7, 23);
    expect((await b('advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--approver', 'abe', '--key', people.keys.olivia.key)).code).toBe(0);
    const rival = readdirSync(join(store, 'breaks', ID, 'proposals')).map((f) => f.slice(7, 23)).find((d) => d !== first)!;
    expect((await b('approve', ID, '--version', '3', '--proposal', rival, '--key', people.keys.abe.key)).code).toBe(0);
    const before = snapshot(store);
    const w = await b('withdraw', ID, '--version', '3', '--proposal', first, '--key', people.keys.olivia.key);
    expect(w.code, w.stderr).toBe(2);
    expect(w.stderr).toContain('PROPOSAL_NOT_CURRENT');
    expect(snapshot(store)).toEqual(before);
  });
});
