/**
 * Property tests for the local-time mapping of pipeline/local-time.ts (CONTRACT §1 `*_local`
 * values, §2 statement cutoffs).
 *
 * The oracle is independent of the code under test: offsets come straight from
 * `Intl.DateTimeFormat` (not luxon), transitions are found by scanning those offsets hour by hour
 * over 2025-12-30..2028-01-02 and bisecting to the second, and the expected mapping of a wall time
 * near a transition is derived from the transition instant and the offsets on either side of it.
 *
 *   record rule (`mapRecordLocalTime`): gap → rejected, overlap → earlier instant.
 *   cutoff rule (`mapCutoff`):          gap → the transition instant, overlap → earlier instant.
 *
 * Every failing case prints its fast-check seed and path; rerun with `{ seed, path }` to replay.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ianaZone, mapCutoff, mapRecordLocalTime } from '../pipeline/contract/local-time.js';

const US_PER_S = 1_000_000n;
const US_PER_H = 3_600n * US_PER_S;
const US_PER_DAY = 24n * US_PER_H;

const ZONES = [
  'America/New_York', 'Europe/London', 'Europe/Berlin', 'Asia/Tokyo', 'Australia/Sydney', 'Australia/Lord_Howe',
  'Asia/Kolkata', 'Asia/Kathmandu', 'Pacific/Chatham', 'America/Sao_Paulo',
] as const;

// ---------------------------------------------------------------------------------------------
// Oracle: offsets from Intl, transitions by scanning.

const dtfs = new Map<string, Intl.DateTimeFormat>();
function dtf(zone: string): Intl.DateTimeFormat {
  let f = dtfs.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', era: 'short', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    dtfs.set(zone, f);
  }
  return f;
}

/** UTC offset of `zone` at the UTC instant `ms` (an integer of milliseconds), in whole seconds. */
function oracleOffsetS(zone: string, ms: number): number {
  const parts: Record<string, string> = {};
  for (const p of dtf(zone).formatToParts(new Date(ms))) parts[p.type] = p.value;
  let year = Number(parts.year);
  if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
  const d = new Date(0);
  d.setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day));
  d.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), 0);
  const floorSecondMs = Math.floor(ms / 1000) * 1000;
  return Math.round((d.getTime() - floorSecondMs) / 1000);
}

/** Offset in microseconds at the UTC instant `utcUs` (microseconds since the epoch). */
function oracleOffsetUs(zone: string, utcUs: bigint): bigint {
  const ms = utcUs >= 0n ? utcUs / 1000n : -((-utcUs + 999n) / 1000n);
  return BigInt(oracleOffsetS(zone, Number(ms))) * US_PER_S;
}

/** The local wall clock at `utcUs`, as microseconds of a wall time read as if it were UTC. */
const oracleWall = (zone: string, utcUs: bigint) => utcUs + oracleOffsetUs(zone, utcUs);

interface Transition {
  readonly zone: string;
  /** First UTC instant with the new offset, microseconds. */
  readonly atUs: bigint;
  readonly beforeUs: bigint;
  readonly afterUs: bigint;
}

/** Every offset change of `zone` between `fromMs` and `toMs` (UTC), to the second. */
function scanTransitions(zone: string, fromMs: number, toMs: number): Transition[] {
  const out: Transition[] = [];
  const step = 3_600_000;
  let prev = oracleOffsetS(zone, fromMs);
  for (let t = fromMs + step; t <= toMs; t += step) {
    const cur = oracleOffsetS(zone, t);
    if (cur === prev) continue;
    let lo = (t - step) / 1000, hi = t / 1000; // seconds: offset(lo) = prev, offset(hi) = cur
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (oracleOffsetS(zone, mid * 1000) === prev) lo = mid; else hi = mid;
    }
    out.push({ zone, atUs: BigInt(hi) * US_PER_S, beforeUs: BigInt(prev) * US_PER_S, afterUs: BigInt(cur) * US_PER_S });
    prev = cur;
  }
  return out;
}

const wallOfDate = (iso: string) => BigInt(Date.parse(`${iso}Z`)) * 1000n; // '2026-03-08T02:30:00' → wall µs
const isoOf = (us: bigint) => {
  const ms = us >= 0n ? us / 1000n : -((-us + 999n) / 1000n);
  const frac = ((us % US_PER_S) + US_PER_S) % US_PER_S;
  return `${new Date(Number(ms)).toISOString().slice(0, 19)}.${frac.toString().padStart(6, '0')}`;
};

