/**
 * What a run does to breaks (CONTRACT §5). For each difference of a CLEAN or BREAKS control:
 *   - a difference the run marked TIMING (a configured timing rule matched its record time) is
 *     recorded as a TIMING observation and opens nothing, unless a run of an earlier window (one
 *     that ended before this run's window ends) already recorded it as TIMING: then it is still
 *     there in a later window, and it opens (or reopens) like any other difference;
 *   - otherwise it opens its break (OPENED), adds an observation to an active break (REOBSERVED),
 *     or reopens a VERIFIED or CLOSED break as OPEN (REOPENED).
 * NOT_READY and INCOMPLETE controls touch no break (their differences are PROVISIONAL).
 *
 * After the manifest is published, every CORRECTED break of a control the run evaluated to CLEAN
 * or BREAKS, whose window the run covered, corrected before the run started, and not observed by
 * the run, is VERIFIED by `reconciler` with the run id and manifest digest as proof.
 */
import pLimit from 'p-limit';
import { slaSeconds, type Config } from '../config/config.js';
import type { ControlDefinition } from '../controls/definitions.js';
import { ConcurrencyError } from '../core/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { Window } from '../contract/window.js';
import { formatScaled, parseTimestamp } from '../contract/values.js';
import { breakId } from './break-id.js';
import { BreakStore, type BreakEvent, type BreakLog, type WindowText } from './break-store.js';
import { REOPENABLE_STATES, type BreakState, type Disposition } from './states.js';
import { RECONCILER, breakWindow, covers, currentCycle } from './transitions.js';

export { RECONCILER };

/** The break a difference maps to and what the run did with it. */
export interface BreakOutcome {
  readonly break_id: string;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly disposition: Disposition;
  /** The break's state and version after this run (null for a TIMING difference that opened nothing). */
  readonly state: BreakState | null;
  readonly version: number | null;
  /** Age as of this run's as-of (CONTRACT §5): exact seconds text; null when unknown. */
  readonly age_s: string | null;
  readonly sla_s: number | null;
  /** age > SLA strictly; null when either is unknown. */
  readonly sla_breached: boolean | null;
}

/** The part of a control result this module reads (run.ts's ControlResult fits). */
interface ResultLike {
  readonly control_id: string;
  readonly status: string;
  /** The control's as-of (CONTRACT §3), recorded in each observation as the clock of break ages. */
  readonly as_of?: string | null;
  readonly differences: readonly { kind: string; key: string; detail: string; record_time: string | null; disposition: Disposition }[];
}

const microsOrNull = (ts: string | null): bigint | null => {
  if (!ts) return null;
  const p = parseTimestamp(ts);
  return p.ok ? p.value : null;
};

const endMicros = (w: WindowText): bigint => {
  const p = parseTimestamp(w.end);
  if (!p.ok) throw new Error(`bad window end ${w.end}`);
  return p.value;
};

/**
 * Opens, reobserves or reopens the breaks of one control's differences and records an observation
 * of each (with the control's as-of); returns their outcomes with state, version, age as of this
 * run and SLA (none for NOT_READY/INCOMPLETE). A concurrent writer of the same
 * break (another run) is absorbed by re-reading, up to three times; throws ConcurrencyError after.
 */
export async function recordBreaks(
  store: ObjectStore,
  args: { runId: string; window: Window; control: ControlDefinition; result: ResultLike; config: Config },
): Promise<BreakOutcome[]> {
  const { runId, window, control, result } = args;
  if (result.status !== 'CLEAN' && result.status !== 'BREAKS') return [];
  const bs = new BreakStore(store);
  const w = { start: window.start, end: window.end };
  const out: BreakOutcome[] = [];
  const asOf = microsOrNull(result.as_of ?? null);
  // Differences of one control name distinct breaks, so their store I/O can overlap (bounded).
  const limit = pLimit(STORE_CONCURRENCY);
  const outcomes = await Promise.all(result.differences.map((d) => limit(() => recordOne(d))));
  return out.concat(outcomes);

  async function recordOne(d: ResultLike['differences'][number]): Promise<BreakOutcome> {
    const id = breakId(control.control_id, d.kind, d.key);
    let decision: Decision;
    for (let attempt = 0; ; attempt++) {
      const log = await bs.readLog(id);
      try {
        decision = await decide(bs, log, { id, runId, control, d, window: w });
        break;
      } catch (e) {
        if (e instanceof ConcurrencyError && attempt < 3) continue; // another run appended first: re-read
        throw e;
      }
    }
    await bs.observe({
      break_id: id, run_id: runId, window: w, observed_at: new Date().toISOString(), record_time: d.record_time,
      as_of: result.as_of ?? null, detail: d.detail, disposition: decision.disposition,
    });
    const ageUs = decision.first_record_us !== null && asOf !== null ? asOf - decision.first_record_us : null;
    const sla = slaSeconds(args.config, control, d.kind);
    return {
      break_id: id, control_id: control.control_id, kind: d.kind, key: d.key, disposition: decision.disposition,
      state: decision.state, version: decision.version,
      age_s: ageUs === null ? null : formatScaled(ageUs, 6), sla_s: sla,
      sla_breached: ageUs === null || sla === null ? null : ageUs > BigInt(sla) * 1_000_000n,
    };
  }
}

