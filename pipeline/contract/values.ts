/**
 * Value parsers for the text forms of CONTRACT §1. Each takes the exact text of one field and
 * returns its typed value or the rule it breaks. Nothing is trimmed, rounded or guessed, and no
 * money or quantity passes through a JS number: decimals become scaled `bigint`s.
 */

/** A parsed value or the rule it broke (`rule` is a stable code, `message` says why in words). */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly rule: string; readonly message: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (rule: string, message: string): Parsed<never> => ({ ok: false, rule, message });

/** Scale of every stored decimal: DECIMAL(38,18) (CONTRACT §1). */
export const DECIMAL_SCALE = 18;
/** Most digits before the point of a decimal (leading zeros aside). */
export const DECIMAL_INT_DIGITS = 20;
const DECIMAL_RE = /^-?[0-9]+(\.[0-9]+)?$/;
const INT_RE = /^-?[0-9]+$/;
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/**
 * Parses a decimal (`-?[0-9]+(\.[0-9]+)?`, at most 20 integer digits and 18 fractional digits)
 * into its value scaled by 10^18, exactly. `1.50` and `1.5` give the same bigint.
 */
export function parseDecimal(text: string): Parsed<bigint> {
  if (!DECIMAL_RE.test(text)) return bad('decimal_form', `'${clip(text)}' is not a decimal of the form -?[0-9]+(.[0-9]+)? (no exponent, separator, sign + or symbol)`);
  const neg = text.charCodeAt(0) === 45;
  const body = neg ? text.slice(1) : text;
  const dot = body.indexOf('.');
  const intPart = dot < 0 ? body : body.slice(0, dot);
  const frac = dot < 0 ? '' : body.slice(dot + 1);
  if (frac.length > DECIMAL_SCALE) return bad('decimal_scale', `'${clip(text)}' has ${frac.length} fractional digits; at most ${DECIMAL_SCALE} fit DECIMAL(38,18)`);
  const intDigits = intPart.replace(/^0+/, '');
  if (intDigits.length > DECIMAL_INT_DIGITS) return bad('decimal_precision', `'${clip(text)}' has ${intDigits.length} integer digits; at most ${DECIMAL_INT_DIGITS} fit DECIMAL(38,18)`);
  const scaled = BigInt((intDigits || '0') + frac.padEnd(DECIMAL_SCALE, '0'));
  return ok(neg ? -scaled : scaled);
}

/** Parses an amount in minor units (`-?[0-9]+`, at most 38 digits) into a bigint, exactly. */
export function parseAmountMinor(text: string): Parsed<bigint> {
  if (!INT_RE.test(text)) {
    const rule = /^-?[0-9]+\.[0-9]+$/.test(text) ? 'amount_fractional' : 'amount_form';
    return bad(rule, `'${clip(text)}' is not an integer amount in minor units (-?[0-9]+, never fractional)`);
  }
  const digits = text.replace(/^-/, '').replace(/^0+/, '');
  if (digits.length > 38) return bad('amount_precision', `'${clip(text)}' has ${digits.length} digits; at most 38`);
  return ok(BigInt(text));
}

/** Parses an int (`-?[0-9]+`) that must fit a signed 64-bit integer. */
export function parseInt64(text: string): Parsed<bigint> {
  if (!INT_RE.test(text)) {
    const rule = /^-?[0-9]+\.[0-9]+$/.test(text) ? 'int_fractional' : 'int_form';
    return bad(rule, `'${clip(text)}' is not an integer (-?[0-9]+${rule === 'int_fractional' ? ', never fractional' : ''})`);
  }
  const v = BigInt(text);
  if (v > INT64_MAX || v < INT64_MIN) return bad('int_range', `'${clip(text)}' does not fit a 64-bit integer`);
  return ok(v);
}

/** A wall time with a fraction of more than 6 digits and no zone (see parseWall). */
const FINE_WALL_RE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{7,}$/;
const TS_RE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?(Z|[+-][0-9]{2}:[0-9]{2})?$/;