/** Transitions whose local wall time (in the old offset) falls in 2026 or 2027. */
const TRANSITIONS: Transition[] = ZONES.flatMap((z) =>
  scanTransitions(z, Date.UTC(2025, 11, 30), Date.UTC(2028, 0, 2)).filter((t) => {
    const y = isoOf(t.atUs + t.beforeUs).slice(0, 4);
    return y === '2026' || y === '2027';
  }));

type Expected = { kind: 'unique'; utc: bigint } | { kind: 'gap'; transition: bigint } | { kind: 'overlap'; earlier: bigint; later: bigint };

/** What a wall time within a few hours of transition `t` must map to. */
function expectedNear(t: Transition, wall: bigint): Expected {
  const l1 = t.atUs + t.beforeUs; // wall clock reading at the transition, old offset
  const l2 = t.atUs + t.afterUs; //  wall clock reading at the transition, new offset
  if (t.afterUs > t.beforeUs) { // clocks jump forward: [l1, l2) does not exist
    if (wall < l1) return { kind: 'unique', utc: wall - t.beforeUs };
    if (wall < l2) return { kind: 'gap', transition: t.atUs };
    return { kind: 'unique', utc: wall - t.afterUs };
  }
  // clocks fall back: [l2, l1) occurs twice
  if (wall < l2) return { kind: 'unique', utc: wall - t.beforeUs };
  if (wall < l1) return { kind: 'overlap', earlier: wall - t.beforeUs, later: wall - t.afterUs };
  return { kind: 'unique', utc: wall - t.afterUs };
}

/** Checks both rules for one wall time against the oracle; returns nothing, throws on mismatch. */
function checkWall(t: Transition, wall: bigint): void {
  const zone = ianaZone(t.zone)!;
  const exp = expectedNear(t, wall);
  const rec = mapRecordLocalTime(zone, wall);
  const cut = mapCutoff(zone, wall);
  const ctx = `${t.zone} wall ${isoOf(wall)} (transition ${isoOf(t.atUs)}Z)`;
  // Deterministic: a second call gives the same answer.
  expect(mapRecordLocalTime(zone, wall), ctx).toEqual(rec);
  expect(mapCutoff(zone, wall), ctx).toEqual(cut);
  switch (exp.kind) {
    case 'unique':
      expect(rec, ctx).toEqual({ ok: true, utcMicros: exp.utc, ambiguous: false });
      expect(cut, ctx).toEqual({ utcMicros: exp.utc, rule: 'unique' });
      expect(oracleWall(t.zone, exp.utc), ctx).toBe(wall);
      break;
    case 'gap':
      expect(rec, ctx).toEqual({ ok: false, reason: 'gap' });
      expect(cut, ctx).toEqual({ utcMicros: exp.transition, rule: 'gap_moved_to_transition' });
      break;
    case 'overlap':
      expect(rec, ctx).toEqual({ ok: true, utcMicros: exp.earlier, ambiguous: true });
      expect(cut, ctx).toEqual({ utcMicros: exp.earlier, rule: 'overlap_earlier_instant' });
      expect(oracleWall(t.zone, exp.earlier), ctx).toBe(wall);
      expect(oracleWall(t.zone, exp.later), ctx).toBe(wall);
      break;
  }
}

// ---------------------------------------------------------------------------------------------

describe('transition enumeration (oracle sanity)', () => {
  it('finds exactly the DST transitions of 2026–2027 in each zone', () => {
    const count = Object.fromEntries(ZONES.map((z) => [z, TRANSITIONS.filter((t) => t.zone === z).length]));
    expect(count).toEqual({
      'America/New_York': 4, 'Europe/London': 4, 'Europe/Berlin': 4, 'Asia/Tokyo': 0, 'Australia/Sydney': 4,
      'Australia/Lord_Howe': 4, 'Asia/Kolkata': 0, 'Asia/Kathmandu': 0, 'Pacific/Chatham': 4, 'America/Sao_Paulo': 0,
    });
  });

  it('pins known transitions (instant, offset before → after)', () => {
    const show = (t: Transition) => `${t.zone} ${isoOf(t.atUs)} ${Number(t.beforeUs / US_PER_S) / 60}→${Number(t.afterUs / US_PER_S) / 60}`;
    const shown = TRANSITIONS.map(show);
    expect(shown).toContain('America/New_York 2026-03-08T07:00:00.000000 -300→-240');
    expect(shown).toContain('Europe/London 2026-10-25T01:00:00.000000 60→0');
    expect(shown).toContain('Australia/Lord_Howe 2026-10-03T15:30:00.000000 630→660'); // 30-minute gap
    expect(shown).toContain('Australia/Lord_Howe 2026-04-04T15:00:00.000000 660→630'); // 30-minute overlap
    expect(shown).toContain('Pacific/Chatham 2026-09-26T14:00:00.000000 765→825'); // 02:45 local → 03:45
    expect(shown).toContain('Australia/Sydney 2026-04-04T16:00:00.000000 660→600');
  });
});

