/**
 * Property tests for the value parsers of pipeline/values.ts (CONTRACT §1). Oracles are independent
 * of the code under test: decimal.js at 80 significant digits for decimals, JS Date for calendar
 * days, plain string rules for canonical forms. Every failing case prints its fast-check seed and
 * path; rerun with `{ seed, path }` to replay.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import {
  epochDays, formatMicros, formatScaled, parseAmountMinor, parseBool, parseCutoff, parseDate, parseDecimal, parseId, parseInt64,
  parseLocalTimestamp, parseTimestamp,
} from '../pipeline/contract/values.js';

const D = Decimal.clone({ precision: 80 });
const RUNS = { numRuns: 2000 };

const digits = (min: number, max: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((a) => a.join(''));

/** A valid decimal text: optional '-', up to 3 leading zeros, 1–20 significant integer digits or 0, 0–18 fraction digits. */
const validDecimal = fc.record({
  neg: fc.boolean(),
  zeros: fc.integer({ min: 0, max: 3 }),
  int: fc.oneof(fc.constant(''), digits(1, 20).map((d) => d.replace(/^0+/, ''))),
  frac: fc.option(digits(1, 18), { nil: undefined }),
}).map(({ neg, zeros, int, frac }) => {
  const i = '0'.repeat(zeros) + int;
  return `${neg ? '-' : ''}${i === '' ? '0' : i}${frac === undefined ? '' : `.${frac}`}`;
});

/** The canonical form: no leading zeros, no trailing fraction zeros, no '.' without digits, no '-0'. */
function canonical(text: string): string {
  const neg = text.startsWith('-');
  const [i, f = ''] = text.replace(/^-/, '').split('.');
  const int = i.replace(/^0+/, '') || '0';
  const frac = f.replace(/0+$/, '');
  const body = frac ? `${int}.${frac}` : int;
  return neg && body !== '0' ? `-${body}` : body;
}

describe('parseDecimal / formatScaled', () => {
  it('round trip: valid text → scaled bigint → formatScaled is the canonical form, and equals decimal.js × 10^18', () => {
    fc.assert(fc.property(validDecimal, (text) => {
      const p = parseDecimal(text);
      expect(p.ok).toBe(true);
      if (!p.ok) return;
      expect(formatScaled(p.value)).toBe(canonical(text));
      expect(p.value.toString()).toBe(new D(text).times(new D(10).pow(18)).toFixed(0));
    }), RUNS);
  });

  it('equal values written differently parse to one bigint (1.50 = 1.5 = 001.500)', () => {
    fc.assert(fc.property(validDecimal, fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), (text, lead, trail) => {
      const frac = text.includes('.') ? text.split('.')[1] : '';
      if (frac.length + trail > 18) return;
      const neg = text.startsWith('-');
      const padded = `${neg ? '-' : ''}${'0'.repeat(lead)}${text.replace(/^-/, '')}${text.includes('.') ? '' : trail ? '.' : ''}${'0'.repeat(trail)}`;
      const a = parseDecimal(text), b = parseDecimal(padded);
      expect(a.ok && b.ok && a.value === b.value).toBe(true);
    }), RUNS);
  });

  it('rejects any text with a character outside -?[0-9.] (exponent, separator, sign +, symbol, space, parentheses)', () => {
    const junk = fc.constantFrom('e', 'E', '+', ',', ' ', '_', '$', '€', '£', '¥', '(', ')', "'", '\u00a0', '\t', '\n', 'NaN', 'Infinity', '٣', '１', 'x', '\u0000');
    fc.assert(fc.property(validDecimal, junk, fc.nat(), (text, j, at) => {
      const k = at % (text.length + 1);
      const bad = text.slice(0, k) + j + text.slice(k);
      const p = parseDecimal(bad);
      expect(p.ok).toBe(false);
      if (!p.ok) expect(p.rule).toBe('decimal_form');
    }), RUNS);
  });

  it('rejects more than 18 fraction digits (trailing zeros count) and more than 20 significant integer digits', () => {
    fc.assert(fc.property(digits(1, 3), digits(19, 30), (i, f) => {
      const p = parseDecimal(`${i}.${f}`);
      expect(!p.ok && p.rule).toBe('decimal_scale');
    }), RUNS);
    fc.assert(fc.property(fc.integer({ min: 1, max: 9 }), digits(20, 30), fc.option(digits(1, 18), { nil: undefined }), (lead, rest, f) => {
      const p = parseDecimal(`-${lead}${rest}${f ? `.${f}` : ''}`);
      expect(!p.ok && p.rule).toBe('decimal_precision');
    }), RUNS);
    expect(parseDecimal('000000000000000000000001.5').ok).toBe(true);
    expect(parseDecimal('99999999999999999999.999999999999999999').ok).toBe(true);
  });

  it('fixed examples', () => {
    const v = (t: string) => { const p = parseDecimal(t); return p.ok ? formatScaled(p.value) : p.rule; };
    expect(['1.50', '-0', '-0.000', '0.000000000000000001', '17.0', '1e3', '1.', '.5', '-', '', '--1', '1.2.3', '0x10'].map(v))
      .toEqual(['1.5', '0', '0', '0.000000000000000001', '17', 'decimal_form', 'decimal_form', 'decimal_form', 'decimal_form', 'decimal_form', 'decimal_form', 'decimal_form', 'decimal_form']);
  });
});

