/**
 * Validates one raw record of a dataset field by field against `datasets.ts` (CONTRACT §2) into
 * exact typed cells (scaled bigint, microseconds, text), own columns then derived ones, or the
 * first rule it breaks. The JavaScript reader's records go through it (file-load.ts); tableColumns
 * gives the table those cells fill.
 */
import type { LoadRules } from '../contract/money.js';
import { currencyTable } from '../contract/currency.js';
import { SQL_TYPE, derivedColumns, type ColumnSpec, type DatasetSpec } from '../contract/datasets.js';
import { ianaZone, mapCutoff, mapRecordLocalTime } from '../contract/local-time.js';
import { notionalMinor } from '../contract/money.js';
import {
  clip, formatMicros, inTimestampRange, parseAmountMinor, parseBool, parseCutoff, parseDate, parseDecimal, parseId, parseInt64,
  parseLocalTimestamp, parseText, parseTimestamp, type Parsed,
} from '../contract/values.js';
import type { Cell } from './chunks.js';
import type { CutoffMapping } from './load-types.js';

/** 10^38: the first magnitude DECIMAL(38,0) cannot hold. */
const MAX_DECIMAL38 = 10n ** 38n;

/** Column names and DuckDB types of a dataset's table, own columns then derived ones. */
export function tableColumns(spec: DatasetSpec): { name: string; type: string }[] {
  return [...spec.columns.map((c) => ({ name: c.name, type: SQL_TYPE[c.kind] })), ...derivedColumns(spec)];
}

/** What typeRecord reads besides the record: the dataset, the load rules, and the cutoff mappings made so far (shared by the run). */
export interface RowContext {
  readonly spec: DatasetSpec;
  readonly config: LoadRules;
  readonly cutoffs: Map<string, CutoffMapping & { micros: bigint }>;
  /** The cutoff mappings the current file used, by key (kept with its check in the delivery cache). */
  readonly touched: Map<string, CutoffMapping & { micros: bigint }>;
}

/** Validates one raw record into typed cells (own columns then derived), or the first rule broken. */
export function typeRecord(ctx: RowContext, fields: ReadonlyMap<string, string | null>): { cells: Cell[] } | { column: string; rule: string; message: string } {
  const { spec } = ctx;
  const cells: Cell[] = [];
  const byName = new Map<string, Cell>();
  const currencies = currencyTable().exponents;
  for (const col of spec.columns) {
    const text = fields.get(col.name) ?? null;
    if (text === null) {
      if (col.optional) { cells.push(null); byName.set(col.name, null); continue; }
      return { column: col.name, rule: 'required_empty', message: `required column ${col.name} is empty` };
    }
    const p = typeValue(col, text, fields);
    if (!p.ok) {
      // A local time cannot be judged without its zone: a bad zone is reported on the zone column.
      const column = p.rule === 'timezone_unknown' && col.zoneColumn ? col.zoneColumn : col.name;
      return { column, rule: p.rule, message: `${column}: ${p.message}` };
    }
    if (col.range) {
      const v = p.value as bigint;
      if (col.range === 'positive' && v <= 0n) return { column: col.name, rule: 'range_positive', message: `${col.name} '${clip(text)}' must be > 0` };
      if (col.range === 'at_least_one' && v < 1n) return { column: col.name, rule: 'range_at_least_one', message: `${col.name} '${clip(text)}' must be ≥ 1` };
    }
    cells.push(p.value as Cell);
    byName.set(col.name, p.value as Cell);
  }
  // Derived columns, in the order of derivedColumns().
  for (const col of spec.columns) {
    if (col.kind !== 'local_timestamp' || !col.utcColumn) continue;
    const wall = byName.get(col.name) as bigint;
    const zone = ianaZone(byName.get(col.zoneColumn!) as string)!;
    const m = mapRecordLocalTime(zone, wall);
    if (!m.ok) return { column: col.name, rule: 'local_time_gap', message: `${col.name} '${fields.get(col.name)}' does not exist in ${byName.get(col.zoneColumn!)} (DST gap)` };
    if (!inTimestampRange(m.utcMicros)) return { column: col.name, rule: 'timestamp_range', message: `${col.name} '${fields.get(col.name)}' in ${byName.get(col.zoneColumn!)} falls outside years 0001–9999 UTC` };
    cells.push(m.utcMicros);
  }
  if (spec.derived === 'notional') {
    const exp = currencies.get(byName.get('price_currency') as string)!;
    const notional = notionalMinor(byName.get('fill_qty') as bigint, byName.get('price') as bigint, exp, ctx.config.rounding_mode);
    // DECIMAL(38,0) holds at most 38 digits; a larger product cannot be stored or summed exactly.
    if (notional >= MAX_DECIMAL38 || notional <= -MAX_DECIMAL38) {
      return { column: 'price', rule: 'notional_range', message: `fill_qty × price = ${notional.toString().length}-digit notional in minor units; at most 38 digits fit DECIMAL(38,0)` };
    }
    cells.push(notional);
  }
  if (spec.derived === 'statement_interval') {
    const tz = byName.get('timezone') as string;
    const days = byName.get('business_date') as number;
    const cutoffS = byName.get('cutoff_local') as string;
    const seconds = parseCutoff(cutoffS);
    if (!seconds.ok) throw new Error('unreachable');
    // Both ends must be instants the manifest can write (years 0001–9999 UTC).
    const wallStart = BigInt(days - 1) * 86_400_000_000n + BigInt(seconds.value) * 1_000_000n;
    const wallEnd = BigInt(days) * 86_400_000_000n + BigInt(seconds.value) * 1_000_000n;
    const margin = 2n * 86_400_000_000n;
    if (!inTimestampRange(wallStart - margin) || !inTimestampRange(wallEnd + margin)) {
      return { column: 'business_date', rule: 'date_range', message: `business_date '${fields.get('business_date')}' is too close to the ends of years 0001–9999 to map its cutoff interval` };
    }
    cells.push(cutoffInstant(ctx, tz, days - 1, seconds.value), cutoffInstant(ctx, tz, days, seconds.value));
  }
  return { cells };
}

