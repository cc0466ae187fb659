/**
 * SSH signatures made and checked inside reckon (pipeline/signing/), against real OpenSSH:
 * keys made by `ssh-keygen`, signatures compared byte for byte with `ssh-keygen -Y sign`, checked
 * both ways with `ssh-keygen -Y verify`, a passphrase-protected key, a key held by a real
 * ssh-agent; every refusal of a signature, a key and a registry, table-driven.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, SignatureError } from '../pipeline/core/errors.js';
import { Secret } from '../pipeline/core/secret.js';
import { SignerRegistry } from '../pipeline/signing/registry.js';
import { loadSigningKey, type SigningKey } from '../pipeline/signing/signing-key.js';
import { signPayload, verifyRecord, type SignatureRecord } from '../pipeline/signing/signatures.js';
import { parseSshsig, sshsigSign, sshsigVerify } from '../pipeline/signing/sshsig.js';
import { scratchDir } from './helpers/cli.js';
import { makeKey, makeSigners, sshKeygenSign, sshKeygenVerify, startAgent, type TestKey } from './helpers/ssh.js';

const NS = 'reckon-break';
const MESSAGE = Buffer.from('{"break_id":"brk-000000000000000000000001","to_state":"CONTAINED","version":3}', 'utf8');

let tmp: ReturnType<typeof scratchDir>;
let keys: Record<string, TestKey>;
let registryPath: string;
let olivia: SigningKey;

beforeAll(async () => {
  tmp = scratchDir('reckon-signing-');
  ({ keys, registry: registryPath } = makeSigners(tmp.dir, ['olivia', 'amy']));
  olivia = await loadSigningKey({ file: keys.olivia.key });
});
afterAll(() => tmp?.cleanup());

function refusal(fn: () => unknown): { rule: string; message: string } {
  try { fn(); } catch (e) {
    if (e instanceof SignatureError) return { rule: e.rule, message: e.message };
    throw e;
  }
  throw new Error('expected a SignatureError');
}

async function refusalOf(p: Promise<unknown>): Promise<string> {
  try { await p; } catch (e) { if (e instanceof SignatureError) return e.rule; throw e; }
  throw new Error('expected a SignatureError');
}

describe('sshsig against ssh-keygen', () => {
  it('signs byte for byte as ssh-keygen -Y sign does (Ed25519 is deterministic)', async () => {
    const file = join(tmp.dir, 'message.json');
    writeFileSync(file, MESSAGE);
    const theirs = sshKeygenSign(keys.olivia.key, NS, file);
    const ours = await sshsigSign(MESSAGE, olivia, NS);
    expect(ours).toBe(theirs);
    expect(ours.split('\n').map((l) => l.length).slice(1, -3)).toEqual(expect.arrayContaining([70]));
  });

  it('is verified by ssh-keygen -Y verify, and verifies what ssh-keygen signed', async () => {
    const sigFile = join(tmp.dir, 'ours.sig');
    writeFileSync(sigFile, await sshsigSign(MESSAGE, olivia, NS));
    const ok = sshKeygenVerify({ registry: registryPath, signer: 'olivia', namespace: NS, signature: sigFile, message: MESSAGE });
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toContain(`Good "${NS}" signature for olivia with ED25519 key ${keys.olivia.fingerprint}`);
    expect(sshKeygenVerify({ registry: registryPath, signer: 'amy', namespace: NS, signature: sigFile, message: MESSAGE }).code).not.toBe(0);
    expect(sshKeygenVerify({ registry: registryPath, signer: 'olivia', namespace: NS, signature: sigFile, message: Buffer.concat([MESSAGE, Buffer.from(' ')]) }).code).not.toBe(0);

    const file = join(tmp.dir, 'amy-message');
    writeFileSync(file, MESSAGE);
    const theirs = sshKeygenSign(keys.amy.key, NS, file);
    const parsed = sshsigVerify(MESSAGE, theirs, NS);
    expect(parsed.publicKey.fingerprint).toBe(keys.amy.fingerprint);
    expect(parsed.hashAlgorithm).toBe('sha512');
  });

  it('reads a passphrase-protected key with its passphrase, and never shows the passphrase or the key', async () => {
    const k = makeKey(tmp.dir, 'paula', { passphrase: 'correct horse battery staple', rounds: 1 });
    const key = await loadSigningKey({ file: k.key, passphrase: new Secret('correct horse battery staple') });
    expect(key.publicKey.fingerprint).toBe(k.fingerprint);
    const sigFile = join(tmp.dir, 'paula.sig');
    writeFileSync(sigFile, await sshsigSign(MESSAGE, key, NS));
    const reg = join(tmp.dir, 'paula_signers');
    writeFileSync(reg, `paula ${k.line}\n`);
    expect(sshKeygenVerify({ registry: reg, signer: 'paula', namespace: NS, signature: sigFile, message: MESSAGE }).code).toBe(0);
    const privateText = readFileSync(k.key, 'utf8');
    for (const passphrase of [undefined, 'wrong horse']) {
      const e = (await loadSigningKey({ file: k.key, passphrase: passphrase === undefined ? null : new Secret(passphrase) }).catch((x: unknown) => x)) as SignatureError;
      expect(e).toBeInstanceOf(SignatureError);
      expect(e.rule).toBe('SIGNING_KEY_PASSPHRASE');
      const shown = `${e.message} ${inspect(e)}`;
      expect(shown).not.toContain('horse');
      expect(shown).not.toContain(privateText.split('\n')[1]);
    }
    const fromText = await loadSigningKey({ text: new Secret(privateText), passphrase: new Secret('correct horse battery staple') });
    expect(fromText.publicKey.fingerprint).toBe(k.fingerprint);
    expect(fromText.source).toBe('RECKON_SIGNING_KEY');
    // The pipeline's key, given as RECKON_PIPELINE_KEY text, is named by its own variables.
    const pipeline = (await loadSigningKey({ text: new Secret(privateText), passphrase: new Secret('wrong horse'), variable: 'RECKON_PIPELINE_KEY' }).catch((x: unknown) => x)) as SignatureError;
    expect(pipeline.rule).toBe('SIGNING_KEY_PASSPHRASE');
    expect(pipeline.message).toBe('SIGNING_KEY_PASSPHRASE: the signing key is protected: RECKON_PIPELINE_KEY_PASSPHRASE is missing or wrong (or load the key into ssh-agent and give its .pub file) (RECKON_PIPELINE_KEY)');
    expect(pipeline.message).not.toContain('horse');
    const pipelineKey = await loadSigningKey({ text: new Secret(privateText), passphrase: new Secret('correct horse battery staple'), variable: 'RECKON_PIPELINE_KEY' });
    expect(pipelineKey.source).toBe('RECKON_PIPELINE_KEY');
  });

  it('signs through a real ssh-agent when given the public key file, with the same bytes', async () => {
    const agent = startAgent(tmp.dir, [keys.olivia.key]);
    try {
      const viaAgent = await loadSigningKey({ file: keys.olivia.pub, agentSocket: agent.socket });
      expect(viaAgent.source).toBe(`ssh-agent ${agent.socket}`);
      expect(await sshsigSign(MESSAGE, viaAgent, NS)).toBe(await sshsigSign(MESSAGE, olivia, NS));
      expect(await refusalOf(loadSigningKey({ file: keys.amy.pub, agentSocket: agent.socket }))).toBe('SIGNING_KEY_NOT_IN_AGENT');
      expect(await refusalOf(loadSigningKey({ file: keys.amy.pub, agentSocket: null }))).toBe('SIGNING_KEY_NOT_IN_AGENT');
    } finally {
      agent.stop();
    }
  });

  it('refuses keys it cannot sign with, naming the rule', async () => {
    const rsa = join(tmp.dir, 'rsa.key');
    const { execFileSync } = await import('node:child_process');
    execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '2048', '-N', '', '-f', rsa]);
    writeFileSync(join(tmp.dir, 'garbage.key'), 'not a key\n');
    expect(await refusalOf(loadSigningKey({ file: rsa }))).toBe('SIGNING_KEY_TYPE');
    expect(await refusalOf(loadSigningKey({ file: `${rsa}.pub`, agentSocket: '/nonexistent' }))).toBe('SIGNING_KEY_TYPE');
    expect(await refusalOf(loadSigningKey({ file: join(tmp.dir, 'garbage.key') }))).toBe('SIGNING_KEY_UNREADABLE');
    expect(await refusalOf(loadSigningKey({ file: join(tmp.dir, 'missing.key') }))).toBe('SIGNING_KEY_UNREADABLE');
    expect(await refusalOf(loadSigningKey({}))).toBe('SIGNING_KEY_MISSING');
  });
});

describe('signature refusals', () => {
  let good: string;
  beforeAll(async () => { good = await sshsigSign(MESSAGE, olivia, NS); });
  const body = (armoured: string) => armoured.split('\n').slice(1, -2).join('');
  const rearmour = (b64: string) => `-----BEGIN SSH SIGNATURE-----\n${b64.match(/.{1,70}/g)!.join('\n')}\n-----END SSH SIGNATURE-----\n`;

  const rows: [string, () => [Buffer, string, string], string][] = [
    ['a signature over other bytes', () => [Buffer.from(MESSAGE.toString().replace('CONTAINED', 'CORRECTED')), good, NS], 'SIGNATURE_OTHER_BYTES'],
    ['one byte appended to the message', () => [Buffer.concat([MESSAGE, Buffer.from('\n')]), good, NS], 'SIGNATURE_OTHER_BYTES'],
    ['another namespace', () => [MESSAGE, good, 'git'], 'SIGNATURE_NAMESPACE'],
    ['truncated armour (END line lost)', () => [MESSAGE, good.slice(0, good.length - 40), NS], 'SIGNATURE_MALFORMED'],
    ['truncated body (last line lost)', () => { const l = good.split('\n'); return [MESSAGE, [...l.slice(0, -3), ...l.slice(-2)].join('\n'), NS]; }, 'SIGNATURE_MALFORMED'],
    ['not base64', () => [MESSAGE, good.replace(/^(-----BEGIN SSH SIGNATURE-----\n.)/, '$1%'), NS], 'SIGNATURE_MALFORMED'],
    ['no armour at all', () => [MESSAGE, body(good), NS], 'SIGNATURE_MALFORMED'],
    ['the signature bytes flipped', () => { const b = Buffer.from(body(good), 'base64'); b[b.length - 1] ^= 1; return [MESSAGE, rearmour(b.toString('base64')), NS]; }, 'SIGNATURE_OTHER_BYTES'],
    ['the preamble damaged', () => { const b = Buffer.from(body(good), 'base64'); b[0] = 0x58; return [MESSAGE, rearmour(b.toString('base64')), NS]; }, 'SIGNATURE_MALFORMED'],
  ];
  for (const [name, make, rule] of rows) {
    it(`${name}: ${rule}`, () => {
      const [message, sig, ns] = make();
      expect(refusal(() => sshsigVerify(message, sig, ns)).rule).toBe(rule);
    });
  }

  it('parses what it signed', () => {
    const p = parseSshsig(good);
    expect([p.namespace, p.hashAlgorithm, p.publicKey.fingerprint, p.signature.length]).toEqual([NS, 'sha512', keys.olivia.fingerprint, 64]);
  });
});

describe('signing against the registry', () => {
  let registry: SignerRegistry;
  let rec: SignatureRecord;
  const payload = MESSAGE.toString('utf8');
  beforeAll(async () => {
    registry = SignerRegistry.parse(readFileSync(registryPath), registryPath);
    rec = await signPayload(payload, { key: olivia, registry }, { role: 'actor', now: new Date('2026-11-04T09:00:00.000Z') });
  });

  it('records who signed with which key under which registry, and verifies', () => {
    expect(rec).toEqual({
      role: 'actor', signer: 'olivia', key: keys.olivia.fingerprint, namespace: NS,
      registry_sha256: registry.sha256, signed_at: '2026-11-04T09:00:00.000Z', sshsig: expect.stringMatching(/^-----BEGIN SSH SIGNATURE-----\n/),
    });
    expect(verifyRecord(payload, rec, registry)).toEqual({ signer: 'olivia', key: keys.olivia.fingerprint, role: 'actor' });
  });

  it('refuses an unknown key, a key of another signer, a key not allowed in the namespace, a record that lies', async () => {
    const stranger = makeKey(tmp.dir, 'stranger');
    const strangerKey = await loadSigningKey({ file: stranger.key });
    expect(await refusalOf(signPayload(payload, { key: strangerKey, registry }, { role: 'actor' }))).toBe('SIGNER_UNKNOWN_KEY');
    expect(await refusalOf(signPayload(payload, { key: olivia, registry }, { role: 'actor', claimed: 'amy' }))).toBe('SIGNER_KEY_OF_ANOTHER');
    const gitOnly = SignerRegistry.parse(Buffer.from(`olivia namespaces="git" ${keys.olivia.line}\n`), 'git-only');
    expect(await refusalOf(signPayload(payload, { key: olivia, registry: gitOnly }, { role: 'actor' }))).toBe('SIGNER_NAMESPACE_NOT_ALLOWED');
    expect(refusal(() => verifyRecord(payload, { ...rec, signer: 'amy' }, registry)).rule).toBe('SIGNER_KEY_OF_ANOTHER');
    expect(refusal(() => verifyRecord(payload, { ...rec, key: keys.amy.fingerprint }, registry)).rule).toBe('SIGNATURE_RECORD_MISMATCH');
    expect(refusal(() => verifyRecord(payload, rec, SignerRegistry.parse(Buffer.from(`amy ${keys.amy.line}\n`), 'amy-only'))).rule).toBe('SIGNER_UNKNOWN_KEY');
    expect(refusal(() => verifyRecord(`${payload} `, rec, registry)).rule).toBe('SIGNATURE_OTHER_BYTES');
  });
});

describe('the signer registry', () => {
  const parse = (text: string) => {
    try { SignerRegistry.parse(Buffer.from(text), 'signers.txt'); return []; } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message.split('\n').slice(1).map((l) => l.trim());
    }
  };

  it('accepts git\'s line format: comments, blank lines, quoted names, namespaces, comments after the key, several keys per signer', () => {
    const amy2 = makeKey(tmp.dir, 'amy2');
    const r = SignerRegistry.parse(Buffer.from([
      '# reckon signers', '', `olivia ${keys.olivia.line} olivia's laptop`, `"amy" namespaces="reckon-break,git" ${keys.amy.line}`, `amy ${amy2.line}`,
      `reconciler namespaces="reckon-manifest" ${makeKey(tmp.dir, 'pipeline').line}`,
    ].join('\n')), 'signers.txt');
    expect(r.signers()).toEqual(['amy', 'olivia', 'reconciler']);
    expect(r.entries.filter((e) => e.signer === 'amy').map((e) => e.line)).toEqual([4, 5]);
    expect(r.signer('AMY')).toBe('amy');
    expect(r.entries[1].namespaces).toEqual(['reckon-break', 'git']);
  });

  it('reports every problem with its line at once', () => {
    const other = makeKey(tmp.dir, 'other');
    const problems = parse([
      `olivia ${keys.olivia.line}`,
      `oscar ${keys.olivia.line}`,
      `olivia ${keys.olivia.line}`,
      `Olivia ${other.line}`,
      `alice,bob ${keys.amy.line}`,
      `*@corp ${keys.amy.line}`,
      `carol cert-authority ${keys.amy.line}`,
      `dave valid-before="20270101" ${keys.amy.line}`,
      `erin ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7`,
      `frank ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB`,
      `reconciler ${keys.amy.line}`,
      'gina',
      'hal "unclosed ssh-ed25519 AAAA',
    ].join('\n'));
    expect(problems).toEqual([
      `signers.txt:2: REGISTRY_KEY_TWO_NAMES: key ${keys.olivia.fingerprint} is listed for oscar here and for olivia on line 1: one key belongs to one signer`,
      `signers.txt:3: REGISTRY_KEY_REPEATED: key ${keys.olivia.fingerprint} of olivia is already listed on line 1`,
      'signers.txt:4: REGISTRY_NAME_SPELLING: Olivia is olivia (line 1) spelled another way: spell a signer one way',
      "signers.txt:5: REGISTRY_PRINCIPAL: 'alice,bob' is not one plain signer name (no lists, patterns or negation; letters, digits and . _ @ + -)",
      "signers.txt:6: REGISTRY_PRINCIPAL: '*@corp' is not one plain signer name (no lists, patterns or negation; letters, digits and . _ @ + -)",
      'signers.txt:7: REGISTRY_OPTION_UNSUPPORTED: option cert-authority is not supported by reckon (only namespaces="…"; retire a key by removing its line)',
      'signers.txt:8: REGISTRY_OPTION_UNSUPPORTED: option valid-before is not supported by reckon (only namespaces="…"; retire a key by removing its line)',
      `signers.txt:8: REGISTRY_KEY_TWO_NAMES: key ${keys.amy.fingerprint} is listed for dave here and for carol on line 7: one key belongs to one signer`,
      'signers.txt:9: REGISTRY_KEY_TYPE: key type ssh-rsa is not supported: reckon signs and verifies ssh-ed25519 keys',
      'signers.txt:10: REGISTRY_KEY_INVALID: the key blob is truncated (needs 32 more byte(s) at offset 19, 0 left)',
      `signers.txt:11: REGISTRY_RESERVED_NAME: 'reconciler' is the pipeline: no key signs break objects (reckon-break) under that name`,
      `signers.txt:11: REGISTRY_KEY_TWO_NAMES: key ${keys.amy.fingerprint} is listed for reconciler here and for carol on line 7: one key belongs to one signer`,
      'signers.txt:12: REGISTRY_LINE_SYNTAX: expected: principal [options] key-type base64-key [comment]',
      'signers.txt:13: REGISTRY_LINE_SYNTAX: a double quote is not closed',
    ]);
    expect(parse('# nobody\n')).toEqual(['signers.txt:1: REGISTRY_EMPTY: the registry names no signer']);
  });
});
