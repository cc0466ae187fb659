/**
 * Exact money conversion of pipeline/money.ts (CONTRACT §1): rounding modes by table (ties above
 * all), notional at each currency exponent against decimal.js at 100 significant digits as an
 * independent oracle, and major → minor units without rounding.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { ROUNDING_MODES, type RoundingMode } from '../pipeline/contract/money.js';
import { majorToMinor, notionalMinor, roundDiv } from '../pipeline/contract/money.js';
import { parseDecimal } from '../pipeline/contract/values.js';

const D = Decimal.clone({ precision: 100 });
const DECIMAL_MODE: Record<RoundingMode, Decimal.Rounding> = {
  HALF_EVEN: Decimal.ROUND_HALF_EVEN, HALF_UP: Decimal.ROUND_HALF_UP, HALF_DOWN: Decimal.ROUND_HALF_DOWN,
  UP: Decimal.ROUND_UP, DOWN: Decimal.ROUND_DOWN, CEIL: Decimal.ROUND_CEIL, FLOOR: Decimal.ROUND_FLOOR,
};
const scaled = (t: string) => { const p = parseDecimal(t); if (!p.ok) throw new Error(t); return p.value; };

describe('roundDiv: every mode on ties and non-ties, both signs', () => {
  // numerator/10 rounded to an integer: [value, HALF_EVEN, HALF_UP, HALF_DOWN, UP, DOWN, CEIL, FLOOR]
  const table: [number, ...number[]][] = [
    [25, 2, 3, 2, 3, 2, 3, 2],
    [35, 4, 4, 3, 4, 3, 4, 3],
    [5, 0, 1, 0, 1, 0, 1, 0],
    [15, 2, 2, 1, 2, 1, 2, 1],
    [-25, -2, -3, -2, -3, -2, -2, -3],
    [-35, -4, -4, -3, -4, -3, -3, -4],
    [-5, 0, -1, 0, -1, 0, 0, -1],
    [21, 2, 2, 2, 3, 2, 3, 2],
    [29, 3, 3, 3, 3, 2, 3, 2],
    [-21, -2, -2, -2, -3, -2, -2, -3],
    [-29, -3, -3, -3, -3, -2, -2, -3],
    [30, 3, 3, 3, 3, 3, 3, 3],
    [0, 0, 0, 0, 0, 0, 0, 0],
  ];
  const modes: RoundingMode[] = ['HALF_EVEN', 'HALF_UP', 'HALF_DOWN', 'UP', 'DOWN', 'CEIL', 'FLOOR'];
  it.each(table)('%i / 10', (n, ...expected) => {
    expect(modes.map((m) => Number(roundDiv(BigInt(n), 10n, m)))).toEqual(expected);
  });

  it('is exact far beyond 2^64 and refuses a non-positive divisor', () => {
    expect(roundDiv(10n ** 60n + 5n * 10n ** 20n, 10n ** 21n, 'HALF_EVEN')).toBe(10n ** 39n);
    expect(roundDiv(10n ** 60n + 15n * 10n ** 20n, 10n ** 21n, 'HALF_EVEN')).toBe(10n ** 39n + 2n);
    expect(() => roundDiv(1n, 0n, 'HALF_EVEN')).toThrow();
  });
});

describe('notionalMinor: fill_qty × price at the currency exponent', () => {
  const cases: [string, string, number, RoundingMode, bigint][] = [
    // JPY (exponent 0): ¥100.5 × 3 = ¥301.5 → 302 (even); × 5 = ¥502.5 → 502 (even), 503 half-up.
    ['3', '100.5', 0, 'HALF_EVEN', 302n],
    ['5', '100.5', 0, 'HALF_EVEN', 502n],
    ['5', '100.5', 0, 'HALF_UP', 503n],
    ['5', '100.5', 0, 'HALF_DOWN', 502n],
    ['1', '2.5', 0, 'HALF_EVEN', 2n],
    ['1', '3.5', 0, 'HALF_EVEN', 4n],
    // GBP (exponent 2): 7250 × 0.7102 = 5148.95 exactly → 514895; 1 × 0.125 = 12.5p → 12 (even), 13 half-up; 0.135 → 14.
    ['7250', '0.7102', 2, 'HALF_EVEN', 514895n],
    ['1', '0.125', 2, 'HALF_EVEN', 12n],
    ['1', '0.125', 2, 'HALF_UP', 13n],
    ['1', '0.135', 2, 'HALF_EVEN', 14n],
    ['3', '0.045', 2, 'HALF_EVEN', 14n],
    ['0.5', '0.01', 2, 'HALF_EVEN', 0n],
    ['1.5', '0.01', 2, 'HALF_EVEN', 2n],
    ['1.5', '0.01', 2, 'DOWN', 1n],
    // KWD (exponent 3), CLF (exponent 4).
    ['1', '0.0005', 3, 'HALF_EVEN', 0n],
    ['3', '0.0005', 3, 'HALF_EVEN', 2n],
    ['1', '0.00015', 4, 'HALF_EVEN', 2n],
    ['1', '0.00025', 4, 'HALF_EVEN', 2n],
    ['1', '0.00025', 4, 'CEIL', 3n],
    // Sub-minor-unit products and huge products stay exact.
    ['0.000000000000000001', '0.000000000000000001', 2, 'UP', 1n],
    ['0.000000000000000001', '0.000000000000000001', 2, 'HALF_EVEN', 0n],
    ['99999999999999999999', '1.5', 2, 'HALF_EVEN', 14999999999999999999850n],
  ];
  it.each(cases)('%s × %s at exponent %i, %s → %s', (q, p, exp, mode, expected) => {
    expect(notionalMinor(scaled(q), scaled(p), exp, mode)).toBe(expected);
  });

  it('agrees with decimal.js for any decimals, exponent 0–4 and mode', () => {
    const dec = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 18 })).map(([v, s]) => {
      const t = v.toString().padStart(s + 1, '0');
      return s ? `${t.slice(0, t.length - s)}.${t.slice(t.length - s)}` : t;
    });
    fc.assert(fc.property(dec, dec, fc.integer({ min: 0, max: 4 }), fc.constantFrom(...ROUNDING_MODES), fc.boolean(), (q, p, exp, mode, neg) => {
      const qs = neg ? `-${q}` : q;
      const expected = new D(qs).times(p).times(new D(10).pow(exp)).toDecimalPlaces(0, DECIMAL_MODE[mode]).toFixed(0);
      expect(notionalMinor(scaled(qs), scaled(p), exp, mode).toString()).toBe(expected === '-0' ? '0' : expected);
    }), { numRuns: 3000 });
  });
});

describe('majorToMinor: digits past the exponent only when zeros, never rounded', () => {
  it.each([
    ['18.150', 2, 1815n], ['18.15', 2, 1815n], ['18', 2, 1800n], ['18.1', 2, 1810n], ['-1.50', 2, -150n], ['0.001', 3, 1n],
    ['18', 0, 18n], ['18.000', 0, 18n], ['18.5', 0, undefined], ['18.155', 2, undefined], ['18.1501', 2, undefined],
    ['1e2', 2, undefined], ['+1.00', 2, undefined], ['1,00', 2, undefined], ['', 2, undefined],
  ] as [string, number, bigint | undefined][])('%s at exponent %i → %s', (text, exp, expected) => {
    expect(majorToMinor(text, exp)).toBe(expected);
  });
});
