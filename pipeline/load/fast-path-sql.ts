/**
 * The loader's SQL fast path, as SQL text (CONTRACT §1–§2): for one source file whose columns
 * DuckDB can read (Parquet, or a plain CSV read as VARCHAR), one `SELECT` that computes every
 * dataset column with its exact type (DECIMAL(38,18), DECIMAL(38,0), TIMESTAMP UTC, DATE, BIGINT,
 * BOOLEAN, VARCHAR) and a flag `__ok` that is true only for records the JavaScript validator
 * (values.ts, record-type.ts) would accept with exactly those typed values.
 *
 * The flag is deliberately conservative: it may be false for a valid record (an id with an inner
 * space or a non-ASCII letter, a 21-digit decimal with leading zeros, a local time in an hour
 * holding a DST transition, a notional whose operands are too long for 128-bit integers, year
 * 0001–0999), never true for an invalid one. Records with `__ok` false are handed to the
 * JavaScript validator, which loads or quarantines them exactly as it always did; so the rules,
 * rule codes and quarantine entries are those of values.ts, and this file only has to be right
 * about what it lets through.
 *
 * Values are never type-sniffed and never pass through DOUBLE: text is checked with a regular
 * expression before any cast (DuckDB casts are permissive, see FIELD-NOTES), decimals are cast
 * to DECIMAL(18,9) only when their digits fit it (else to DECIMAL(38,18) directly), and the
 * notional is integer arithmetic on HUGEINT with the configured rounding mode.
 */
import type { RoundingMode } from '../contract/money.js';
import { ident, literal } from '../core/sql-text.js';
import { currencyTable } from '../contract/currency.js';
import { SQL_TYPE, derivedColumns, type ColumnSpec, type DatasetSpec } from '../contract/datasets.js';


/** A source column as the fast path sees it: its DuckDB type and an SQL expression reading it. */
export interface SourceColumn {
  /** DuckDB type as DESCRIBE prints it (`VARCHAR`, `DECIMAL(38,18)`, `TIMESTAMP WITH TIME ZONE` …). */
  readonly type: string;
  /** Expression reading the column from the source relation (e.g. `s."price"`). */
  readonly ref: string;
  /**
   * Text the run rendered itself from a database column of this type (postgres/render.ts), so
   * it holds that type's canonical output: checked by renderedColumn where it has a cheaper test.
   */
  readonly rendered?: string;
}

/**
 * How empty text reads: CSV gives SQL NULL for an empty field already; Parquet may hold '' in a
 * VARCHAR column, which the contract treats as empty (CONTRACT §1: absent, null and '' are one).
 */
export type SourceFormat = 'csv' | 'parquet';

/** The local-time join a dataset needs: which source columns give the zone and the local text. */
export interface ZoneJoin {
  readonly alias: string;
  readonly zone: string;
  readonly local: string;
}

/** The fast-path plan of one file. */
export interface FastPlan {
  /**
   * `SELECT` list of the inner query: every table column (own then derived, in `tableColumns`
   * order) under its own quoted name, then `__ok`. Derived columns refer to own columns by name,
   * so the plan is used as `SELECT … FROM (SELECT <inner> FROM src JOIN …) WHERE __ok`.
   */
  readonly inner: string;
  /**
   * The typed value of each own column as an expression over `s` (no checks), in column order:
   * what a view over an already validated file computes (see load-views.ts).
   */
  readonly values: readonly string[];
  /** Projections stacked on the inner query (`SELECT *, <layer> FROM (…)`), innermost first. */
  readonly layers: readonly (readonly string[])[];
  /** Expressions of the outer query over the inner one, in table order (own then derived). */
  readonly outer: readonly string[];
  /**
   * Condition over the inner query's columns (never NULL, never raising an error): true only for
   * a record the JS validator accepts with exactly the values of `outer`.
   */
  readonly ok: string;
  /** LEFT JOINs to the zone-hour table, one per local-time column. */
  readonly joins: readonly ZoneJoin[];
  /** LEFT JOINs to per-file lookups of distinct values (see ValueLookup). */
  readonly lookups: readonly ValueLookup[];
}

/**
 * A value computed once per distinct value of a source column instead of once per record:
 * `LEFT JOIN (SELECT k, <value> AS v FROM (SELECT DISTINCT <column> AS k FROM <file>)) <alias>
 * ON <alias>.k = <source ref>`. Used for the scaled notional operands of 128-bit DECIMAL columns,
 * whose conversion (a 128-bit division inside DuckDB) costs about 0.7 µs a value while file
 * columns repeat their values many times.
 */
