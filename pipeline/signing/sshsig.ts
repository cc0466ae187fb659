/**
 * SSH signatures in the SSHSIG format of OpenSSH's PROTOCOL.sshsig, made and checked inside reckon
 * (node:crypto Ed25519), byte for byte what `ssh-keygen -Y sign` writes and `ssh-keygen -Y verify`
 * reads:
 *
 *   signed data  = "SSHSIG" ‖ string namespace ‖ string reserved ‖ string hash_algorithm ‖ string H(message)
 *   signature    = "SSHSIG" ‖ uint32 1 ‖ string publickey ‖ string namespace ‖ string reserved
 *                  ‖ string hash_algorithm ‖ string (string "ssh-ed25519" ‖ string sig)
 *   armour       = "-----BEGIN SSH SIGNATURE-----", base64 in lines of 70, "-----END SSH SIGNATURE-----"
 *
 * Ed25519 is deterministic, so reckon's signature of a message equals ssh-keygen's for the same key.
 */
import { createHash, verify as cryptoVerify } from 'node:crypto';
import { SignatureError } from '../core/errors.js';
import type { SigningKey } from './signing-key.js';
import { KEY_TYPE, KeyFormatError, publicKeyFromBlob, verifyingKey, type SshPublicKey } from './ssh-keys.js';
import { WireError, WireReader, sshString, uint32 } from './ssh-wire.js';

const MAGIC = Buffer.from('SSHSIG', 'ascii');
const VERSION = 1;
/** The hash reckon signs with (ssh-keygen's default). */
export const SSHSIG_HASH = 'sha512';
const HASHES = ['sha256', 'sha512'] as const;
const BEGIN = '-----BEGIN SSH SIGNATURE-----';
const END = '-----END SSH SIGNATURE-----';

/** The refusal rules of checking a signature (SignatureError, exit 2). */
export const SIGNATURE_RULES = {
  SIGNATURE_MALFORMED: 'the signature is not a whole SSH signature (armour, SSHSIG framing, Ed25519 signature): it is truncated or damaged',
  SIGNATURE_NAMESPACE: 'the signature was made for another namespace',
  SIGNATURE_OTHER_BYTES: 'the signature does not verify over these bytes: they are not the bytes that were signed',
} as const;

/** A parsed SSH signature. */
export interface ParsedSshsig {
  readonly publicKey: SshPublicKey;
  readonly namespace: string;
  readonly hashAlgorithm: (typeof HASHES)[number];
  /** The raw 64-byte Ed25519 signature. */
  readonly signature: Buffer;
}

/** The bytes that are actually signed for `message` in `namespace` (PROTOCOL.sshsig). */
export function signedData(namespace: string, message: Buffer, hash: (typeof HASHES)[number] = SSHSIG_HASH): Buffer {
  return Buffer.concat([MAGIC, sshString(namespace), sshString(''), sshString(hash), sshString(createHash(hash).update(message).digest())]);
}

/** The armoured text of a signature blob, with ssh-keygen's line breaks. */
export function armour(blob: Buffer): string {
  const b64 = blob.toString('base64');
  const lines = b64.match(/.{1,70}/g) ?? [];
  return `${BEGIN}\n${lines.join('\n')}\n${END}\n`;
}

/** Signs `message` for `namespace` with `key`; returns the armoured SSH signature. */
export async function sshsigSign(message: Buffer, key: SigningKey, namespace: string): Promise<string> {
  const raw = await key.sign(signedData(namespace, message));
  const blob = Buffer.concat([
    MAGIC, uint32(VERSION), sshString(key.publicKey.blob), sshString(namespace), sshString(''), sshString(SSHSIG_HASH),
    sshString(Buffer.concat([sshString(KEY_TYPE), sshString(raw)])),
  ]);
  return armour(blob);
}

const malformed = (detail: string): never => {
  throw new SignatureError('SIGNATURE_MALFORMED', `${SIGNATURE_RULES.SIGNATURE_MALFORMED} (${detail})`);
};

/** Parses an armoured SSH signature. Throws SignatureError('SIGNATURE_MALFORMED') naming what is wrong. */
export function parseSshsig(armoured: string): ParsedSshsig {
  const text = armoured.trim();
  if (!text.startsWith(BEGIN) || !text.endsWith(END)) malformed('no BEGIN/END SSH SIGNATURE armour');
  const body = text.slice(BEGIN.length, text.length - END.length).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) malformed('the armoured body is not base64');
  const blob = Buffer.from(body, 'base64');
  try {
    const r = new WireReader(blob);
    if (!r.bytes(6).equals(MAGIC)) malformed('no SSHSIG preamble');
    const version = r.u32();
    if (version !== VERSION) malformed(`signature version ${version}`);
    const keyBlob = r.string();
    const namespace = r.text();
    r.string(); // reserved
    const hash = r.text();
    if (!(HASHES as readonly string[]).includes(hash)) malformed(`hash algorithm ${hash}`);
    const sig = new WireReader(r.string());
    if (!r.done) malformed('bytes after the signature');
    const sigType = sig.text();
    const raw = sig.string();
    if (sigType !== KEY_TYPE || raw.length !== 64 || !sig.done) malformed(`a ${sigType} signature of ${raw.length} bytes`);
    return { publicKey: publicKeyFromBlob(keyBlob), namespace, hashAlgorithm: hash as ParsedSshsig['hashAlgorithm'], signature: Buffer.from(raw) };
  } catch (e) {
    if (e instanceof WireError || e instanceof KeyFormatError) malformed(e.message);
    throw e;
  }
}

/**
 * Checks that `armoured` is a signature of `message` for `namespace` and returns it parsed (the
 * signer's key is its `publicKey`; who that is, the registry says). Throws SignatureError:
 * SIGNATURE_MALFORMED, SIGNATURE_NAMESPACE or SIGNATURE_OTHER_BYTES.
 */
export function sshsigVerify(message: Buffer, armoured: string, namespace: string): ParsedSshsig {
  const sig = parseSshsig(armoured);
  if (sig.namespace !== namespace) throw new SignatureError('SIGNATURE_NAMESPACE', `${SIGNATURE_RULES.SIGNATURE_NAMESPACE}: '${sig.namespace}', not '${namespace}'`);
  const ok = cryptoVerify(null, signedData(namespace, message, sig.hashAlgorithm), verifyingKey(sig.publicKey), sig.signature);
  if (!ok) throw new SignatureError('SIGNATURE_OTHER_BYTES', `${SIGNATURE_RULES.SIGNATURE_OTHER_BYTES} (key ${sig.publicKey.fingerprint})`);
  return sig;
}
