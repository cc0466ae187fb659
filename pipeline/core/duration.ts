/**
 * Ages and durations as people read them on a terminal (`21h39m`, `3d04h`, `2m05s`, `45s`), from
 * exact microseconds. Only for display: `--json`, manifests and outputs keep exact seconds.
 */

/** A short human form of `us` microseconds: the two largest units, the second zero-padded; under a minute whole seconds (`0s` below one). */
export function humanDuration(us: bigint): string {
  const neg = us < 0n;
  const s = (neg ? -us : us) / 1_000_000n;
  const d = s / 86_400n, h = (s % 86_400n) / 3_600n, m = (s % 3_600n) / 60n, sec = s % 60n;
  const two = (n: bigint) => n.toString().padStart(2, '0');
  const text = d > 0n ? `${d}d${two(h)}h` : h > 0n ? `${h}h${two(m)}m` : m > 0n ? `${m}m${two(sec)}s` : `${sec}s`;
  return neg ? `-${text}` : text;
}

/** `humanDuration` of whole seconds (an SLA). */
export function humanSeconds(seconds: number | bigint): string {
  return humanDuration(BigInt(seconds) * 1_000_000n);
}

/** Exact decimal seconds text (`"50699.999999"`, `"-3"`) as microseconds; null when it is not such text. */
export function secondsTextToMicros(text: string | null | undefined): bigint | null {
  const m = text ? /^(-?)([0-9]+)(?:\.([0-9]{1,6}))?$/.exec(text) : null;
  if (!m) return null;
  const us = BigInt(m[2]) * 1_000_000n + BigInt((m[3] ?? '').padEnd(6, '0'));
  return m[1] ? -us : us;
}
