/**
 * Time helpers for the generator: instants are JS integers of microseconds since the epoch (UTC;
 * below 2^53 for every date of interest, and never money). Local wall times in an IANA zone come
 * from Intl.DateTimeFormat, independently of the product's luxon-based mapping, so that a
 * fixture checks the product's cutoff and `*_local` rules rather than repeating them.
 */

const MIN_US = 60_000_000;
const HOUR_US = 3_600_000_000;
/** Microseconds per day. */
export const DAY_US = 86_400_000_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Offsets per zone, keyed by minute since the epoch (numeric keys: this is the hot path at scale). */
const offsetCache = new Map<string, Map<number, number>>();
/** `YYYY-MM-DDTHH:MM` per minute since the epoch. */
const minuteText = new Map<number, string>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** UTC offset of `zone` at the instant `utcUs`, in microseconds (whole minutes; cached per minute). */
export function offsetUs(zone: string, utcUs: number): number {
  const minute = Math.floor(utcUs / MIN_US);
  let perZone = offsetCache.get(zone);
  if (!perZone) { perZone = new Map(); offsetCache.set(zone, perZone); }
  let off = perZone.get(minute);
  if (off === undefined) {
    const ms = minute * 60_000;
    const p: Record<string, number> = {};
    for (const part of formatter(zone).formatToParts(new Date(ms))) if (part.type !== 'literal') p[part.type] = Number(part.value);
    const wallMs = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
    off = (wallMs - ms) * 1000;
    if (perZone.size > 200_000) perZone.clear();
    perZone.set(minute, off);
  }
  return off;
}

/** Microseconds since the epoch of `YYYY-MM-DD` 00:00 UTC. */
export function dateUs(date: string): number {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(date);
  if (!m) throw new Error(`bad date ${date}`);
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const back = new Date(ms);
  if (back.getUTCFullYear() !== Number(m[1]) || back.getUTCMonth() !== Number(m[2]) - 1 || back.getUTCDate() !== Number(m[3])) throw new Error(`bad date ${date}`);
  return ms * 1000;
}

/** `YYYY-MM-DD` of a UTC-midnight instant plus `days`. */
export function dateText(dayStartUs: number, days = 0): string {
  return new Date((dayStartUs + days * DAY_US) / 1000).toISOString().slice(0, 10);
}

function wallText(wallUs: number, withFraction: boolean): string {
  const micros = ((wallUs % 1_000_000) + 1_000_000) % 1_000_000;
  const seconds = (wallUs - micros) / 1_000_000;
  const minute = Math.floor(seconds / 60);
  let prefix = minuteText.get(minute);
  if (prefix === undefined) {
    prefix = new Date(minute * 60_000).toISOString().slice(0, 16);
    if (minuteText.size > 200_000) minuteText.clear();
    minuteText.set(minute, prefix);
  }
  const sec = seconds - minute * 60;
  const base = `${prefix}:${sec < 10 ? '0' : ''}${sec}`;
  return withFraction || micros !== 0 ? `${base}.${String(micros).padStart(6, '0')}` : base;
}

/** ISO-8601 UTC text (`2026-11-02T09:30:00.123456Z`; no fraction when whole seconds). */
export function isoZ(utcUs: number): string {
  return `${wallText(utcUs, false)}Z`;
}

/** Local wall-clock text in `zone` without a zone designator (for `*_local` columns). */
export function localText(zone: string, utcUs: number): string {
  return wallText(utcUs + offsetUs(zone, utcUs), true);
}

/** The valid instants (0, 1 or 2, ascending) whose wall time in `zone` is `wallUs`. */
export function instantsOf(zone: string, wallUs: number): number[] {
  const offs = new Set<number>();
  for (const probe of [-26, -14, -6, 0, 6, 14, 26]) offs.add(offsetUs(zone, wallUs + probe * HOUR_US));
  const found = new Set<number>();
  for (const off of offs) if (offsetUs(zone, wallUs - off) === off) found.add(wallUs - off);
  return [...found].sort((a, b) => a - b);
}

/** True when the local wall time of `utcUs` in `zone` maps back to `utcUs` (CONTRACT §1: gap rejected, overlap → earlier). */
export function roundTrips(zone: string, utcUs: number): boolean {
  const off = offsetUs(zone, utcUs);
  if (offsetUs(zone, utcUs - 3 * HOUR_US) === off && offsetUs(zone, utcUs + 3 * HOUR_US) === off) return true;
  const found = instantsOf(zone, utcUs + off);
  return found.length > 0 && found[0] === utcUs;
}

/**
 * The UTC instant of a statement cutoff (CONTRACT §2): local `date` at `cutoff` (`HH:MM[:SS]`)
 * in `zone`; in a DST gap the first valid instant after it (the transition), in an overlap the
 * earlier instant.
 */
export function cutoffUs(zone: string, date: string, cutoff: string): number {
  const [h, mi, s] = cutoff.split(':').map(Number);
  const wall = dateUs(date) + ((h * 60 + mi) * 60 + (s ?? 0)) * 1_000_000;
  const found = instantsOf(zone, wall);
  if (found.length > 0) return found[0];
  // In a gap: find the transition by bisection between two instants on either side.
  let lo = wall - offsetUs(zone, wall + 12 * HOUR_US) - 1;
  let hi = wall - offsetUs(zone, wall - 12 * HOUR_US) + 1;
  if (lo > hi) [lo, hi] = [hi, lo];
  const before = offsetUs(zone, lo);
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetUs(zone, mid) === before) lo = mid;
    else hi = mid;
  }
  // Offsets change on whole minutes and hi lies within a millisecond after the change.
  return Math.floor(hi / MIN_US) * MIN_US;
}
