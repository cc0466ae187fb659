/**
 * The SQL that turns a dataset's query result into the contract's text form (CONTRACT §1), so the
 * extract is a CSV file the loader reads like any other and every value rule applies unchanged.
 *
 * The query's columns are described first (their type OIDs); each contract column is then
 * rendered by its PostgreSQL type: `timestamptz` as UTC `YYYY-MM-DDTHH:MM:SS.ffffffZ`, `timestamp`
 * without zone as the same without `Z` (which the timestamp rule rejects, value by value, as
 * `timestamp_without_zone`, and which a `*_local` column holds), `date` as `YYYY-MM-DD`,
 * `numeric` and the integer types as their exact text (never through a float), `boolean` as
 * `true`/`false`, text as it is (the empty string as empty, which the contract treats alike).
 * Values no contract form can hold (infinity, years outside 0001–9999) are shown as PostgreSQL
 * prints them, so the rules reject them instead of a clamp hiding them. A `real`, `double
 * precision` or `money` column for a decimal, money or int column is refused by name: the dataset's
 * rows are quarantined as a file fault, as for a FLOAT Parquet column.
 *
 * Columns the contract does not know are kept as empty columns of the same name, so the loader
 * lists them like the extra columns of a CSV file; a missing column is simply absent, so the
 * loader quarantines the rows as for a file without it. The extract's rows are put in one fixed
 * order, so that its bytes, its SHA-256 and its row numbers are the same on a rerun that reads the
 * same rows: by reckon after the COPY (extract.ts), or by the server with `sql`'s ORDER BY (every
 * contract column, the row key first, text in byte order).
 */
import { type ColumnKind, type DatasetSpec } from '../../contract/datasets.js';
import { formatMicros } from '../../contract/values.js';

/** One result column of a query as the server describes it. */
export interface DescribedColumn {
  readonly name: string;
  /** The type's name (`timestamptz`, `numeric`, … ; a domain as its base type). */
  readonly type: string;
}

/** How a column is carried into the extract. */
export interface RenderedColumn {
  readonly name: string;
  readonly type: string;
  /** `contract`: rendered for its contract kind; `extra`: an empty column (not in the contract). */
  readonly role: 'contract' | 'extra';
}

/** A dataset's extract plan: the SELECT to copy, or the column fault refusing it. */
export type RenderPlan =
  | {
    readonly kind: 'select';
    /** The SELECT with its rows in a fixed order: sorted by the server (ORDER BY every contract column, the row key first). */
    readonly sql: string;
    /** The same SELECT without the ORDER BY, for an extract reckon puts in order itself (extract.ts). */
    readonly unorderedSql: string;
    readonly columns: readonly RenderedColumn[];
    readonly header: readonly string[];
  }
  | { readonly kind: 'refused'; readonly column: string; readonly rule: string; readonly message: string; readonly columns: readonly RenderedColumn[] };

/** The row key of each dataset (what a quarantine entry names and what the extract is sorted by first). */
export const ROW_KEYS: Readonly<Record<string, readonly string[]>> = {
  orders: ['order_id', 'order_version'],
  outbox_events: ['event_id'],
  executions: ['execution_id'],
  venue_fills: ['venue_id', 'venue_fill_id'],
  ledger_postings: ['posting_set_id', 'leg'],
  account_balances: ['as_of', 'account_id', 'currency'],
  reservations: ['reservation_id', 'version'],
  positions: ['as_of', 'account_id', 'instrument_id'],
  bank_statements: ['statement_id'],
  bank_statement_lines: ['statement_id', 'line_id'],
  custodian_positions: ['custodian_id', 'account_id', 'instrument_id', 'business_date'],
  portfolio_projection: ['build_id', 'account_id', 'instrument_id', 'projection_version'],
  notification_intents: ['intent_id'],
  notification_receipts: ['receipt_id'],
  notification_exceptions: ['intent_id', 'approved_at'],
};

/** Names PostgreSQL gives the built-in types in a RowDescription, by OID. */
export const BUILTIN_TYPES: Readonly<Record<number, string>> = {
  16: 'bool', 17: 'bytea', 18: 'char', 19: 'name', 20: 'int8', 21: 'int2', 23: 'int4', 25: 'text', 26: 'oid', 114: 'json',
  142: 'xml', 700: 'float4', 701: 'float8', 790: 'money', 1042: 'bpchar', 1043: 'varchar', 1082: 'date', 1083: 'time',
  1114: 'timestamp', 1184: 'timestamptz', 1186: 'interval', 1266: 'timetz', 1700: 'numeric', 2950: 'uuid', 3802: 'jsonb',
};

