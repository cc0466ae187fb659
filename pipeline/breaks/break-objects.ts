/**
 * The stored form of break objects (issue 17): events, observations, proposals and withdrawals.
 * Each is one canonical-JSON object written once:
 *
 *   { "payload": "<canonical JSON of the object's body>",
 *     "signatures": [ …signature records (signing/signatures.ts)… ],
 *     "binding": { "manifest_key", "manifest_sha256" } }          (objects a run writes)
 *
 * The payload is the object: its SHA-256 is the object's digest (what the next event's
 * `previous_event_sha256` and a manifest's head digests name), and signatures are SSH signatures
 * over exactly its bytes. A person's object carries signatures; a run's object carries the binding
 * to the manifest that lists it (written after that manifest, so the binding can name it).
 *
 * Objects written before this format (plain canonical JSON of the body, no `payload`) still read:
 * they are *legacy*, their digest is the SHA-256 of the whole file, and they have neither
 * signatures nor binding.
 */
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import type { SignatureRecord } from '../signing/signatures.js';

/** Format names written in payloads; published values. */
export const FORMATS = {
  event: 'reckon.break-event/2',
  observation: 'reckon.break-observation/2',
  withdrawal: 'reckon.break-withdrawal/1',
} as const;

/** The manifest that lists a run's object: bound to the object when it is written, after publication. */
export interface ManifestBinding {
  readonly manifest_key: string;
  readonly manifest_sha256: string;
}

/** A break object as stored (see the module comment). */
export interface BreakObject {
  readonly payload: string;
  readonly signatures: readonly SignatureRecord[];
  readonly binding?: ManifestBinding;
}

/** A stored object read back: its form, digest, body and what vouches for it. */
export interface DecodedObject {
  readonly key: string;
  readonly format: 'legacy' | 'v2';
  /** The signed (or, for legacy objects, the whole) text. */
  readonly payload: string;
  /** SHA-256 of the payload's bytes. */
  readonly digest: string;
  readonly body: Record<string, unknown>;
  readonly signatures: readonly SignatureRecord[];
  readonly binding: ManifestBinding | null;
}

/** An object that is not a break object of either form (truncated, edited into something else). */
export class ObjectFormatError extends Error {
  constructor(readonly key: string, message: string) {
    super(`${key}: ${message}`);
    this.name = 'ObjectFormatError';
  }
}

/** SHA-256 of a payload's UTF-8 bytes: the digest break objects are named and chained by. */
export function payloadDigest(payload: string): string {
  return sha256Hex(payload);
}

/** The stored bytes of an object (canonical JSON). */
export function encodeObject(o: BreakObject): string {
  return canonicalJson({ payload: o.payload, signatures: o.signatures, ...(o.binding ? { binding: o.binding } : {}) });
}

