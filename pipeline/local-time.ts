/**
 * Local wall-clock time → UTC instants in an IANA zone (CONTRACT §1 and §2).
 *
 * Two rules, deliberately different from luxon's default (which moves a nonexistent time forward
 * by the gap's length and may pick the later offset in an overlap):
 * - `*_local` record times: a time in a DST gap is rejected; one in an overlap takes the earlier instant.
 * - statement cutoffs: a time in a gap moves forward to the first valid instant (the transition);
 *   one in an overlap takes the earlier instant.
 * Offsets come from luxon's IANAZone (backed by the ICU data in Node); all arithmetic is in
 * integer microseconds so `*_local` values keep their microseconds.
 */
import { IANAZone } from 'luxon';

const MICROS_PER_MINUTE = 60_000_000n;
const zoneCache = new Map<string, IANAZone | null>();

/** The zone, or null when the name is not a valid IANA zone. */
export function ianaZone(name: string): IANAZone | null {
  let z = zoneCache.get(name);
  if (z === undefined) {
    z = IANAZone.isValidZone(name) && name.includes('/') ? IANAZone.create(name) : name === 'UTC' ? IANAZone.create('UTC') : null;
    zoneCache.set(name, z);
  }
  return z;
}

/** Offset of `zone` at UTC instant `utcMicros`, in microseconds. */
function offsetAt(zone: IANAZone, utcMicros: bigint): bigint {
  const ms = Number(utcMicros / 1000n);
  return BigInt(zone.offset(ms)) * MICROS_PER_MINUTE;
}

/** Outcome of mapping one wall time: the valid instants (0, 1 or 2) in ascending order. */
export function instantsFor(zone: IANAZone, wallMicros: bigint): bigint[] {
  const day = 86_400_000_000n;
  const offsets = new Set<bigint>();
  for (const probe of [-day, -day / 2n, 0n, day / 2n, day]) offsets.add(offsetAt(zone, wallMicros + probe));
  const found = new Set<bigint>();
  for (const off of offsets) {
    const t = wallMicros - off;
    if (offsetAt(zone, t) === off) found.add(t);
  }
  return [...found].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Result of a `*_local` mapping: the UTC instant, or `gap` when the local time does not exist. */
export type LocalMapping = { readonly ok: true; readonly utcMicros: bigint; readonly ambiguous: boolean } | { readonly ok: false; readonly reason: 'gap' };

/** Maps a record's local time (CONTRACT §1): gap → rejected; overlap → earlier instant. */
export function mapRecordLocalTime(zone: IANAZone, wallMicros: bigint): LocalMapping {
  const found = instantsFor(zone, wallMicros);
  if (found.length === 0) return { ok: false, reason: 'gap' };
  return { ok: true, utcMicros: found[0], ambiguous: found.length > 1 };
}

/** How a cutoff was mapped, for the manifest (CONTRACT §2). */
export type CutoffRule = 'unique' | 'gap_moved_to_transition' | 'overlap_earlier_instant';

/**
 * Maps a cutoff wall time (CONTRACT §2): unique → that instant; gap → the transition instant
 * (the first valid instant after the wall time); overlap → the earlier instant. Total: every
 * wall time in every zone gets exactly one instant.
 */
export function mapCutoff(zone: IANAZone, wallMicros: bigint): { utcMicros: bigint; rule: CutoffRule } {
  const found = instantsFor(zone, wallMicros);
  if (found.length === 1) return { utcMicros: found[0], rule: 'unique' };
  if (found.length > 1) return { utcMicros: found[0], rule: 'overlap_earlier_instant' };
  // In a gap: the offset before the transition is smaller than after it (clocks jump forward).
  // wall − offset_after is before the transition and wall − offset_before after it; bisect the
  // instant where the offset changes, to the microsecond.
  const hour = 3_600_000_000n;
  let lo = wallMicros - offsetAt(zone, wallMicros + 12n * hour) - 1n; // ≤ transition
  let hi = wallMicros - offsetAt(zone, wallMicros - 12n * hour) + 1n; // > transition
  if (lo > hi) [lo, hi] = [hi, lo];
  const before = offsetAt(zone, lo);
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (offsetAt(zone, mid) === before) lo = mid;
    else hi = mid;
  }
  // Offsets change at whole milliseconds at least; hi is the first instant with the new offset.
  return { utcMicros: hi, rule: 'gap_moved_to_transition' };
}
