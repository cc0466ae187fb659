/**
 * A person's signing key: an OpenSSH private key (file or text, passphrase-protected or not, read
 * with sshpk) signed with node:crypto, or a key held by ssh-agent (given as its public key file,
 * as `ssh-keygen -Y sign -f key.pub` does). Errors say which file and what is wrong, never the
 * key's bytes or the passphrase.
 */
import { createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type Sshpk from 'sshpk';
import { lazyRequire } from '../core/lazy-require.js';
import { SignatureError } from '../core/errors.js';
import type { Secret } from '../core/secret.js';
import { agentIdentities, agentSign } from './agent.js';
import { KEY_TYPE, KeyFormatError, parsePublicKeyText, publicKeyFromBlob, publicKeyFromRaw, sameKey, type SshPublicKey } from './ssh-keys.js';
import { WireReader } from './ssh-wire.js';

/** A key that can sign: its public half, where it lives (for messages) and the signing operation. */
export interface SigningKey {
  readonly publicKey: SshPublicKey;
  /** `file <path>`, the variable holding its text (`RECKON_SIGNING_KEY`, `RECKON_PIPELINE_KEY`) or `ssh-agent <socket>`. */
  readonly source: string;
  /** The raw 64-byte Ed25519 signature of `data`. */
  sign(data: Buffer): Promise<Buffer>;
}

/** Where to find the key: exactly one of `file` or `text`. */
export interface KeySource {
  /** A private key file, or a public key file whose private half the agent holds. */
  readonly file?: string | null;
  /** The private key's text itself. */
  readonly text?: Secret | null;
  readonly passphrase?: Secret | null;
  /** SSH_AUTH_SOCK, needed for a key in the agent. */
  readonly agentSocket?: string | null;
  /** The variable `text` and the passphrase came from, for messages: `RECKON_SIGNING_KEY` (default) or `RECKON_PIPELINE_KEY`. */
  readonly variable?: 'RECKON_SIGNING_KEY' | 'RECKON_PIPELINE_KEY';
}

/** The refusal rules of loading a key (SignatureError, exit 2). */
export const KEY_RULES = {
  SIGNING_KEY_MISSING: 'a signed transition needs the signer\'s key: --key FILE, RECKON_SIGNING_KEY_FILE or RECKON_SIGNING_KEY',
  SIGNING_KEY_UNREADABLE: 'the signing key cannot be read as an OpenSSH key',
  SIGNING_KEY_PASSPHRASE: 'the signing key is protected: RECKON_SIGNING_KEY_PASSPHRASE is missing or wrong (or load the key into ssh-agent and give its .pub file)',
  SIGNING_KEY_TYPE: `reckon signs with ${KEY_TYPE} keys only`,
  SIGNING_KEY_NOT_IN_AGENT: 'the public key given is not held by ssh-agent (SSH_AUTH_SOCK)',
} as const;

const refuse = (rule: keyof typeof KEY_RULES, detail: string, variable: KeySource['variable'] = 'RECKON_SIGNING_KEY'): never => {
  // The rules name a person's key; the pipeline's key has variables of its own.
  throw new SignatureError(rule, `${KEY_RULES[rule].replaceAll('RECKON_SIGNING_KEY', variable)} (${detail})`);
};

/** Loads the signing key of `src`. Throws SignatureError naming one of KEY_RULES. */
export async function loadSigningKey(src: KeySource): Promise<SigningKey> {
  if (src.file && src.text) refuse('SIGNING_KEY_UNREADABLE', 'a key file and a key text were both given');
  let bytes: Buffer;
  let where: string;
  if (src.file) {
    where = `file ${src.file}`;
    try { bytes = await readFile(src.file); } catch (e) { return refuse('SIGNING_KEY_UNREADABLE', `${where}: ${(e as NodeJS.ErrnoException).code ?? 'cannot be read'}`); }
  } else if (src.text) {
    where = src.variable ?? 'RECKON_SIGNING_KEY';
    bytes = Buffer.from(src.text.reveal(), 'utf8');
  } else {
    return refuse('SIGNING_KEY_MISSING', 'none was given');
  }
  const text = bytes.toString('utf8').trim();
  if (text.startsWith('ssh-') || text.startsWith('ecdsa-') || text.startsWith('sk-')) return agentKey(text, where, src.agentSocket ?? null);
  return privateKey(bytes, where, src.passphrase ?? null, src.variable);
}

/** sshpk, required when a private key file is first read (about 40 ms of start-up a run without one need not pay). */
const sshpkModule = lazyRequire<typeof Sshpk>('sshpk');

function privateKey(bytes: Buffer, where: string, passphrase: Secret | null, variable: KeySource['variable']): SigningKey {
  let parsed: Sshpk.PrivateKey;
  try {
    parsed = sshpkModule().parsePrivateKey(bytes, 'auto', passphrase ? { passphrase: passphrase.reveal() } : undefined);
  } catch (e) {
    const name = (e as Error).name;
    if (name === 'KeyEncryptedError' || /passphrase/i.test((e as Error).message)) return refuse('SIGNING_KEY_PASSPHRASE', where, variable);
    return refuse('SIGNING_KEY_UNREADABLE', where);
  }
  if (parsed.type !== 'ed25519') return refuse('SIGNING_KEY_TYPE', `${where} holds a ${parsed.type} key`);
  const parts = parsed.part as unknown as { k: { data: Buffer }; A: { data: Buffer } };
  const seed = parts.k.data.subarray(0, 32);
  const pub = parts.A.data;
  const key: KeyObject = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(seed).toString('base64url'), x: Buffer.from(pub).toString('base64url') }, format: 'jwk' });
  return { publicKey: publicKeyFromRaw(Buffer.from(pub)), source: where, sign: async (data) => cryptoSign(null, data, key) };
}

async function agentKey(text: string, where: string, socket: string | null): Promise<SigningKey> {
  let publicKey: SshPublicKey;
  try { publicKey = parsePublicKeyText(text); } catch (e) {
    if (e instanceof KeyFormatError && /not supported/.test(e.message)) return refuse('SIGNING_KEY_TYPE', `${where}: ${e.message}`);
    return refuse('SIGNING_KEY_UNREADABLE', `${where} is a public key line that does not parse`);
  }
  if (!socket) return refuse('SIGNING_KEY_NOT_IN_AGENT', `${where} is a public key and SSH_AUTH_SOCK is not set`);
  let held;
  try { held = await agentIdentities(socket); } catch (e) { return refuse('SIGNING_KEY_NOT_IN_AGENT', (e as Error).message); }
  if (!held.some((i) => { try { return sameKey(publicKeyFromBlob(i.blob), publicKey); } catch { return false; } })) {
    return refuse('SIGNING_KEY_NOT_IN_AGENT', `${publicKey.fingerprint} of ${where} is not among the agent's ${held.length} key(s)`);
  }
  return {
    publicKey, source: `ssh-agent ${socket}`,
    sign: async (data) => {
      const blob = await agentSign(socket, publicKey.blob, data);
      const r = new WireReader(blob);
      const type = r.text();
      const sig = r.string();
      if (type !== KEY_TYPE || sig.length !== 64) throw new SignatureError('SIGNING_KEY_NOT_IN_AGENT', `ssh-agent answered with a ${type} signature of ${sig.length} bytes`);
      return Buffer.from(sig);
    },
  };
}
