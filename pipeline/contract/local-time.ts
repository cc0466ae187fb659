/**
 * Local wall-clock time → UTC instants in an IANA zone (CONTRACT §1 and §2).
 *
 * Two rules, deliberately different from luxon's default (which moves a nonexistent time forward
 * by the gap's length and may pick the later offset in an overlap):
 * - `*_local` record times: a time in a DST gap is rejected; one in an overlap takes the earlier instant.
 * - statement cutoffs: a time in a gap moves forward to the first valid instant (the transition);
 *   one in an overlap takes the earlier instant.
 * Offsets come from luxon's IANAZone (backed by the ICU data in Node), turned into whole
 * seconds; all arithmetic is in integer microseconds so `*_local` values keep their microseconds.
 * A wall time is carried as microseconds since 1970-01-01T00:00 *local* (the wall reading taken
 * as if it were UTC). Proven against an independent Intl oracle by test/local-time.property.test.ts;
 * the rules and the manifest record are described in docs/local-time.md.
 */
import { readFileSync } from 'node:fs';
import { IANAZone } from 'luxon';
import { repoPath } from '../core/paths.js';

const MICROS_PER_SECOND = 1_000_000n;
const MICROS_PER_DAY = 86_400n * MICROS_PER_SECOND;
const zoneCache = new Map<string, IANAZone | null>();

let zoneNames: ReadonlySet<string> | undefined;