/**
 * Days since 1970-01-01 of a proleptic Gregorian date in years 0001–9999, or undefined if it is
 * not a real date. (Date.UTC maps years 0–99 to 1900–1999, so the year is set separately.)
 */
export function epochDays(y: number, m: number, d: number): number | undefined {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return undefined;
  return Math.round(date.getTime() / 86_400_000);
}

// Extracts repeat a few calendar days millions of times: their day numbers are remembered.
const dayCache = new Map<string, number | undefined>();
function cachedEpochDays(key: string, ys: string, mos: string, ds: string): number | undefined {
  if (dayCache.has(key)) return dayCache.get(key);
  const days = epochDays(Number(ys), Number(mos), Number(ds));
  if (dayCache.size >= 4096) dayCache.clear();
  dayCache.set(key, days);
  return days;
}

/** Earliest and latest instants a timestamp may denote: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z. */
export const TIMESTAMP_MIN_MICROS = -62_135_596_800_000_000n;
export const TIMESTAMP_MAX_MICROS = 253_402_300_799_999_999n;

/** True when `micros` (since the epoch, UTC) lies in years 0001–9999 (what manifests and outputs can write). */
export function inTimestampRange(micros: bigint): boolean {
  return micros >= TIMESTAMP_MIN_MICROS && micros <= TIMESTAMP_MAX_MICROS;
}

/** Wall-clock fields of a timestamp text, with microseconds since the epoch as if the wall time were UTC. */
export interface WallTime {
  readonly wallMicros: bigint;
  readonly offset: string | undefined;
}

function parseWall(text: string, requireZone: boolean): Parsed<WallTime> {
  const m = TS_RE.exec(text);
  // A wall time finer than the microsecond and without zone breaks both rules; the zone is what
  // the column lacks for every value (a Parquet TIMESTAMP_NS not adjusted to UTC), so it is named.
  if (!m && requireZone && FINE_WALL_RE.test(text)) return bad('timestamp_without_zone', `'${clip(text)}' has no zone (Z or ±HH:MM); a timestamp without zone is rejected (and its fraction is finer than the microsecond)`);
  if (!m) return bad('timestamp_form', `'${clip(text)}' is not YYYY-MM-DDTHH:MM:SS[.ffffff]${requireZone ? '(Z|±HH:MM)' : ''}`);
  const [, ys, mos, ds, hs, mis, ss, fs, zone] = m;
  if (requireZone && zone === undefined) return bad('timestamp_without_zone', `'${clip(text)}' has no zone (Z or ±HH:MM); a timestamp without zone is rejected`);
  if (!requireZone && zone !== undefined) return bad('local_timestamp_with_zone', `'${clip(text)}' is a local time and must not carry a zone`);
  if (ys === '0000') return bad('timestamp_range', `'${clip(text)}' is before year 0001`);
  const days = cachedEpochDays(text.slice(0, 10), ys, mos, ds);
  if (days === undefined) return bad('timestamp_date', `'${clip(text)}' is not a real calendar date`);
  const h = Number(hs), mi = Number(mis), s = Number(ss);
  if (h > 23 || mi > 59 || s > 59) return bad('timestamp_time', `'${clip(text)}' has an impossible time of day`);
  const micros = BigInt(days) * 86_400_000_000n + BigInt(h * 3600 + mi * 60 + s) * 1_000_000n + BigInt((fs ?? '').padEnd(6, '0') || '0');
  return ok({ wallMicros: micros, offset: zone });
}

/** Parses a zoned timestamp (CONTRACT §1) into microseconds since the epoch, UTC. */
export function parseTimestamp(text: string): Parsed<bigint> {
  const w = parseWall(text, true);
  if (!w.ok) return w;
  const zone = w.value.offset!;
  let utc = w.value.wallMicros;
  if (zone !== 'Z') {
    const sign = zone[0] === '-' ? -1n : 1n;
    const oh = Number(zone.slice(1, 3)), om = Number(zone.slice(4, 6));
    // ISO 8601 / RFC 3339 offsets span −18:00 … +18:00 inclusive: +18:01 is as impossible as +19:00.
    if (om > 59 || oh * 60 + om > 18 * 60) return bad('timestamp_offset', `'${clip(text)}' has an impossible UTC offset (beyond ±18:00, or minutes over 59)`);
    utc -= sign * BigInt(oh * 3600 + om * 60) * 1_000_000n;
  }
  if (!inTimestampRange(utc)) return bad('timestamp_range', `'${clip(text)}' is outside 0001-01-01T00:00:00Z–9999-12-31T23:59:59.999999Z`);
  return ok(utc);
}