export interface ValueLookup {
  readonly alias: string;
  /** The source column, by name (quoted identifier) in the file. */
  readonly column: string;
  /** Expression over `k` (the distinct value) and `vk` (its text, `k::VARCHAR`, computed once). */
  readonly value: string;
  /** Expression reading the column in the main query (`s."price"`). */
  readonly ref: string;
}

/** Why a file cannot take the fast path (it then goes through the JavaScript reader whole). */
export interface NotFast {
  readonly reason: string;
}

// Text forms, slightly narrower than values.ts (years 1000–9999 only; the JS path judges the rest).
const TS_RE = '[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?(Z|[+-]((0[0-9]|1[0-7]):[0-5][0-9]|18:00))';
const LOCAL_RE = '[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?';
const DATE_RE = '[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])';
/** At most 20 digits before the point (leading zeros counted: narrower than the rule) and 18 after. */
const DECIMAL_RE = '-?[0-9]{1,20}(\\.[0-9]{1,18})?';
const AMOUNT_RE = '-?[0-9]{1,38}';
/** 18 digits always fit a signed 64-bit integer (19 may not: the JS path judges those). */
const INT_RE = '-?[0-9]{1,18}';
/**
 * An id the fast path accepts: non-empty printable ASCII without space and `|` (so no control
 * character and no white space to trim). Written as "no byte outside '!'–'{', '}', '~'" with GLOB,
 * which costs about a quarter of the equivalent regexp_full_match(t, '[!-{}~]+').
 */
const idOk = (t: string) => `(${t} <> '' AND NOT (${t} GLOB '*[!!-{}~]*'))`;
const TS_MIN = `TIMESTAMP '0001-01-01 00:00:00'`;
const TS_MAX = `TIMESTAMP '9999-12-31 23:59:59.999999'`;

const SIGNED_INTS = new Set(['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT', 'UINTEGER']);
const WIDE_INTS = new Set(['UBIGINT', 'HUGEINT', 'UHUGEINT']);

const decimalType = (t: string) => {
  const m = /^DECIMAL\((\d+),(\d+)\)$/.exec(t);
  return m ? { width: Number(m[1]), scale: Number(m[2]) } : undefined;
};

/**
 * Typed value and acceptance of one column read from text `t` (NULL = empty). `okNonNull` is
 * evaluated only for a non-empty value.
 */
function textColumn(col: ColumnSpec, t: string): { okNonNull: string; val: string } | NotFast {
  const full = (re: string) => `regexp_full_match(${t}, ${literal(re)})`;
  switch (col.kind) {
    case 'id': return { okNonNull: idOk(t), val: t };
    case 'enum': return { okNonNull: `${t} IN (${col.values!.map(literal).join(', ')})`, val: t };
    case 'currency': return { okNonNull: `${t} IN (${[...currencyTable().exponents.keys()].map(literal).join(', ')})`, val: t };
    // Free text: no NUL; non-ASCII text is left to the JS path (it checks for lone surrogates).
    case 'text': return { okNonNull: `(NOT contains(${t}, chr(0)) AND strlen(${t}) = length(${t}))`, val: t };
    case 'bool': return { okNonNull: `${t} IN ('true', 'false')`, val: `(${t} = 'true')` };
    case 'int': return { okNonNull: full(INT_RE), val: `try_cast(${t} AS BIGINT)` };
    case 'amount_minor':
      return { okNonNull: full(AMOUNT_RE), val: `CASE WHEN strlen(${t}) <= 18 THEN try_cast(${t} AS BIGINT)::DECIMAL(38,0) ELSE try_cast(${t} AS DECIMAL(38,0)) END` };
    case 'decimal':
      // DECIMAL(18,9) parses about 200× faster than DECIMAL(38,18); it is used only when the
      // text has at most 9 fraction digits (more would round) and fits (else NULL → wide cast).
      return {
        okNonNull: full(DECIMAL_RE),
        val: `CASE WHEN strpos(${t}, '.') = 0 OR strlen(${t}) - strpos(${t}, '.') <= 9 THEN coalesce(try_cast(${t} AS DECIMAL(18,9))::DECIMAL(38,18), try_cast(${t} AS DECIMAL(38,18))) ELSE try_cast(${t} AS DECIMAL(38,18)) END`,
      };
    case 'timestamp': {
      const v = `make_timestamp(epoch_us(try_cast(${t} AS TIMESTAMPTZ)))`;
      return { okNonNull: `(${full(TS_RE)} AND ${v} BETWEEN ${TS_MIN} AND ${TS_MAX})`, val: v };
    }
    case 'date': return { okNonNull: `(${full(DATE_RE)} AND try_cast(${t} AS DATE) IS NOT NULL)`, val: `try_cast(${t} AS DATE)` };
    case 'local_timestamp': return { okNonNull: `(${full(LOCAL_RE)} AND try_cast(${t} AS TIMESTAMP) IS NOT NULL)`, val: `try_cast(${t} AS TIMESTAMP)` };
    case 'timezone': return { okNonNull: 'true', val: t }; // validity comes from the zone-hour join
    case 'cutoff': return { reason: 'cutoff columns (bank and custodian statements) are read by the JS path' };
  }
}