describe('mapping near every transition of 2026–2027 matches the oracle', () => {
  for (const zone of ZONES) {
    const mine = TRANSITIONS.filter((t) => t.zone === zone);
    it(`${zone}: ${mine.length} transition(s), edges and random wall times to the microsecond`, () => {
      for (const t of mine) {
        const l1 = t.atUs + t.beforeUs, l2 = t.atUs + t.afterUs;
        const lo = l1 < l2 ? l1 : l2, hi = l1 < l2 ? l2 : l1;
        // Every edge of the gap or overlap, exactly and one microsecond either side.
        for (const edge of [lo - US_PER_S, lo - 1n, lo, lo + 1n, (lo + hi) / 2n, hi - 1n, hi, hi + 1n, hi + US_PER_S]) checkWall(t, edge);
        fc.assert(fc.property(
          fc.oneof(
            fc.bigInt({ min: -6n * US_PER_H, max: 6n * US_PER_H }), // anywhere around the transition
            fc.bigInt({ min: 0n, max: hi - lo - 1n }).map((d) => d + (lo - l1)), // inside the gap/overlap
          ),
          (d) => checkWall(t, l1 + d),
        ), { numRuns: 300 });
      }
    });
  }

  it('zones without a transition in 2026–2027 map every wall time uniquely at their fixed offset', () => {
    const fixed: Record<string, bigint> = {
      'Asia/Tokyo': 9n * US_PER_H, 'Asia/Kolkata': 5n * US_PER_H + 30n * 60n * US_PER_S, 'Asia/Kathmandu': 5n * US_PER_H + 45n * 60n * US_PER_S,
      'America/Sao_Paulo': -3n * US_PER_H,
    };
    const from = wallOfDate('2026-01-01T00:00:00'), to = wallOfDate('2028-01-01T00:00:00');
    fc.assert(fc.property(fc.constantFrom(...Object.keys(fixed)), fc.bigInt({ min: from, max: to - 1n }), (name, wall) => {
      const zone = ianaZone(name)!;
      expect(mapRecordLocalTime(zone, wall)).toEqual({ ok: true, utcMicros: wall - fixed[name], ambiguous: false });
      expect(mapCutoff(zone, wall)).toEqual({ utcMicros: wall - fixed[name], rule: 'unique' });
    }), { numRuns: 500 });
  });
});

describe('microseconds', () => {
  it('a record local time keeps its microseconds (no millisecond truncation)', () => {
    const from = wallOfDate('2026-01-01T00:00:00'), to = wallOfDate('2028-01-01T00:00:00');
    fc.assert(fc.property(fc.constantFrom(...ZONES), fc.bigInt({ min: from, max: to - 1n }), (name, wall) => {
      const m = mapRecordLocalTime(ianaZone(name)!, wall);
      fc.pre(m.ok);
      if (!m.ok) return;
      // Offsets are whole seconds, so the sub-second part is untouched.
      expect(((m.utcMicros % US_PER_S) + US_PER_S) % US_PER_S).toBe(((wall % US_PER_S) + US_PER_S) % US_PER_S);
      expect(oracleWall(name, m.utcMicros)).toBe(wall);
    }), { numRuns: 1000 });
  });

  it('pins microsecond examples on both sides of the London overlap', () => {
    const london = ianaZone('Europe/London')!;
    expect(mapRecordLocalTime(london, wallOfDate('2026-10-25T01:59:59') + 999_999n)).toEqual({ ok: true, utcMicros: wallOfDate('2026-10-25T00:59:59') + 999_999n, ambiguous: true });
    expect(mapRecordLocalTime(london, wallOfDate('2026-10-25T00:59:59') + 123_456n)).toEqual({ ok: true, utcMicros: wallOfDate('2026-10-24T23:59:59') + 123_456n, ambiguous: false });
    expect(mapRecordLocalTime(london, wallOfDate('2026-10-25T02:00:00') + 1n)).toEqual({ ok: true, utcMicros: wallOfDate('2026-10-25T02:00:00') + 1n, ambiguous: false });
  });
});

