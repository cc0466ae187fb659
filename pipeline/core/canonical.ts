/**
 * Canonical JSON (RFC 8785, JCS). Every manifest, break event and digest is hashed over its
 * canonical bytes, so that equal content gives equal bytes on any machine.
 */
import canonicalize from 'canonicalize';

/** RFC 8785 canonical JSON text of a JSON value. Bigints must be converted to strings first. */
export function canonicalJson(value: unknown): string {
  const s = canonicalize(value);
  if (s === undefined) throw new Error('value cannot be canonicalized');
  return s;
}