/**
 * Cheaper acceptance of text rendered from a database column of type `rendered` (render.ts:
 * PostgreSQL's own output in a UTC ISO session, or to_char's on Aurora DSQL), with the value
 * textColumn computes. Such text is a canonical form, `YYYY-MM-DDTHH:MM:SS[.f{1,6}]Z` for a
 * timestamptz and `YYYY-MM-DD` for a date, unless the value is infinite, BC or past year 9999
 * (then the pattern or the range fails): on it the pattern and the range accept exactly what
 * textColumn's regular expression and range accept, at a third of its cost. Undefined for any
 * other kind or type (textColumn's test applies, as for every file the run did not render).
 */
function renderedColumn(col: ColumnSpec, t: string, rendered: string, val: string): { okNonNull: string; val: string } | undefined {
  if (col.kind === 'timestamp' && rendered === 'timestamptz') {
    return { okNonNull: `CASE WHEN ${t} LIKE '____-__-__T__:__:__%Z' AND strlen(${t}) <= 27 THEN coalesce(${val} BETWEEN TIMESTAMP '1000-01-01' AND ${TS_MAX}, false) ELSE false END`, val };
  }
  if (col.kind === 'date' && rendered === 'date') {
    return { okNonNull: `CASE WHEN ${t} LIKE '____-__-__' THEN coalesce(${val} BETWEEN DATE '1000-01-01' AND DATE '9999-12-31', false) ELSE false END`, val };
  }
  return undefined;
}

/** Typed value and acceptance of one column of a typed Parquet source (never text). */
function typedColumn(col: ColumnSpec, x: string, type: string): { okNonNull: string; val: string } | NotFast {
  const dec = decimalType(type);
  const notFast = { reason: `column ${col.name} of type ${type} is read by the JS path (kind ${col.kind})` };
  switch (col.kind) {
    case 'timestamp':
      if (type === 'TIMESTAMP WITH TIME ZONE') {
        // The JS reader prints the UTC instant with a 4-digit year: years 1000–9999 only here.
        const v = `make_timestamp(epoch_us(${x}))`;
        return { okNonNull: `(${v} BETWEEN TIMESTAMP '1000-01-01' AND ${TS_MAX})`, val: v };
      }
      if (type === 'TIMESTAMP' || type === 'TIMESTAMP_MS' || type === 'TIMESTAMP_S') {
        const v = `try_cast(${x} AS TIMESTAMP)`;
        return { okNonNull: `(${v} BETWEEN TIMESTAMP '1000-01-01' AND ${TS_MAX})`, val: v };
      }
      if (type === 'TIMESTAMP_NS') {
        const v = `try_cast(${x} AS TIMESTAMP)`;
        return { okNonNull: `(epoch_ns(${x}) % 1000 = 0 AND ${v} BETWEEN TIMESTAMP '1000-01-01' AND ${TS_MAX})`, val: v };
      }
      return notFast;
    case 'date':
      return type === 'DATE' ? { okNonNull: `(${x} BETWEEN DATE '1000-01-01' AND DATE '9999-12-31')`, val: x } : notFast;
    case 'bool':
      return type === 'BOOLEAN' ? { okNonNull: 'true', val: x } : notFast;
    case 'int':
      if (SIGNED_INTS.has(type)) return { okNonNull: 'true', val: `${x}::BIGINT` };
      if (WIDE_INTS.has(type) || (dec && dec.scale === 0)) {
        return { okNonNull: `(${x} BETWEEN -9223372036854775808 AND 9223372036854775807)`, val: `try_cast(${x} AS BIGINT)` };
      }
      return notFast;
    case 'decimal':
      if (SIGNED_INTS.has(type) || type === 'UBIGINT') return { okNonNull: 'true', val: `${x}::DECIMAL(38,18)` };
      if (type === 'HUGEINT' || type === 'UHUGEINT') return { okNonNull: `(${x} < 100000000000000000000 AND ${x} > -100000000000000000000)`, val: `try_cast(${x} AS DECIMAL(38,18))` };
      if (dec && dec.scale <= 18) {
        if (dec.width - dec.scale <= 20) return { okNonNull: 'true', val: `${x}::DECIMAL(38,18)` };
        return { okNonNull: `(abs(${x}) < 100000000000000000000)`, val: `try_cast(${x} AS DECIMAL(38,18))` };
      }
      return notFast;
    case 'amount_minor':
      if (SIGNED_INTS.has(type) || type === 'UBIGINT') return { okNonNull: 'true', val: `${x}::DECIMAL(38,0)` };
      if (type === 'HUGEINT' || type === 'UHUGEINT') {
        return { okNonNull: `(${x} < 100000000000000000000000000000000000000 AND ${x} > -100000000000000000000000000000000000000)`, val: `try_cast(${x} AS DECIMAL(38,0))` };
      }
      if (dec && dec.scale === 0) return { okNonNull: 'true', val: `${x}::DECIMAL(38,0)` };
      return notFast;
    default:
      return notFast;
  }
}