describe('consecutive business days tile UTC (statement intervals, CONTRACT §2)', () => {
  /** [cutoff on D−1, cutoff on D) mapped to UTC, exactly as the loader maps a statement. */
  const interval = (zone: string, day: bigint, cutoffS: bigint) => {
    const z = ianaZone(zone)!;
    return { start: mapCutoff(z, (day - 1n) * US_PER_DAY + cutoffS * US_PER_S).utcMicros, end: mapCutoff(z, day * US_PER_DAY + cutoffS * US_PER_S).utcMicros };
  };
  const DAY_2026_01_01 = BigInt(Date.UTC(2026, 0, 1) / 86_400_000), DAY_2027_12_31 = BigInt(Date.UTC(2027, 11, 31) / 86_400_000);
  const secondsOfDay = (wall: bigint) => ((wall % US_PER_DAY) + US_PER_DAY) % US_PER_DAY / US_PER_S;

  for (const zone of ZONES) {
    const mine = TRANSITIONS.filter((t) => t.zone === zone);
    // Cutoffs that fall inside a gap or an overlap (or on their edges) on a transition day.
    const special = mine.flatMap((t) => {
      const l1 = t.atUs + t.beforeUs, l2 = t.atUs + t.afterUs;
      const lo = l1 < l2 ? l1 : l2, hi = l1 < l2 ? l2 : l1;
      return [lo, (lo + hi) / 2n, hi - US_PER_S, hi].map((w) => ({ day: w / US_PER_DAY, cutoffS: secondsOfDay(w) }));
    });
    it(`${zone}: end of D = start of D+1, start < end, and the days partition UTC`, () => {
      const arbDay = fc.oneof(
        fc.bigInt({ min: DAY_2026_01_01, max: DAY_2027_12_31 }).map((day) => ({ day, cutoffS: null as bigint | null })),
        ...(special.length ? [fc.constantFrom(...special).chain((s) => fc.bigInt({ min: -1n, max: 1n }).map((k) => ({ day: s.day + k, cutoffS: s.cutoffS as bigint | null })))] : []),
      );
      fc.assert(fc.property(arbDay, fc.bigInt({ min: 0n, max: 86_399n }), fc.bigInt({ min: 0n, max: 2n * US_PER_DAY - 1n }), (pick, randomCutoff, probe) => {
        const cutoffS = pick.cutoffS ?? randomCutoff;
        const days = [pick.day - 1n, pick.day, pick.day + 1n, pick.day + 2n].map((d) => interval(zone, d, cutoffS));
        for (let i = 0; i < days.length; i++) {
          expect(days[i].start).toBeLessThan(days[i].end);
          // A business day lasts 24 h give or take the zone's DST shift (≤ 1 h here).
          expect(days[i].end - days[i].start).toBeGreaterThanOrEqual(23n * US_PER_H);
          expect(days[i].end - days[i].start).toBeLessThanOrEqual(25n * US_PER_H);
          if (i > 0) expect(days[i].start).toBe(days[i - 1].end);
        }
        // Any instant between the first start and the last end lies in exactly one business day.
        const t = days[0].start + (probe % (days[3].end - days[0].start));
        expect(days.filter((d) => d.start <= t && t < d.end)).toHaveLength(1);
      }), { numRuns: 300 });
    });
  }

  it('the cutoff mapping is monotone in the wall time (so intervals never cross)', () => {
    fc.assert(fc.property(fc.constantFrom(...TRANSITIONS), fc.bigInt({ min: -3n * US_PER_H, max: 3n * US_PER_H }), fc.bigInt({ min: 1n, max: 3n * US_PER_H }), (t, d, step) => {
      const z = ianaZone(t.zone)!;
      const w1 = t.atUs + t.beforeUs + d, w2 = w1 + step;
      const a = mapCutoff(z, w1), b = mapCutoff(z, w2);
      expect(a.utcMicros).toBeLessThanOrEqual(b.utcMicros);
      if (a.rule !== 'gap_moved_to_transition' || b.rule !== 'gap_moved_to_transition') expect(a.utcMicros).toBeLessThan(b.utcMicros);
    }), { numRuns: 1000 });
  });
});