describe('parseAmountMinor and parseInt64', () => {
  it('integers of up to 38 digits are exact; fractions and other forms are rejected', () => {
    fc.assert(fc.property(fc.boolean(), digits(1, 38), (neg, d) => {
      const t = `${neg ? '-' : ''}${d}`;
      const p = parseAmountMinor(t);
      expect(p.ok && p.value === BigInt(t)).toBe(true);
    }), RUNS);
    fc.assert(fc.property(digits(1, 10), digits(1, 4), (i, f) => {
      const p = parseAmountMinor(`${i}.${f}`);
      expect(!p.ok && p.rule).toBe('amount_fractional');
    }), RUNS);
    fc.assert(fc.property(fc.integer({ min: 1, max: 9 }), digits(38, 45), (a, d) => {
      const p = parseAmountMinor(`${a}${d}`);
      expect(!p.ok && p.rule).toBe('amount_precision');
    }), RUNS);
    expect(['1e3', '+5', ' 5', '5 ', '1,000', '(5)', 'NaN'].map((t) => { const p = parseAmountMinor(t); return p.ok ? 'ok' : p.rule; })).toEqual(Array(7).fill('amount_form'));
  });

  it('int is exactly the signed 64-bit range', () => {
    const min = -(2n ** 63n), max = 2n ** 63n - 1n;
    fc.assert(fc.property(fc.bigInt({ min: min * 4n, max: max * 4n }), (v) => {
      const p = parseInt64(v.toString());
      if (v >= min && v <= max) expect(p.ok && p.value === v).toBe(true);
      else expect(!p.ok && p.rule).toBe('int_range');
    }), RUNS);
    expect([String(max), String(min), String(max + 1n), String(min - 1n), '1.0', '1.5', '1e2'].map((t) => { const p = parseInt64(t); return p.ok ? String(p.value) : p.rule; }))
      .toEqual([String(max), String(min), 'int_range', 'int_range', 'int_fractional', 'int_fractional', 'int_form']);
  });
});