/** Powers of ten 10^0 … 10^18 as BIGINT literals. */
const POW10 = Array.from({ length: 19 }, (_, i) => `${10n ** BigInt(i)}::BIGINT`);
const BILLION = POW10[9];

/**
 * A decimal's value scaled by 10^9 as a BIGINT, or NULL when it is not in the notional tier
 * (|v| < 10^9 with at most 9 fraction digits); built from the column's exact text, so no value
 * passes through anything but integers. `x` reads the source column, `type` is its DuckDB type.
 */
function scaled9(x: string, type: string, format: SourceFormat, text = `(${x}::VARCHAR)`): string {
  const dec = decimalType(type);
  if (type === 'VARCHAR') {
    const t = format === 'parquet' ? `nullif(${x}, '')` : x;
    const frac = `CASE WHEN strpos(${t}, '.') = 0 THEN 0 ELSE strlen(${t}) - strpos(${t}, '.') END`;
    return `CASE WHEN regexp_full_match(${t}, '-?[0-9]{1,9}(\\.[0-9]{1,9})?') THEN try_cast(replace(${t}, '.', '') AS BIGINT) * [${POW10.slice(0, 10).reverse().join(', ')}][${frac} + 1] END`;
  }
  if (SIGNED_INTS.has(type)) return `CASE WHEN abs(${x}::BIGINT) < ${BILLION} THEN ${x}::BIGINT * ${BILLION} END`;
  if (dec && dec.scale <= 9) {
    // DECIMAL(p,s) prints exactly s fraction digits: the digits without the point are the value × 10^s.
    return `CASE WHEN abs(${x}) < ${BILLION} THEN try_cast(replace(${text}, '.', '') AS BIGINT) * ${POW10[9 - dec.scale]} END`;
  }
  if (dec && dec.scale <= 18) {
    // More than 9 fraction digits printed: in the tier only when the extra ones are zeros.
    const extra = dec.scale - 9;
    const v = text;
    return `CASE WHEN abs(${x}) < ${BILLION} AND ends_with(${v}, '${'0'.repeat(extra)}') THEN try_cast(replace(${v}[1:-${extra + 1}], '.', '') AS BIGINT) END`;
  }
  return 'NULL::BIGINT';
}

/**
 * Notional in minor units (CONTRACT §1, money.ts `notionalMinor`): fill_qty × price rounded at the
 * currency exponent e with `mode`, in BIGINT arithmetic only. With Q = |fill_qty|·10^9 and
 * P = |price|·10^9 (integers, see scaled9), split as Q = a·10^9 + b and P = c·10^9 + d:
 *   Q·P / 10^9 = I + v / 10^9, where I = a·c·10^9 + a·d + b·c + ⌊b·d / 10^9⌋ and v = b·d mod 10^9,
 * and the notional is (I + v/10^9) / E with E = 10^(9−e), rounded: m = ⌊I / E⌋, and the
 * remainder compared as (I mod E)·10^9 + v against E·10^9. Every intermediate stays below 2^63
 * when a·c ≤ 5·10^9 (the tier condition `ok`; I is not computed otherwise). `q9`, `p9` and `E`
 * are columns of the inner query; `layers` are projections stacked on it, `val` reads them.
 */
