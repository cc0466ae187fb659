/**
 * Amounts and dates as provider files write them, turned into contract values exactly
 * (CONTRACT §1): a money amount in major units becomes minor units at the currency's ISO 4217
 * exponent (`currencyTable()`, never Intl); digits past the exponent are allowed only when they
 * are zeros, otherwise the value is refused — never rounded. Every refusal is a
 * `ProviderValueError` naming the file, line and what was read.
 */
import { currencyTable } from '../contract/currency.js';
import { InputError } from '../core/errors.js';
import { majorToMinor } from '../contract/money.js';
import { epochDays } from '../contract/values.js';

/**
 * A value in a provider file that cannot become a contract value (exit 3): an amount with more
 * decimals than its currency allows, an unknown currency, an impossible date, a record that
 * cannot be read. The whole import writes nothing when one occurs.
 */
export class ProviderValueError extends InputError {
  constructor(readonly providerFile: string, readonly lineNo: number | undefined, readonly ruleCode: string, message: string) {
    super({ message: `${providerFile}${lineNo !== undefined ? `:${lineNo}` : ''}: ${message}`, file: providerFile, row: lineNo, rule: ruleCode });
    this.name = 'ProviderValueError';
  }
}

/** Where a value was read, for error messages. */
export interface Where {
  readonly file: string;
  readonly line?: number;
}

/** The ISO 4217 exponent of `code`; throws ProviderValueError for a code not in iso4217.csv. */
export function currencyExponent(code: string, where: Where): number {
  const exp = currencyTable().exponents.get(code);
  if (exp === undefined) throw new ProviderValueError(where.file, where.line, 'currency_unknown', `currency '${code}' is not in the ISO 4217 table (iso4217.csv)`);
  return exp;
}

/**
 * Converts an unsigned major-unit decimal with a point (`18.150`, `7.00`, `2700`) to minor units.
 * Throws when the text is not a plain decimal or has non-zero digits past the exponent.
 */
export function majorPointToMinor(text: string, currency: string, where: Where, what: string): bigint {
  const exp = currencyExponent(currency, where);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text)) throw new ProviderValueError(where.file, where.line, 'amount_form', `${what} '${text}' is not an unsigned decimal amount`);
  const v = majorToMinor(text, exp);
  if (v === undefined) throw new ProviderValueError(where.file, where.line, 'amount_scale', `${what} '${text}' ${currency} has more decimals than ${currency} allows (${exp}); refused, not rounded`);
  return v;
}

/**
 * Converts a SWIFT amount (comma decimal separator, mandatory comma: `380115,`, `380115,1`,
 * `00,12`, `001,12`) to minor units; throws on any other form or on non-zero excess decimals.
 */
export function swiftAmountToMinor(text: string, currency: string, where: Where, what: string): bigint {
  const m = /^([0-9]+),([0-9]*)$/.exec(text);
  if (!m) throw new ProviderValueError(where.file, where.line, 'amount_form', `${what} '${text}' is not a SWIFT amount (digits, a comma, optional decimals)`);
  return majorPointToMinor(m[2] ? `${m[1]}.${m[2]}` : m[1], currency, where, what);
}

/**
 * Converts a two-digit year date `YYMMDD` to `YYYY-MM-DD`. Years 00–79 are 2000–2079 and 80–99
 * are 1980–1999 (SWIFT and BAI2 files carry two-digit years; see docs/import.md). Throws on an
 * impossible calendar date.
 */
export function yymmddToDate(text: string, where: Where, what: string): string {
  const m = /^([0-9]{2})([0-9]{2})([0-9]{2})$/.exec(text);
  if (!m) throw new ProviderValueError(where.file, where.line, 'date_form', `${what} '${text}' is not a date YYMMDD`);
  const yy = Number(m[1]);
  const year = yy < 80 ? 2000 + yy : 1900 + yy;
  return checkedDate(year, Number(m[2]), Number(m[3]), where, what, text);
}

/** Checks `YYYY-MM-DD` (a real calendar date) and returns it; throws otherwise. */
export function isoDate(text: string, where: Where, what: string): string {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(text);
  if (!m) throw new ProviderValueError(where.file, where.line, 'date_form', `${what} '${text}' is not a date YYYY-MM-DD`);
  return checkedDate(Number(m[1]), Number(m[2]), Number(m[3]), where, what, text);
}

function checkedDate(y: number, mo: number, d: number, where: Where, what: string, text: string): string {
  if (epochDays(y, mo, d) === undefined) throw new ProviderValueError(where.file, where.line, 'date_calendar', `${what} '${text}' is not a real calendar date`);
  return `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** Formats signed minor units as a major-unit decimal text for messages: (−2705, 2) → `-27.05`. */
export function minorToMajorText(v: bigint, exponent: number): string {
  const neg = v < 0n;
  const s = (neg ? -v : v).toString().padStart(exponent + 1, '0');
  const int = s.slice(0, s.length - exponent);
  const frac = exponent > 0 ? `.${s.slice(s.length - exponent)}` : '';
  return `${neg ? '-' : ''}${int}${frac}`;
}