/** A payload for `body`: its canonical JSON. */
export function payloadOf(body: object): string {
  return canonicalJson(body);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Reads a stored object of either form. Throws ObjectFormatError when it is neither. */
export function decodeObject(key: string, bytes: Buffer): DecodedObject {
  const text = bytes.toString('utf8');
  let doc: unknown;
  try { doc = JSON.parse(text); } catch (e) { throw new ObjectFormatError(key, `is not JSON (${bytes.length} bytes): ${(e as Error).message}`); }
  if (!isObject(doc)) throw new ObjectFormatError(key, 'is not a JSON object');
  if (typeof doc.payload !== 'string') return { key, format: 'legacy', payload: text, digest: sha256Hex(bytes), body: doc, signatures: [], binding: null };
  let body: unknown;
  try { body = JSON.parse(doc.payload); } catch { throw new ObjectFormatError(key, 'has a payload that is not JSON'); }
  if (!isObject(body)) throw new ObjectFormatError(key, 'has a payload that is not a JSON object');
  if (!Array.isArray(doc.signatures)) throw new ObjectFormatError(key, 'has no signatures list');
  checkEnvelope(key, doc);
  const b = doc.binding as ManifestBinding | undefined;
  const binding = b ? { manifest_key: b.manifest_key, manifest_sha256: b.manifest_sha256 } : null;
  return { key, format: 'v2', payload: doc.payload, digest: payloadDigest(doc.payload), body, signatures: doc.signatures as SignatureRecord[], binding };
}

/** The fields of the envelope (encodeObject), of a binding and of a signature record: nothing else is accepted. */
const ENVELOPE_FIELDS = ['payload', 'signatures', 'binding'] as const;
const BINDING_FIELDS = ['manifest_key', 'manifest_sha256'] as const;
const SIGNATURE_FIELDS = ['role', 'signer', 'key', 'namespace', 'registry_sha256', 'signed_at', 'sshsig'] as const;

/**
 * Refuses an envelope with a field the format does not have, at any level (the envelope, its
 * binding, each signature record), or a field of the wrong type: nothing outside the payload is
 * signed, so an added field (a `comment` beside a signature, say) is text nobody vouches for that
 * would otherwise be shown and packed as if it were. Throws ObjectFormatError naming the field.
 */
function checkEnvelope(key: string, doc: Record<string, unknown>): void {
  const tampered = (what: string) => new ObjectFormatError(key, `${what}: not part of the break object's envelope (payload, signatures, binding), so not signed; the object was edited (tampering)`);
  const only = (o: Record<string, unknown>, fields: readonly string[], at: string) => {
    const extra = Object.keys(o).find((f) => !fields.includes(f));
    if (extra !== undefined) throw tampered(`has an unknown field ${at}${at ? '.' : ''}${extra}`);
  };
  only(doc, ENVELOPE_FIELDS, '');
  if (doc.binding !== undefined) {
    const b = doc.binding;
    if (!isObject(b)) throw tampered('has a binding that is not an object');
    only(b, BINDING_FIELDS, 'binding');
    for (const f of BINDING_FIELDS) if (typeof b[f] !== 'string') throw tampered(`has binding.${f} missing or not a string`);
  }
  (doc.signatures as unknown[]).forEach((sig, i) => {
    if (!isObject(sig)) throw tampered(`has signatures[${i}] that is not an object`);
    only(sig, SIGNATURE_FIELDS, `signatures[${i}]`);
    for (const f of SIGNATURE_FIELDS) if (typeof sig[f] !== 'string') throw tampered(`has signatures[${i}].${f} missing or not a string`);
    if (sig.role !== 'actor' && sig.role !== 'approver') throw tampered(`has signatures[${i}].role ${JSON.stringify(sig.role)}, neither actor nor approver`);
  });
}

const pad = (n: number) => String(n).padStart(6, '0');

/** Store keys of a break's objects. */
export const BREAK_KEYS = {
  event: (breakId: string, version: number) => `breaks/${breakId}/events/${pad(version)}.json`,
  observation: (breakId: string, runId: string) => `breaks/${breakId}/observations/${runId}.json`,
  /** A proposal for `version`, named by its digest's first 16 hex digits. */
  proposal: (breakId: string, version: number, digest: string) => `breaks/${breakId}/proposals/${pad(version)}-${digest.slice(0, 16)}.json`,
  withdrawal: (breakId: string, version: number, proposalDigest: string) => `breaks/${breakId}/proposals/${pad(version)}-${proposalDigest.slice(0, 16)}.withdrawal.json`,
} as const;

/** What a key under `breaks/<id>/` is: an event, an observation, a proposal or a withdrawal (null otherwise). */
export function keyKind(key: string): 'event' | 'observation' | 'proposal' | 'withdrawal' | null {
  if (/^breaks\/[^/]+\/events\/[0-9]{6}\.json$/.test(key)) return 'event';
  if (/^breaks\/[^/]+\/observations\/[a-z0-9_-]+\.json$/.test(key)) return 'observation';
  if (/^breaks\/[^/]+\/proposals\/[0-9]{6}-[0-9a-f]{16}\.withdrawal\.json$/.test(key)) return 'withdrawal';
  if (/^breaks\/[^/]+\/proposals\/[0-9]{6}-[0-9a-f]{16}\.json$/.test(key)) return 'proposal';
  return null;
}