/** A quoted SQL identifier. */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** A quoted SQL string literal (standard_conforming_strings: backslashes are plain). */
export const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;

const EXACT: ReadonlySet<ColumnKind> = new Set(['decimal', 'amount_minor', 'int']);
const BINARY_NUMBER = new Set(['float4', 'float8', 'money']);
const TIME_FORM = 'YYYY-MM-DD"T"HH24:MI:SS.US';

/** Text of a zoned timestamp in UTC with its six fraction digits and `Z` (CONTRACT §1: 1–6 digits). */
function timestamptzText(c: string): string {
  return `CASE WHEN ${c} IS NULL THEN NULL WHEN isfinite(${c}) AND ${c} >= '0001-01-01 00:00:00+00' AND ${c} < '10000-01-01 00:00:00+00' THEN to_char(${c} AT TIME ZONE 'UTC', '${TIME_FORM}"Z"') ELSE ${c}::text END`;
}

/** Text of a timestamp without zone: the wall time without `Z` (a local time, or rejected as without zone). */
function timestampText(c: string): string {
  return `CASE WHEN ${c} IS NULL THEN NULL WHEN isfinite(${c}) AND ${c} >= '0001-01-01 00:00:00' AND ${c} < '10000-01-01 00:00:00' THEN to_char(${c}, '${TIME_FORM}') ELSE ${c}::text END`;
}

function dateText(c: string): string {
  return `CASE WHEN ${c} IS NULL THEN NULL WHEN isfinite(${c}) AND ${c} >= '0001-01-01' AND ${c} < '10000-01-01' THEN to_char(${c}, 'YYYY-MM-DD') ELSE ${c}::text END`;
}

/**
 * The SQL expression giving column `c` (already qualified) of type `type` in the text form of
 * `kind`. With `utcSession` (the transaction set `TimeZone = 'UTC'` and `DateStyle = 'ISO, YMD'`),
 * times use PostgreSQL's own output, which is cheaper than to_char: `2026-11-02 09:30:00.5+00`
 * becomes `2026-11-02T09:30:00.5Z`; a value outside years 1–9999 or infinite keeps a form the
 * rules reject (`10000-…`, `… BC`, `infinity`).
 */
export function renderExpression(c: string, type: string, kind: ColumnKind, utcSession = false): string {
  if (utcSession && type === 'timestamptz') return `replace(replace(${c}::text, ' ', 'T'), '+00', 'Z')`;
  if (utcSession && type === 'timestamp') return `replace(${c}::text, ' ', 'T')`;
  if (utcSession && type === 'date') return `${c}::text`;
  if (type === 'timestamptz') return timestamptzText(c);
  if (type === 'timestamp') return timestampText(c);
  if (type === 'date') return dateText(c);
  if (type === 'bool') return `CASE WHEN ${c} IS NULL THEN NULL WHEN ${c} THEN 'true' ELSE 'false' END`;
  // A char(n)'s padding is not part of its value in PostgreSQL: its text form drops it.
  if (type === 'bpchar') return `NULLIF(${c}::text, '')`;
  // Empty text is empty (CONTRACT §1), written as nothing rather than a quoted "" field.
  if (kind !== 'bool' && (type === 'text' || type === 'varchar' || type === 'name')) return `NULLIF(${c}, '')`;
  return `NULLIF(${c}::text, '')`;
}

/**
 * Why a column cannot be read for its contract kind, or undefined: a binary float
 * (`database_float_column`) or PostgreSQL's `money` type (`database_money_column`, text in the
 * server's locale) for a decimal, amount or int column. `is`: what the column is, for naming
 * several refused columns in one message.
 */
export function refusalOf(name: string, type: string, kind: ColumnKind): { rule: string; is: string; message: string } | undefined {
  if (!EXACT.has(kind) || !BINARY_NUMBER.has(type)) return undefined;
  const fix = `a decimal, amount or int column must be numeric or an integer type; cast it in a query (${name}::numeric AS ${name}) or change the table`;
  const [rule, is] = type === 'money'
    ? ['database_money_column', `${name} is PostgreSQL's money type (text in the server's locale)`]
    : ['database_float_column', `${name} is ${type === 'float4' ? 'real' : 'double precision'} (a binary float)`];
  return { rule, is, message: `column ${is}; ${fix}` };
}