function notionalSql(q9: string, p9: string, E: string, mode: RoundingMode): { ok: string; val: string; layers: string[][] } {
  const B = BILLION;
  const layers = [
    [`abs(${q9}) // ${B} AS __na`, `abs(${q9}) % ${B} AS __nb`, `abs(${p9}) // ${B} AS __nc`, `abs(${p9}) % ${B} AS __nd`, `((${q9} < 0) <> (${p9} < 0)) AS __nneg`],
    [`CASE WHEN __na * __nc <= 5000000000 THEN __na * __nc * ${B} + __na * __nd + __nb * __nc + (__nb * __nd) // ${B} END AS __ni`, `(__nb * __nd) % ${B} AS __nv`],
    [`__ni // ${E} AS __nm`, `(__ni % ${E}) * ${B} + __nv AS __nr`, `${E} * ${B} AS __nden`],
  ];
  const ok = `(${q9} IS NOT NULL AND ${p9} IS NOT NULL AND ${E} IS NOT NULL AND __ni IS NOT NULL)`;
  let up: string;
  switch (mode) {
    case 'DOWN': up = 'false'; break;
    case 'UP': up = '__nr > 0'; break;
    case 'CEIL': up = '(__nr > 0 AND NOT __nneg)'; break;
    case 'FLOOR': up = '(__nr > 0 AND __nneg)'; break;
    case 'HALF_UP': up = '2 * __nr >= __nden'; break;
    case 'HALF_DOWN': up = '2 * __nr > __nden'; break;
    case 'HALF_EVEN': up = '(2 * __nr > __nden OR (2 * __nr = __nden AND __nm % 2 = 1))'; break;
  }
  const magnitude = `(__nm + CASE WHEN ${up} THEN 1 ELSE 0 END)`;
  return { ok, layers, val: `CAST(CASE WHEN __nneg THEN -${magnitude} ELSE ${magnitude} END AS DECIMAL(38,0))` };
}

/** `E` = 10^(9 − exponent) of a currency code column, NULL for a code outside iso4217.csv (or exponent > 9). */
function divisorSql(currency: string): string {
  const byExp = new Map<number, string[]>();
  for (const [code, exp] of currencyTable().exponents) if (exp <= 9) byExp.set(exp, [...(byExp.get(exp) ?? []), code]);
  return `CASE ${[...byExp].map(([exp, codes]) => `WHEN ${currency} IN (${codes.map(literal).join(', ')}) THEN ${POW10[9 - exp]}`).join(' ')} END`;
}

/** The SQL text of a source column read as text: a Parquet string with '' as NULL, a CSV column as it is read. */
function sourceText(s: SourceColumn, format: SourceFormat): string {
  return format === 'parquet' ? `nullif(${s.ref}, '')` : s.ref;
}

/**
 * The derived columns of the plan, after the own columns in `outer`: a local time's UTC instant
 * and the notional, each with its check. The notional's operands go to `inner` (and a wide
 * DECIMAL operand's lookup to `lookups`). NotFast for a derived column the JS path computes.
 */