describe('timestamps, dates, cutoffs', () => {
  const dateParts = fc.record({ y: fc.integer({ min: 1, max: 9999 }), m: fc.integer({ min: 1, max: 12 }), d: fc.integer({ min: 1, max: 31 }) });
  const oracleDays = (y: number, m: number, d: number): number | undefined => {
    const dt = new Date(0);
    dt.setUTCFullYear(y, m - 1, d);
    return dt.getUTCDate() === d && dt.getUTCMonth() === m - 1 ? dt.getTime() / 86_400_000 : undefined;
  };
  const p2 = (n: number) => String(n).padStart(2, '0');
  const p4 = (n: number) => String(n).padStart(4, '0');

  it('a date is a real calendar date in years 0001–9999 (including years below 100)', () => {
    fc.assert(fc.property(dateParts, ({ y, m, d }) => {
      const expected = oracleDays(y, m, d);
      expect(epochDays(y, m, d)).toBe(expected);
      const p = parseDate(`${p4(y)}-${p2(m)}-${p2(d)}`);
      if (expected === undefined) expect(!p.ok && p.rule).toBe('date_calendar');
      else expect(p.ok && p.value).toBe(expected);
    }), RUNS);
    // Python: (date(50, 3, 1) - date(1970, 1, 1)).days
    expect(parseDate('0050-03-01')).toEqual({ ok: true, value: -701_206 });
    expect(['0000-01-01', '2026-2-01', '2026-02-29', '2024-02-29'].map((t) => { const p = parseDate(t); return p.ok ? 'ok' : p.rule; }))
      .toEqual(['date_range', 'date_form', 'date_calendar', 'ok']);
  });

  it('a zoned timestamp is exact to the microsecond in UTC; without a zone it is rejected', () => {
    const ts = fc.record({
      date: dateParts.filter(({ y, m, d }) => oracleDays(y, m, d) !== undefined && y > 1 && y < 9999),
      h: fc.integer({ min: 0, max: 23 }), mi: fc.integer({ min: 0, max: 59 }), s: fc.integer({ min: 0, max: 59 }),
      frac: fc.option(digits(1, 6), { nil: undefined }),
      // Offsets span ±18:00 inclusive (ISO 8601 / RFC 3339); +18:01 is rejected (below).
      off: fc.option(fc.record({ sign: fc.constantFrom('+', '-'), minutes: fc.integer({ min: 0, max: 18 * 60 }) }).map(({ sign, minutes }) => ({ sign, oh: Math.floor(minutes / 60), om: minutes % 60 })), { nil: undefined }),
    });
    fc.assert(fc.property(ts, ({ date: { y, m, d }, h, mi, s, frac, off }) => {
      const wall = `${p4(y)}-${p2(m)}-${p2(d)}T${p2(h)}:${p2(mi)}:${p2(s)}${frac === undefined ? '' : `.${frac}`}`;
      const zone = off ? `${off.sign}${p2(off.oh)}:${p2(off.om)}` : 'Z';
      const offsetS = off ? (off.sign === '-' ? -1 : 1) * (off.oh * 3600 + off.om * 60) : 0;
      const expected = BigInt(oracleDays(y, m, d)!) * 86_400_000_000n + BigInt(h * 3600 + mi * 60 + s - offsetS) * 1_000_000n + BigInt((frac ?? '').padEnd(6, '0'));
      const p = parseTimestamp(`${wall}${zone}`);
      expect(p.ok && p.value).toBe(expected);
      if (p.ok) expect(parseTimestamp(formatMicros(p.value))).toEqual(p);
      expect(parseTimestamp(wall)).toMatchObject({ ok: false, rule: 'timestamp_without_zone' });
      expect(parseLocalTimestamp(wall)).toMatchObject({ ok: true });
      expect(parseLocalTimestamp(`${wall}${zone}`)).toMatchObject({ ok: false, rule: 'local_timestamp_with_zone' });
    }), RUNS);
  });

  it('a wall time finer than the microsecond and without zone is timestamp_without_zone (the zone named); with a zone it is timestamp_form', () => {
    expect(parseTimestamp('2026-11-02T10:00:00.1234567')).toMatchObject({ ok: false, rule: 'timestamp_without_zone', message: "'2026-11-02T10:00:00.1234567' has no zone (Z or ±HH:MM); a timestamp without zone is rejected (and its fraction is finer than the microsecond)" });
    expect(parseTimestamp('2026-11-02T10:00:00.123456789Z')).toMatchObject({ ok: false, rule: 'timestamp_form' });
    expect(parseTimestamp('2026-11-02T10:00:00.')).toMatchObject({ ok: false, rule: 'timestamp_form' });
    expect(parseLocalTimestamp('2026-11-02T10:00:00.1234567')).toMatchObject({ ok: false, rule: 'timestamp_form' });
  });

  it('an offset beyond ±18:00 or with minutes over 59 is timestamp_offset (issue 18: +18:01 was accepted)', () => {
    fc.assert(fc.property(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), (sign, oh, om) => {
      fc.pre(oh * 60 + om > 18 * 60 || om > 59);
      expect(parseTimestamp(`2026-11-02T10:00:00${sign}${p2(oh)}:${p2(om)}`)).toMatchObject({ ok: false, rule: 'timestamp_offset' });
    }), RUNS);
    expect(parseTimestamp('2026-11-02T10:00:00+18:00')).toEqual({ ok: true, value: 1_793_548_800_000_000n });
  });

  it('formatMicros writes the canonical UTC text', () => {
    expect(formatMicros(0n)).toBe('1970-01-01T00:00:00Z');
    expect(formatMicros(-1n)).toBe('1969-12-31T23:59:59.999999Z');
    expect(formatMicros(1_793_611_800_123_400n)).toBe('2026-11-02T09:30:00.123400Z');
  });

  it('cutoffs are HH:MM or HH:MM:SS within a day', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 70 }), fc.integer({ min: 0, max: 70 }), (h, m, s) => {
      const p = parseCutoff(`${p2(h)}:${p2(m)}:${p2(s)}`);
      if (h < 24 && m < 60 && s < 60) expect(p.ok && p.value).toBe(h * 3600 + m * 60 + s);
      else expect(!p.ok && p.rule).toBe('cutoff_range');
    }), RUNS);
    expect(parseCutoff('17:00')).toEqual({ ok: true, value: 61200 });
    expect(['7:00', '17:00:0', '17h00', '24:00'].map((t) => { const p = parseCutoff(t); return p.ok ? 'ok' : p.rule; })).toEqual(['cutoff_form', 'cutoff_form', 'cutoff_form', 'cutoff_range']);
  });
});

describe('ids and bools', () => {
  it('an id is kept byte for byte unless it is padded, holds | or a control character', () => {
    const safe = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => !/^\s|\s$|[|\u0000-\u001f\u007f]/.test(s));
    fc.assert(fc.property(safe, (s) => { expect(parseId(s)).toEqual({ ok: true, value: s }); }), RUNS);
    fc.assert(fc.property(safe, fc.constantFrom(' ', '\u00a0', '\u3000', '\ufeff'), fc.boolean(), (s, w, front) => {
      expect(parseId(front ? w + s : s + w)).toMatchObject({ ok: false, rule: 'id_whitespace' });
    }), RUNS);
    fc.assert(fc.property(safe, fc.constantFrom('|', '\u0000', '\n', '\r', '\t', '\u007f'), fc.nat(), (s, c, at) => {
      const k = at % (s.length + 1);
      expect(parseId(s.slice(0, k) + c + s.slice(k))).toMatchObject({ ok: false, rule: 'id_character' });
    }), RUNS);
  });

  it('bool is exactly true or false', () => {
    expect(['true', 'false', 'TRUE', 'True', '1', 't', ' true'].map((t) => { const p = parseBool(t); return p.ok ? p.value : p.rule; }))
      .toEqual([true, false, 'bool_form', 'bool_form', 'bool_form', 'bool_form', 'bool_form']);
  });
});