/** The bound's SQL literal for a column of `type` at `micros`, or undefined for a type a bound cannot apply to. */
export function boundLiteral(type: string, micros: bigint): string | undefined {
  const iso = formatMicros(micros);
  if (type === 'timestamptz') return `${quoteLiteral(iso)}::timestamptz`;
  if (type === 'timestamp') return `${quoteLiteral(iso.replace(/Z$/, ''))}::timestamp`;
  if (type === 'date') return `${quoteLiteral(iso.slice(0, 10))}::date`;
  return undefined;
}

/** Types sorted by their own ordering (text-like ones in byte order); others sort by their text. */
const ORDERED_TYPES = new Set(['uuid', 'int2', 'int4', 'int8', 'numeric', 'date', 'timestamp', 'timestamptz', 'bool', 'time', 'oid', 'float4', 'float8']);
const TEXT_TYPES = new Set(['text', 'varchar', 'bpchar', 'name']);

/** One ORDER BY term for a source column: typed, text in byte order (COLLATE "C"), or its text. */
function orderTerm(d: DescribedColumn): string {
  const c = `q.${quoteIdent(d.name)}`;
  return TEXT_TYPES.has(d.type) ? `${c} COLLATE "C"` : ORDERED_TYPES.has(d.type) ? c : `${c}::text COLLATE "C"`;
}

/**
 * Plans the extract of `spec` from `sourceSql` (one SELECT) whose result columns are `described`.
 * `bound`, when given, keeps rows whose bound column is at or after the literal, or empty.
 * `utcSession`: the transaction runs with TimeZone UTC and DateStyle ISO (see renderExpression).
 */
export function renderPlan(spec: DatasetSpec, sourceSql: string, described: readonly DescribedColumn[], bound?: { column: string; literal: string }, utcSession = false): RenderPlan {
  const kinds = new Map(spec.columns.map((c) => [c.name, c.kind]));
  const columns: RenderedColumn[] = described.map((d) => ({ name: d.name, type: d.type, role: kinds.has(d.name) ? 'contract' : 'extra' }));
  // Every refused column is named at once (the first in the entry's column), so one fix of the query does.
  const refusals = described.flatMap((d) => {
    const kind = kinds.get(d.name);
    const refused = kind && refusalOf(d.name, d.type, kind);
    return refused ? [{ column: d.name, ...refused }] : [];
  });
  if (refusals.length) {
    const [first, ...more] = refusals;
    const message = more.length ? `${first.message}; also ${more.map((r) => r.is).join('; ')}` : first.message;
    return { kind: 'refused', column: first.column, rule: first.rule, message, columns };
  }
  // The row key's columns come first, so an extract whose lines reckon sorts (line-order.ts) is
  // in key order, and lines differ early (sorting lines that open with the same timestamp costs
  // DuckDB twice the CPU).
  const key = (ROW_KEYS[spec.name] ?? []).filter((k) => described.some((d) => d.name === k));
  const inOrder = [...key.map((k) => described.find((d) => d.name === k)!), ...described.filter((d) => !key.includes(d.name))];
  const exprs = inOrder.map((d) => {
    const kind = kinds.get(d.name);
    const e = kind ? renderExpression(`q.${quoteIdent(d.name)}`, d.type, kind, utcSession) : 'NULL::text';
    return `${e} AS ${quoteIdent(d.name)}`;
  });
  // Sorted by the source's typed values (cheaper than comparing rendered text), the key first.
  const names = inOrder.map((d) => d.name);
  const order = names.filter((n) => kinds.has(n));
  const where = bound ? ` WHERE q.${quoteIdent(bound.column)} >= ${bound.literal} OR q.${quoteIdent(bound.column)} IS NULL` : '';
  const orderBy = order.length ? ` ORDER BY ${order.map((n) => orderTerm(described.find((d) => d.name === n)!)).join(', ')}` : '';
  const unorderedSql = `SELECT ${exprs.join(', ')} FROM (${sourceSql}\n) AS q${where}`;
  return { kind: 'select', sql: `${unorderedSql}${orderBy}`, unorderedSql, columns, header: names };
}
