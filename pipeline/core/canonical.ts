/**
 * Canonical JSON (RFC 8785, JCS). Every manifest, break event and digest is hashed over its
 * canonical bytes, so that equal content gives equal bytes on any machine.
 *
 * The algorithm is the `canonicalize` package's (4.0.0), byte for byte and error for error (NaN,
 * Infinity, lone surrogates, circular references; `toJSON` honoured; undefined and symbol members
 * left out, as null in arrays), with one change: a string's lone-surrogate check is the engine's
 * `String.prototype.isWellFormed` instead of a loop over its characters in JavaScript, which was
 * most of the time of canonicalizing a run's break plan and manifest at 10^5 differences
 * (test/canonical.test.ts compares the two).
 */

const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function canonical(value: unknown, seen: Set<object>): string | undefined {
  if (typeof value === 'number') {
    if (Number.isNaN(value)) throw new Error('NaN is not allowed');
    if (!Number.isFinite(value)) throw new Error('Infinity is not allowed');
  }
  if (typeof value === 'string' && !wellFormed(value)) throw new Error('Lone surrogate is not allowed');
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (seen.has(value)) throw new Error('Circular reference detected');
  const withJson = value as { toJSON?: unknown };
  if (typeof withJson.toJSON === 'function') {
    seen.add(value);
    const out = canonical((withJson.toJSON as () => unknown).call(value), seen);
    seen.delete(value);
    return out;
  }
  seen.add(value);
  let out: string;
  if (Array.isArray(value)) {
    const parts: (string | undefined)[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      parts[i] = canonical(v === undefined || typeof v === 'symbol' ? null : v, seen);
    }
    out = `[${parts.join(',')}]`;
  } else {
    const o = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(o).sort()) {
      const v = o[key];
      if (v === undefined || typeof v === 'symbol') continue;
      parts.push(`${canonical(key, seen)}:${canonical(v, seen)}`);
    }
    out = `{${parts.join(',')}}`;
  }
  seen.delete(value);
  return out;
}

/** RFC 8785 canonical JSON text of a JSON value. Bigints must be converted to strings first. */
export function canonicalJson(value: unknown): string {
  const s = canonical(value, new Set());
  if (s === undefined) throw new Error('value cannot be canonicalized');
  return s;
}
