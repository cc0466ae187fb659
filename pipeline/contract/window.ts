/**
 * Run windows (CONTRACT §3): one UTC half-open interval [start, end), start ≤ t < end. `--date D`
 * is [D 00:00Z, D+1 00:00Z); `--window START/END` takes two zoned timestamps of CONTRACT §1.
 */
import { ConfigError } from '../core/errors.js';
import { epochDays, formatMicros, parseTimestamp } from './values.js';

/** A run window in microseconds since the epoch, UTC, with its ISO texts. */
export interface Window {
  readonly startMicros: bigint;
  readonly endMicros: bigint;
  readonly start: string;
  readonly end: string;
}

const DAY_US = 86_400_000_000n;

// Windows stay within years 0001–9999 so that every bound can be written as ISO text and in Parquet.
const MIN_US = -62135596800000000n; // 0001-01-01T00:00:00Z
const MAX_US = 253402300800000000n; // 10000-01-01T00:00:00Z (exclusive end allowed up to 9999-12-31T…)

/** Builds a window; throws ConfigError unless start < end, both within years 0001–9999. */
export function makeWindow(startMicros: bigint, endMicros: bigint): Window {
  if (startMicros < MIN_US || endMicros >= MAX_US) throw new ConfigError('a window must lie within the years 0001–9999');
  if (!(startMicros < endMicros)) throw new ConfigError(`window start ${formatMicros(startMicros)} must be before its end ${formatMicros(endMicros)}`);
  return { startMicros, endMicros, start: formatMicros(startMicros), end: formatMicros(endMicros) };
}

/** `--date YYYY-MM-DD` → the UTC day. Throws ConfigError on a bad date. */
export function windowForDate(date: string): Window {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(date);
  const days = m ? epochDays(Number(m[1]), Number(m[2]), Number(m[3])) : undefined;
  if (days === undefined) throw new ConfigError(`--date '${date}' is not a calendar date YYYY-MM-DD`);
  const start = BigInt(days) * DAY_US;
  return makeWindow(start, start + DAY_US);
}

/** `--window START/END` (zoned timestamps) → window. Throws ConfigError on bad input. */
export function windowForRange(range: string): Window {
  const parts = range.split('/');
  if (parts.length !== 2) throw new ConfigError(`--window '${range}' must be START/END`);
  const [a, b] = parts.map((p) => parseTimestamp(p));
  if (!a.ok) throw new ConfigError(`--window start: ${a.message}`);
  if (!b.ok) throw new ConfigError(`--window end: ${b.message}`);
  return makeWindow(a.value, b.value);
}

/** The calendar date (UTC) of the window start, for partition values: `2026-11-02`. */
export function windowDate(w: Window): string {
  return w.start.slice(0, 10);
}