function planDerived(spec: DatasetSpec, sources: ReadonlyMap<string, SourceColumn>, format: SourceFormat, mode: RoundingMode, inner: string[], lookups: ValueLookup[]): { outer: string[]; derivedOks: string[]; layers: string[][] } | NotFast {
  const outer: string[] = spec.columns.map((c) => ident(c.name));
  const derivedOks: string[] = [];
  const layers: string[][] = [];
  for (const d of derivedColumns(spec)) {
    const local = spec.columns.find((c) => c.utcColumn === d.name);
    if (local) {
      const utc = `make_timestamp(epoch_us(${ident(local.name)}) - ${ident(`__off_${local.name}`)})`;
      outer.push(utc);
      derivedOks.push(`${utc} BETWEEN ${TS_MIN} AND ${TS_MAX}`);
    } else if (d.name === 'notional_minor') {
      const qty = sources.get('fill_qty')!, price = sources.get('price')!, ccy = sources.get('price_currency')!;
      // A 128-bit DECIMAL column's conversion is looked up per distinct value (ValueLookup).
      const operand = (src: SourceColumn, name: string, alias: string) => {
        const dec = decimalType(src.type);
        if (!dec || dec.width <= 18) return scaled9(src.ref, src.type, format);
        lookups.push({ alias, column: ident(name), value: scaled9('k', src.type, format, 'vk'), ref: src.ref });
        return `${alias}.v`;
      };
      inner.push(`${operand(qty, 'fill_qty', '__lq')} AS __q9`, `${operand(price, 'price', '__lp')} AS __p9`);
      inner.push(`${divisorSql(ccy.type === 'VARCHAR' ? sourceText(ccy, format) : 'NULL')} AS __e`);
      const n = notionalSql('__q9', '__p9', '__e', mode);
      layers.push(...n.layers);
      outer.push(`CASE WHEN ${n.ok} THEN ${n.val} END`);
      derivedOks.push(n.ok);
    } else {
      return { reason: `derived column ${d.name} is computed in the JS path` };
    }
  }
  return { outer, derivedOks, layers };
}

/**
 * Builds the fast-path plan of one file of `spec`, whose columns are `sources` (by dataset column
 * name; every dataset column must be present). Returns NotFast when some column's type or the
 * dataset's derived columns are left to the JS path.
 */
export function planFast(spec: DatasetSpec, sources: ReadonlyMap<string, SourceColumn>, format: SourceFormat, mode: RoundingMode): FastPlan | NotFast {
  if (spec.derived === 'statement_interval') return { reason: `${spec.name} maps statement cutoffs in the JS path` };
  const inner: string[] = [];
  const values: string[] = [];
  const oks: string[] = [];
  const joins: ZoneJoin[] = [];
  const lookups: ValueLookup[] = [];
  const textOf = (s: SourceColumn) => sourceText(s, format);
  for (const col of spec.columns) {
    const src = sources.get(col.name);
    if (!src) return { reason: `column ${col.name} is missing` };
    let e: { okNonNull: string; val: string } | NotFast;
    let present: string;
    if (src.type === 'VARCHAR') {
      const t = textOf(src);
      e = textColumn(col, t);
      if (src.rendered && !('reason' in e)) e = renderedColumn(col, t, src.rendered, e.val) ?? e;
      present = `${t} IS NOT NULL`;
    } else {
      if (col.kind === 'local_timestamp' || col.kind === 'timezone') return { reason: `column ${col.name} is ${src.type}, not text` };
      e = typedColumn(col, src.ref, src.type);
      present = `${src.ref} IS NOT NULL`;
    }
    if ('reason' in e) return e;
    let ok = col.optional ? `(NOT (${present}) OR (${e.okNonNull}))` : `(${present} AND ${e.okNonNull})`;
    if (col.range === 'positive') ok = `(${ok} AND ${e.val} > 0)`;
    if (col.range === 'at_least_one') ok = `(${ok} AND ${e.val} >= 1)`;
    if (col.kind === 'local_timestamp') {
      const zoneSrc = sources.get(col.zoneColumn!);
      if (!zoneSrc || zoneSrc.type !== 'VARCHAR') return { reason: `zone column ${col.zoneColumn} is not text` };
      const alias = `__tz${joins.length}`;
      joins.push({ alias, zone: textOf(zoneSrc), local: textOf(src) });
      ok = `(${ok} AND ${alias}.off_us IS NOT NULL)`;
      inner.push(`${alias}.off_us AS ${ident(`__off_${col.name}`)}`);
    }
    if (SQL_TYPE[col.kind] === undefined) return { reason: `no SQL type for ${col.kind}` };
    inner.push(`${e.val} AS ${ident(col.name)}`);
    values.push(e.val);
    oks.push(ok);
  }
  const derived = planDerived(spec, sources, format, mode, inner, lookups);
  if ('reason' in derived) return derived;
  const { outer, derivedOks, layers } = derived;
  // Own-column checks in the inner query; derived checks need the typed values and run over it.
  // A derived check is evaluated only where the own columns passed (CASE), so it never sees garbage.
  inner.push(`coalesce(${oks.join(' AND ')}, false) AS __ok0`);
  const ok = derivedOks.length ? `CASE WHEN __ok0 THEN coalesce(${derivedOks.join(' AND ')}, false) ELSE false END` : '__ok0';
  return { inner: inner.join(', '), values, layers, outer, ok, joins, lookups };
}
