import { readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../pipeline/core/canonical.js';

/** What the `canonicalize` package (4.0.0) gives for `v`, or the message it throws. */
const reference = (v: unknown): string => {
  try { return String(canonicalize(v)); } catch (e) { return `throws ${(e as Error).message}`; }
};
const ours = (v: unknown): string => {
  try { return canonicalJson(v); } catch (e) { return `throws ${(e as Error).message}`; }
};

describe('canonicalJson is the canonicalize package byte for byte (RFC 8785)', () => {
  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;
  const cases: [string, unknown][] = [
    ['scalars', [null, true, false, 0, -0, 1e21, 1e-7, 0.1 + 0.2, -12.5, 2 ** 53, '']],
    ['strings that need escaping', ['"\\/\b\f\n\r\t', '\u0000\u001f\u007f', 'é €😀', '\u2028\u2029']],
    ['key order by UTF-16 code units, nested', { b: [1, { z: 1, a: [] }], a: { '€': 1, 'é': 2, A: 3, '😀': 4, '': 5 } }],
    ['undefined and symbols left out, as null in arrays', { a: undefined, b: Symbol('x'), c: [undefined, Symbol('y'), 1] }],
    ['toJSON honoured', { d: new Date(Date.UTC(2026, 10, 2, 0, 0, 0, 123)), j: { toJSON: () => ({ y: 2, x: 1 }) } }],
    ['a string holding canonical JSON', { payload: '{"a":"b\\"c","n":[1,2]}', signatures: [] }],
    ['NaN', { n: Number.NaN }],
    ['Infinity', [Number.NEGATIVE_INFINITY]],
    ['a lone high surrogate', { s: 'a\uD800' }],
    ['a lone low surrogate as a key', { ['\uDC00x']: 1 }],
    ['a circular reference', circular],
  ];
  for (const [name, value] of cases) {
    it(name, () => expect(ours(value)).toBe(reference(value)));
  }

  it('the example manifest of the schema tests', () => {
    const doc = JSON.parse(readFileSync(new URL('./fixtures/manifest-v1-example.json', import.meta.url), 'utf8')) as unknown;
    expect(canonicalJson(doc)).toBe(canonicalize(doc));
  });

  it('top-level undefined cannot be canonicalized', () => {
    expect(() => canonicalJson(undefined)).toThrow('value cannot be canonicalized');
  });
});
