/**
 * Exact money conversion (CONTRACT §1): price × quantity → minor units by integer arithmetic on
 * scaled bigints, rounded once at the currency exponent with the configured mode. No float, no
 * decimal.js precision limit: DECIMAL(38,18) × DECIMAL(38,18) is an exact bigint of scale 36.
 */
import { DECIMAL_SCALE } from './values.js';
import type { FileLimits } from './limits.js';

/** Rounding modes for price × quantity → minor units; names as in decimal.js. */
export const ROUNDING_MODES = ['HALF_EVEN', 'HALF_UP', 'HALF_DOWN', 'UP', 'DOWN', 'CEIL', 'FLOOR'] as const;
export type RoundingMode = (typeof ROUNDING_MODES)[number];

/**
 * The configuration that changes how a record is typed on load (CONTRACT §1 money conversion):
 * the notional's rounding mode; and how much of a file is read (limits.ts; defaults when absent).
 */
export interface LoadRules {
  readonly rounding_mode: RoundingMode;
  readonly limits?: Partial<FileLimits>;
}

/** Divides n by d (d > 0) and rounds the quotient with `mode`. Exact for any size. */
export function roundDiv(n: bigint, d: bigint, mode: RoundingMode): bigint {
  if (d <= 0n) throw new Error('roundDiv: divisor must be positive');
  const q = n / d; // truncates toward zero
  const r = n % d;
  if (r === 0n) return q;
  const neg = n < 0n;
  const twice = (r < 0n ? -r : r) * 2n;
  const awayFromZero = neg ? q - 1n : q + 1n;
  switch (mode) {
    case 'DOWN': return q;
    case 'UP': return awayFromZero;
    case 'CEIL': return neg ? q : q + 1n;
    case 'FLOOR': return neg ? q - 1n : q;
    case 'HALF_UP': return twice >= d ? awayFromZero : q;
    case 'HALF_DOWN': return twice > d ? awayFromZero : q;
    case 'HALF_EVEN': {
      if (twice > d) return awayFromZero;
      if (twice < d) return q;
      return q % 2n === 0n ? q : awayFromZero;
    }
  }
}

/**
 * Notional in minor units of fill_qty × price, both scaled by 10^18 (DECIMAL(38,18) values),
 * rounded at the currency exponent (0–4) with `mode`. Example: 7250 × 0.7102 GBP (exp 2) → 514895.
 */
export function notionalMinor(qtyScaled: bigint, priceScaled: bigint, exponent: number, mode: RoundingMode): bigint {
  const product = qtyScaled * priceScaled; // scale 36
  const divisor = 10n ** BigInt(2 * DECIMAL_SCALE - exponent);
  return roundDiv(product, divisor, mode);
}

/**
 * Converts a major-unit amount text (`18.150`) to minor units exactly (CONTRACT §1): digits past
 * the exponent are allowed only when they are zeros; otherwise undefined (reject, never round).
 */
export function majorToMinor(text: string, exponent: number): bigint | undefined {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?$/.exec(text);
  if (!m) return undefined;
  const frac = m[3] ?? '';
  if (frac.length > exponent && /[^0]/.test(frac.slice(exponent))) return undefined;
  const v = BigInt(m[2] + frac.slice(0, exponent).padEnd(exponent, '0'));
  return m[1] ? -v : v;
}
