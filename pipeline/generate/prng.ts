/**
 * A small seeded pseudo-random generator for `reckon generate` (sfc32, seeded from a text seed
 * through cyrb128). The same seed gives the same sequence on every machine and Node version:
 * only 32-bit integer arithmetic is used. It draws shapes (which account, how many fills, how
 * many seconds later), never money arithmetic: amounts built from its integers are bigints.
 */

/** cyrb128: four 32-bit words from a text seed. */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4; h2 ^= h1; h3 ^= h1; h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** Deterministic generator of integers and choices. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed` is any text; `stream` separates independent sequences drawn from one seed. */
  constructor(seed: string, stream = '') {
    [this.a, this.b, this.c, this.d] = cyrb128(`${seed}\u0000${stream}`);
    for (let i = 0; i < 12; i++) this.next();
  }

  /** The next unsigned 32-bit integer. */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** An integer in [lo, hi] (inclusive); the span must be below 2^32. */
  int(lo: number, hi: number): number {
    const span = hi - lo + 1;
    if (!(span >= 1) || span > 0x1_0000_0000) throw new Error(`Prng.int: bad range [${lo}, ${hi}]`);
    // Rejection sampling keeps the draw exactly uniform.
    const limit = 0x1_0000_0000 - (0x1_0000_0000 % span);
    for (;;) {
      const x = this.next();
      if (x < limit) return lo + (x % span);
    }
  }

  /** A wide integer in [lo, hi] for microsecond offsets (span up to 2^52). */
  wide(lo: number, hi: number): number {
    const span = hi - lo + 1;
    if (span <= 0x1_0000_0000) return this.int(lo, hi);
    const x = this.next() * 0x1_0000_0000 + this.next();
    return lo + (x % span);
  }

  /** True with probability `percent`/100 (integer percent; exact). */
  chance(percent: number): boolean {
    return this.int(0, 99) < percent;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }

  /** One element by integer weights. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((s, [, w]) => s + w, 0);
    let x = this.int(0, total - 1);
    for (const [v, w] of items) {
      if (x < w) return v;
      x -= w;
    }
    return items[items.length - 1][0];
  }
}
