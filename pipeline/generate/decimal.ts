/**
 * Exact decimal helpers for the generator. Quantities and prices are bigints scaled by a power of
 * ten chosen per instrument; money is bigint minor units. Written independently of the product's
 * money code (pipeline/money.ts) on purpose: the generator is the independent model the product's
 * answers are checked against, so a rounding bug in one does not hide in the other.
 */

/** Text of `v / 10^scale`, exact, with at least `minFrac` fractional digits (trailing zeros beyond it are dropped). */
export function decText(v: bigint, scale: number, minFrac = 0): string {
  const neg = v < 0n;
  const abs = (neg ? -v : v).toString().padStart(scale + 1, '0');
  const int = abs.slice(0, abs.length - scale);
  let frac = scale > 0 ? abs.slice(abs.length - scale) : '';
  frac = frac.replace(/0+$/, '');
  if (frac.length < minFrac) frac = frac.padEnd(minFrac, '0');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/** Rounds n / 10^k to an integer, half to even (banker's rounding); k ≥ 0. */
export function divPow10HalfEven(n: bigint, k: number): bigint {
  if (k === 0) return n;
  const d = 10n ** BigInt(k);
  const neg = n < 0n;
  const a = neg ? -n : n;
  let q = a / d;
  const r2 = (a % d) * 2n;
  if (r2 > d || (r2 === d && q % 2n === 1n)) q += 1n;
  return neg ? -q : q;
}

/** Rounds n / 10^k half away from zero (the rounding a faulty ledger uses in one injected fault). */
export function divPow10HalfUp(n: bigint, k: number): bigint {
  if (k === 0) return n;
  const d = 10n ** BigInt(k);
  const neg = n < 0n;
  const a = neg ? -n : n;
  const q = (a * 2n + d) / (d * 2n);
  return neg ? -q : q;
}

/**
 * Notional in minor units of qty × price (CONTRACT §1): exact product, then one rounding at the
 * currency exponent, HALF_EVEN unless `halfUp`. `qty` has scale `qtyScale`, `price` `priceScale`.
 */
export function notionalMinor(qty: bigint, qtyScale: number, price: bigint, priceScale: number, exponent: number, halfUp = false): bigint {
  const product = qty * price;
  const scale = qtyScale + priceScale;
  if (scale <= exponent) return product * 10n ** BigInt(exponent - scale);
  return halfUp ? divPow10HalfUp(product, scale - exponent) : divPow10HalfEven(product, scale - exponent);
}