/** How many break-store objects a run reads or writes at once. */
const STORE_CONCURRENCY = 16;

/** What the run did with one difference, the break's state and version after it, and the first record time. */
interface Decision {
  readonly disposition: Disposition;
  readonly state: BreakState | null;
  readonly version: number | null;
  readonly first_record_us: bigint | null;
}

async function decide(
  bs: BreakStore,
  log: BreakLog | undefined,
  a: { id: string; runId: string; control: ControlDefinition; d: ResultLike['differences'][number]; window: WindowText },
): Promise<Decision> {
  // The first record time: the opening event's, or (before any) the earliest TIMING observation's, or this one's.
  let first = microsOrNull(log?.events[0].record_time ?? null);
  if (a.d.disposition === 'TIMING') {
    const thisEnd = endMicros(a.window);
    const timing = (await bs.observations(a.id)).filter((o) => o.disposition === 'TIMING');
    first ??= microsOrNull(timing[0]?.record_time ?? null);
    first ??= microsOrNull(a.d.record_time);
    if (!timing.some((o) => endMicros(o.window) < thisEnd)) return { disposition: 'TIMING', state: log?.state ?? null, version: log?.version ?? null, first_record_us: first };
  }
  first ??= microsOrNull(a.d.record_time);
  const open = (from: BreakLog | undefined) => bs.append({
    break_id: a.id, version: (from?.version ?? 0) + 1, expected_version: from?.version ?? 0,
    control_id: a.control.control_id, kind: a.d.kind, key: a.d.key,
    from_state: from?.state ?? null, to_state: 'OPEN', actor: RECONCILER, at: new Date().toISOString(),
    evidence: { detail: a.d.detail }, window: a.window, record_time: a.d.record_time, run_id: a.runId,
  });
  if (!log) { await open(undefined); return { disposition: 'OPENED', state: 'OPEN', version: 1, first_record_us: first }; }
  if (REOPENABLE_STATES.includes(log.state)) { await open(log); return { disposition: 'REOPENED', state: 'OPEN', version: log.version + 1, first_record_us: first }; }
  return { disposition: 'REOBSERVED', state: log.state, version: log.version, first_record_us: first };
}

/**
 * Automatic verification (CONTRACT §5), called after the run's manifest is published. For each
 * control the run evaluated to CLEAN or BREAKS, every CORRECTED break of that control is VERIFIED
 * by `reconciler` when the run covered the break's window, started strictly after CORRECTED, and
 * does not list the break's (kind, key) among its differences (TIMING ones included: still
 * observed). The event's evidence is the run id and the manifest's SHA-256 (and key when given).
 * A break a person moved meanwhile is left alone. Returns the ids verified.
 */
export async function verifyCorrectedBreaks(
  store: ObjectStore,
  args: {
    runId: string; window: Window; controls: readonly ControlDefinition[]; results: readonly ResultLike[];
    manifestSha256: string; startedAt: string; manifestKey?: string;
  },
): Promise<string[]> {
  const bs = new BreakStore(store);
  const verified: string[] = [];
  const ran = new Map(args.results.filter((r) => r.status === 'CLEAN' || r.status === 'BREAKS').map((r) => [r.control_id, r]));
  if (ran.size === 0) return verified;
  const started = Date.parse(args.startedAt);
  const runWindow = { start: args.window.start, end: args.window.end };
  const candidates = (await bs.lastEvents()).filter((e: BreakEvent) => e.to_state === 'CORRECTED' && ran.has(e.control_id));
  for (const last of candidates) {
    const rec = await bs.readLog(last.break_id);
    if (!rec || rec.state !== 'CORRECTED') continue;
    const r = ran.get(rec.control_id)!;
    if (r.differences.some((d) => d.kind === rec.kind && d.key === rec.key)) continue;
    const corrected = [...currentCycle(rec)].reverse().find((e) => e.to_state === 'CORRECTED')!;
    if (!(Date.parse(corrected.at) < started) || corrected.actor === RECONCILER) continue;
    const w = breakWindow(rec);
    if (!w || !covers(runWindow, w)) continue;
    try {
      await bs.append({
        break_id: rec.break_id, version: rec.version + 1, expected_version: rec.version, control_id: rec.control_id, kind: rec.kind, key: rec.key,
        from_state: 'CORRECTED', to_state: 'VERIFIED', actor: RECONCILER, at: new Date().toISOString(),
        evidence: {
          run_id: args.runId, manifest_sha256: args.manifestSha256, ...(args.manifestKey ? { manifest_key: args.manifestKey } : {}),
          note: 'automatic: a run that started after CORRECTED and covered the break window no longer observes the difference',
        },
      });
      verified.push(rec.break_id);
    } catch (e) {
      if (!(e instanceof ConcurrencyError)) throw e;
    }
  }
  return verified;
}