describe('totality over every zone and a wide range of years', () => {
  const ALL = Intl.supportedValuesOf('timeZone').filter((z) => ianaZone(z) !== null);
  it('every wall time in every zone maps; the result satisfies the rule it reports', () => {
    const from = wallOfDate('1850-01-01T00:00:00'), to = wallOfDate('2100-01-01T00:00:00');
    fc.assert(fc.property(fc.constantFrom(...ALL), fc.bigInt({ min: from, max: to }), (name, wall) => {
      const zone = ianaZone(name)!;
      const cut = mapCutoff(zone, wall);
      const rec = mapRecordLocalTime(zone, wall);
      const at = oracleWall(name, cut.utcMicros);
      if (cut.rule === 'gap_moved_to_transition') {
        expect(rec).toEqual({ ok: false, reason: 'gap' });
        expect(oracleWall(name, cut.utcMicros - 1n)).toBeLessThan(wall); // just before: the old clock had not reached it
        expect(at).toBeGreaterThan(wall); //                                 at the transition: the new clock is past it
      } else {
        expect(at).toBe(wall);
        expect(rec).toEqual({ ok: true, utcMicros: cut.utcMicros, ambiguous: cut.rule === 'overlap_earlier_instant' });
        // An overlap is reported only where a later instant shows the same wall time too.
        if (cut.rule === 'overlap_earlier_instant') {
          const offsets = new Set<bigint>();
          for (let k = 1n; k <= 16n; k++) offsets.add(oracleOffsetUs(name, cut.utcMicros + k * US_PER_H / 4n));
          const later = [...offsets].map((o) => wall - o).filter((u) => u > cut.utcMicros && oracleWall(name, u) === wall);
          expect(later.length).toBeGreaterThan(0);
        }
      }
    }), { numRuns: 3000 });
  });

  it('every transition of a random zone and year (1850–2100) maps by the rules at its edges', () => {
    fc.assert(fc.property(fc.constantFrom(...ALL), fc.integer({ min: 1850, max: 2100 }), (name, year) => {
      // 6-hour scan steps: no zone changes offset twice within 6 hours.
      const found: Transition[] = [];
      let prev = oracleOffsetS(name, Date.UTC(year, 0, 1));
      for (let t = Date.UTC(year, 0, 1) + 21_600_000; t <= Date.UTC(year + 1, 0, 1); t += 21_600_000) {
        const cur = oracleOffsetS(name, t);
        if (cur !== prev) found.push(...scanTransitions(name, t - 21_600_000, t));
        prev = cur;
      }
      for (const t of found) {
        const l1 = t.atUs + t.beforeUs, l2 = t.atUs + t.afterUs;
        const lo = l1 < l2 ? l1 : l2, hi = l1 < l2 ? l2 : l1;
        for (const edge of [lo - US_PER_S, lo - 1n, lo, lo + 1n, (lo + hi) / 2n, hi - 1n, hi, hi + 1n, hi + US_PER_S]) checkWall(t, edge);
      }
    }), { numRuns: 150 });
  });

  it('maps historic local mean time (offsets with seconds) without failing', () => {
    const ny = ianaZone('America/New_York')!; // LMT −4:56:02 before 1883-11-18
    expect(mapCutoff(ny, wallOfDate('1850-01-01T00:00:00'))).toEqual({ utcMicros: wallOfDate('1850-01-01T04:56:02'), rule: 'unique' });
  });

  it('a whole skipped day (Pacific/Apia, 2011-12-30) moves to the transition', () => {
    const apia = ianaZone('Pacific/Apia')!;
    expect(mapCutoff(apia, wallOfDate('2011-12-30T12:00:00'))).toEqual({ utcMicros: wallOfDate('2011-12-30T10:00:00'), rule: 'gap_moved_to_transition' });
    expect(mapRecordLocalTime(apia, wallOfDate('2011-12-30T12:00:00'))).toEqual({ ok: false, reason: 'gap' });
  });
});