/** Parses a local timestamp (no zone) into wall-clock microseconds "as if UTC". */
export function parseLocalTimestamp(text: string): Parsed<bigint> {
  const w = parseWall(text, false);
  return w.ok ? ok(w.value.wallMicros) : w;
}

/** Parses a date `YYYY-MM-DD` into days since 1970-01-01. */
export function parseDate(text: string): Parsed<number> {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(text);
  if (!m) return bad('date_form', `'${clip(text)}' is not a date YYYY-MM-DD`);
  if (m[1] === '0000') return bad('date_range', `'${clip(text)}' is before year 0001`);
  const days = epochDays(Number(m[1]), Number(m[2]), Number(m[3]));
  return days === undefined ? bad('date_calendar', `'${clip(text)}' is not a real calendar date`) : ok(days);
}

/** Parses a cutoff `HH:MM` or `HH:MM:SS` (00:00:00–23:59:59) into seconds after midnight. */
export function parseCutoff(text: string): Parsed<number> {
  const m = /^([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?$/.exec(text);
  if (!m) return bad('cutoff_form', `'${clip(text)}' is not a cutoff HH:MM or HH:MM:SS`);
  const h = Number(m[1]), mi = Number(m[2]), s = Number(m[3] ?? '0');
  if (h > 23 || mi > 59 || s > 59) return bad('cutoff_range', `'${clip(text)}' is outside 00:00:00–23:59:59`);
  return ok(h * 3600 + mi * 60 + s);
}

/** Parses a bool (`true` / `false`, lower case). */
export function parseBool(text: string): Parsed<boolean> {
  if (text === 'true') return ok(true);
  if (text === 'false') return ok(false);
  return bad('bool_form', `'${clip(text)}' is not true or false`);
}

// Control characters (including NUL) and the id separator are never part of an id.
const ID_BAD = /[|\u0000-\u001f\u007f]/;

/** Checks an id: non-empty, no `|`, no control characters, no leading/trailing white space. */
export function parseId(text: string): Parsed<string> {
  if (ID_BAD.test(text)) return bad('id_character', `id '${clip(text)}' holds '|' or a control character`);
  if (/^\s|\s$/.test(text)) return bad('id_whitespace', `id '${clip(text)}' has leading or trailing white space (rejected, not trimmed)`);
  return ok(text);
}

/** Checks free text (reasons, event types): no NUL; kept as written. */
export function parseText(text: string): Parsed<string> {
  if (text.includes('\u0000')) return bad('text_nul', 'text holds a NUL byte');
  return ok(text);
}

/** Shortens a raw value for messages; the full raw value is kept in the quarantine entry. */
export function clip(text: string): string {
  const s = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  return s.replace(/[\u0000-\u001f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Formats a scaled bigint (scale 18) as the shortest exact decimal text: 1500000000000000000n → "1.5". */
export function formatScaled(v: bigint, scale = DECIMAL_SCALE): string {
  const neg = v < 0n;
  const s = (neg ? -v : v).toString().padStart(scale + 1, '0');
  const int = s.slice(0, s.length - scale);
  const frac = s.slice(s.length - scale).replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/** Formats microseconds since the epoch as ISO-8601 UTC (`2026-11-02T09:30:00.123456Z`; no fraction when whole). */
export function formatMicros(micros: bigint): string {
  const rem = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  const secs = (micros - rem) / 1_000_000n;
  const iso = new Date(Number(secs) * 1000).toISOString().slice(0, 19);
  return rem === 0n ? `${iso}Z` : `${iso}.${rem.toString().padStart(6, '0')}Z`;
}