function cutoffInstant(ctx: RowContext, tz: string, days: number, seconds: number): bigint {
  const wall = BigInt(days) * 86_400_000_000n + BigInt(seconds) * 1_000_000n;
  const key = `${tz}|${wall}`;
  let m = ctx.cutoffs.get(key);
  if (!m) {
    const r = mapCutoff(ianaZone(tz)!, wall);
    m = { timezone: tz, local: formatMicros(wall).replace(/Z$/, ''), utc: formatMicros(r.utcMicros), rule: r.rule, micros: r.utcMicros };
    ctx.cutoffs.set(key, m);
  }
  ctx.touched.set(key, m);
  return m.micros;
}

function typeValue(col: ColumnSpec, text: string, fields: ReadonlyMap<string, string | null>): Parsed<Cell> {
  switch (col.kind) {
    case 'timestamp': return parseTimestamp(text);
    case 'local_timestamp': {
      const p = parseLocalTimestamp(text);
      if (!p.ok) return p;
      const zone = fields.get(col.zoneColumn!);
      if (!zone || !ianaZone(zone)) return { ok: false, rule: 'timezone_unknown', message: `companion ${col.zoneColumn} '${clip(zone ?? '')}' is not an IANA time zone` };
      return p;
    }
    case 'timezone': return ianaZone(text) ? { ok: true, value: text } : { ok: false, rule: 'timezone_unknown', message: `'${clip(text)}' is not an IANA time zone` };
    case 'date': return parseDate(text);
    case 'cutoff': {
      const p = parseCutoff(text);
      return p.ok ? { ok: true, value: text.length === 5 ? `${text}:00` : text } : p;
    }
    case 'int': return parseInt64(text);
    case 'decimal': return parseDecimal(text);
    case 'amount_minor': return parseAmountMinor(text);
    case 'currency':
      return currencyTable().exponents.has(text) ? { ok: true, value: text } : { ok: false, rule: 'currency_unknown', message: `'${clip(text)}' is not a currency code of iso4217.csv` };
    case 'id': return parseId(text);
    case 'enum':
      return col.values!.includes(text) ? { ok: true, value: text } : { ok: false, rule: 'enum_value', message: `'${clip(text)}' is not one of ${col.values!.join(', ')}` };
    case 'text': return parseText(text);
    case 'bool': return parseBool(text);
  }
}