/** The zone names accepted, exactly as spelled (pipeline/reference/tz-names.txt, read once). */
export function acceptedZoneNames(): ReadonlySet<string> {
  zoneNames ??= new Set(readFileSync(repoPath('pipeline/reference/tz-names.txt'), 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#')));
  return zoneNames;
}

/**
 * The zone, or null when the name is not an IANA time zone as written (CONTRACT §1). A name is
 * accepted exactly as pipeline/reference/tz-names.txt spells it: an Area/Location name of the
 * IANA database (`Europe/London`, links such as `US/Eastern` and `Asia/Calcutta`, `Etc/GMT+5`) or
 * `UTC`. Names are compared byte for byte, like ids: ICU matches them without regard to case, so
 * `america/new_york` would resolve, and an auditor reading it back would not find it in the
 * database. Abbreviations and POSIX-style names (`EST`, `GMT`, `EST5EDT`) are refused: their
 * meaning has changed between tz releases.
 */
export function ianaZone(name: string): IANAZone | null {
  let z = zoneCache.get(name);
  if (z === undefined) {
    z = acceptedZoneNames().has(name) && IANAZone.isValidZone(name) ? IANAZone.create(name) : null;
    zoneCache.set(name, z);
  }
  return z;
}

/** ⌊a / b⌋ for b > 0 (BigInt division truncates towards zero, which is wrong before 1970). */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

const MS_PER_HOUR = 3_600_000;
const HOUR_CACHE_LIMIT = 1 << 16;
/** Per zone: hour index (UTC) → the offset in minutes when it is the same all hour, else NaN. */
const hourCache = new Map<string, Map<number, number>>();

/**
 * Offset of `zone` at UTC instant `utcMicros`, in microseconds. luxon answers in minutes, which
 * are fractional for historic local mean time (New York before 1883 is −4:56:02); ICU offsets
 * are whole seconds, so the minutes are turned back into exact seconds.
 *
 * A luxon lookup costs about 6 µs, and loading a venue or receipt file asks several per row, so
 * offsets are cached per UTC hour: an hour whose first and last millisecond have the same offset
 * is taken to have it throughout (no zone in the tz database changes offset twice within an
 * hour); an hour with a transition in it is always looked up exactly.
 */
function offsetAt(zone: IANAZone, utcMicros: bigint): bigint {
  const ms = Number(floorDiv(utcMicros, 1000n));
  const hour = Math.floor(ms / MS_PER_HOUR);
  let byHour = hourCache.get(zone.name);
  if (!byHour || byHour.size > HOUR_CACHE_LIMIT) hourCache.set(zone.name, (byHour = new Map()));
  let minutes = byHour.get(hour);
  if (minutes === undefined) {
    const first = zone.offset(hour * MS_PER_HOUR), last = zone.offset((hour + 1) * MS_PER_HOUR - 1);
    minutes = first === last ? first : Number.NaN;
    byHour.set(hour, minutes);
  }
  if (Number.isNaN(minutes)) minutes = zone.offset(ms);
  if (!Number.isFinite(minutes)) throw new RangeError(`no UTC offset for ${zone.name} at ${utcMicros} µs`);
  return BigInt(Math.round(minutes * 60)) * MICROS_PER_SECOND;
}

/** The wall clock of `zone` at UTC instant `utcMicros` (a wall time is µs since 1970-01-01T00:00 local). */
function wallAt(zone: IANAZone, utcMicros: bigint): bigint {
  return utcMicros + offsetAt(zone, utcMicros);
}

/**
 * The offsets in force around a wall time: a day before and a day after it, read as UTC. Every
 * instant that can show `wallMicros` lies within 14 h of it (offsets are within −12 h..+14 h),
 * and no zone changes offset twice within two days, so these are all the offsets that matter
 * (the same assumption as Temporal's GetNamedTimeZoneEpochNanoseconds).
 */
function nearbyOffsets(zone: IANAZone, wallMicros: bigint): bigint[] {
  const before = offsetAt(zone, wallMicros - MICROS_PER_DAY), after = offsetAt(zone, wallMicros + MICROS_PER_DAY);
  return before === after ? [before] : [before, after];
}

/**
 * The UTC instants (0, 1 or 2, ascending, µs) at which `zone` shows the wall time `wallMicros`.
 * 0 means the wall time falls in a gap (clocks jumped over it), 2 an overlap (clocks fell back).
 */
export function instantsFor(zone: IANAZone, wallMicros: bigint): bigint[] {
  const found = new Set<bigint>();
  for (const off of nearbyOffsets(zone, wallMicros)) {
    const t = wallMicros - off;
    if (offsetAt(zone, t) === off) found.add(t);
  }
  return [...found].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Result of a `*_local` mapping: the UTC instant, or `gap` when the local time does not exist. */
export type LocalMapping = { readonly ok: true; readonly utcMicros: bigint; readonly ambiguous: boolean } | { readonly ok: false; readonly reason: 'gap' };

/**
 * Maps a record's local time (CONTRACT §1): gap → `{ ok: false, reason: 'gap' }` (the loader
 * quarantines the record); overlap → the earlier instant, flagged `ambiguous`. Never throws for
 * a zone from `ianaZone`.
 */
export function mapRecordLocalTime(zone: IANAZone, wallMicros: bigint): LocalMapping {
  const found = instantsFor(zone, wallMicros);
  if (found.length === 0) return { ok: false, reason: 'gap' };
  return { ok: true, utcMicros: found[0], ambiguous: found.length > 1 };
}

/** How a cutoff was mapped, for the manifest (CONTRACT §2). */
export type CutoffRule = 'unique' | 'gap_moved_to_transition' | 'overlap_earlier_instant';

/**
 * Maps a cutoff wall time (CONTRACT §2): unique → that instant; gap → the transition instant
 * (the first instant whose wall clock is at or past the cutoff); overlap → the earlier instant.
 * Equivalently: the earliest instant whose wall clock reads at or after the cutoff. Total and
 * monotone: every wall time in every zone gets exactly one instant, and a later wall time never
 * gets an earlier instant, so consecutive business days tile UTC. `rule` names the case for the
 * manifest's `cutoff_mappings`.
 */
export function mapCutoff(zone: IANAZone, wallMicros: bigint): { utcMicros: bigint; rule: CutoffRule } {
  const found = instantsFor(zone, wallMicros);
  if (found.length === 1) return { utcMicros: found[0], rule: 'unique' };
  if (found.length > 1) return { utcMicros: found[0], rule: 'overlap_earlier_instant' };
  // In a gap: the transition is the first instant whose wall clock is at or past the wall time.
  // Every instant before wall − max(offset) shows an earlier wall time and wall − min(offset)
  // shows a later one; between them the wall clock jumps once, so bisecting on "shows ≥ wall"
  // finds the transition to the microsecond.
  const offsets = nearbyOffsets(zone, wallMicros);
  let lo = wallMicros - offsets.reduce((a, b) => (a > b ? a : b)) - 1n;
  let hi = wallMicros - offsets.reduce((a, b) => (a < b ? a : b));
  if (!(wallAt(zone, lo) < wallMicros && wallAt(zone, hi) >= wallMicros)) {
    throw new RangeError(`cannot bracket the transition after ${wallMicros} µs in ${zone.name}`);
  }
  while (hi - lo > 1n) {
    const mid = lo + (hi - lo) / 2n;
    if (wallAt(zone, mid) >= wallMicros) hi = mid;
    else lo = mid;
  }
  return { utcMicros: hi, rule: 'gap_moved_to_transition' };
}
