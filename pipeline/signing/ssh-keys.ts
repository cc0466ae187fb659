/**
 * OpenSSH public keys as reckon uses them: the `ssh-ed25519 AAAA… comment` line, the wire blob
 * inside it, its SHA-256 fingerprint as `ssh-keygen -l` prints it, and the node:crypto key object
 * that verifies with it. reckon signs and verifies ssh-ed25519 keys only: deterministic signatures,
 * no parameters to get wrong, and what `ssh-keygen -t ed25519` makes by default.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { WireError, WireReader, sshString } from './ssh-wire.js';

/** The one key type reckon signs and verifies with. */
export const KEY_TYPE = 'ssh-ed25519';

/** An ssh-ed25519 public key. */
export interface SshPublicKey {
  readonly type: typeof KEY_TYPE;
  /** The wire blob: string "ssh-ed25519", string key (32 bytes). */
  readonly blob: Buffer;
  /** The 32-byte Ed25519 public key. */
  readonly raw: Buffer;
  /** `SHA256:` and the unpadded base64 SHA-256 of the blob, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
}

/** A public key that cannot be used: its text, blob or type is not an ssh-ed25519 key. */
export class KeyFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyFormatError';
  }
}

/** `SHA256:<base64 without padding>` of a key blob. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The public key of a wire blob. Throws KeyFormatError for another type or a malformed blob. */
export function publicKeyFromBlob(blob: Buffer): SshPublicKey {
  let type: string;
  let raw: Buffer;
  try {
    const r = new WireReader(blob);
    type = r.text();
    if (type !== KEY_TYPE) throw new KeyFormatError(`key type ${type} is not supported: reckon signs and verifies ${KEY_TYPE} keys`);
    raw = r.string();
    if (!r.done) throw new KeyFormatError('the key blob has bytes after the key');
  } catch (e) {
    if (e instanceof WireError) throw new KeyFormatError(`the key blob is truncated (${e.message})`);
    throw e;
  }
  if (raw.length !== 32) throw new KeyFormatError(`an ${KEY_TYPE} key has 32 bytes, this one ${raw.length}`);
  return { type: KEY_TYPE, blob: Buffer.from(blob), raw: Buffer.from(raw), fingerprint: fingerprintOf(blob) };
}

/** The public key of a raw 32-byte Ed25519 key. */
export function publicKeyFromRaw(raw: Buffer): SshPublicKey {
  return publicKeyFromBlob(Buffer.concat([sshString(KEY_TYPE), sshString(raw)]));
}

/**
 * Parses `<type> <base64 blob> [comment]` (an `.pub` file or the key part of an allowed_signers
 * line). Throws KeyFormatError naming what is wrong.
 */
export function parsePublicKeyText(text: string): SshPublicKey {
  const [type, b64] = text.trim().split(/\s+/);
  if (!type || !b64) throw new KeyFormatError('expected "<key type> <base64 key> [comment]"');
  if (type !== KEY_TYPE) throw new KeyFormatError(`key type ${type} is not supported: reckon signs and verifies ${KEY_TYPE} keys`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new KeyFormatError('the key is not base64');
  const key = publicKeyFromBlob(Buffer.from(b64, 'base64'));
  if (key.blob.toString('base64') !== b64) throw new KeyFormatError('the key is not canonical base64');
  return key;
}

/** The key as an OpenSSH public key line without a comment: `ssh-ed25519 AAAA…`. */
export function publicKeyLine(key: SshPublicKey): string {
  return `${key.type} ${key.blob.toString('base64')}`;
}

/** The node:crypto key object that verifies Ed25519 signatures of `key`. */
export function verifyingKey(key: SshPublicKey): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.raw.toString('base64url') }, format: 'jwk' });
}

/** True when both are the same key. */
export function sameKey(a: SshPublicKey, b: SshPublicKey): boolean {
  return a.blob.equals(b.blob);
}
