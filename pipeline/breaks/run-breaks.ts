/**
 * What a run does to breaks (CONTRACT §5), planned before its manifest and written after it
 * (break-plan.ts). For each difference of a CLEAN or BREAKS control:
 *   - a difference the run marked TIMING (a configured timing rule matched its record time) is
 *     recorded as a TIMING observation and opens nothing, unless a run of an earlier window (one
 *     that ended before this run's window ends) already recorded it as TIMING: then it is still
 *     there in a later window, and it opens (or reopens) like any other difference;
 *   - otherwise it opens its break (OPENED), adds an observation to an active break (REOBSERVED),
 *     or reopens a VERIFIED or CLOSED break as OPEN (REOPENED).
 * NOT_READY and INCOMPLETE controls touch no break (their differences are PROVISIONAL).
 *
 * Every CORRECTED break of a control the run evaluated to CLEAN or BREAKS, whose window the run
 * covered, corrected before the run started, and not observed by the run, is VERIFIED by
 * `reconciler`. The pipeline's events (OPEN, REOPENED, VERIFIED) are proven by the run's manifest:
 * it lists their digests, and each is bound to it when written.
 */
import pLimit from 'p-limit';
import { slaSeconds, type Config } from '../config/config.js';
import type { ControlDefinition } from '../controls/definitions.js';
import type { ObjectStore } from '../store/object-store.js';
import type { Window } from '../contract/window.js';
import { formatScaled, parseTimestamp } from '../contract/values.js';
import { breakId } from './break-id.js';
import { BREAK_KEYS, FORMATS, payloadDigest, payloadOf } from './break-objects.js';
import { type HeadEntry, type PlannedObject } from './break-plan.js';
import { BreakStore, groupById, type BreakEvent, type BreakLog, type WindowText } from './break-store.js';
import { REOPENABLE_STATES, type BreakState, type Disposition } from './states.js';
import { RECONCILER, breakWindow, covers, currentCycle } from './transitions.js';

export { RECONCILER };

/** A break's head: the version of its newest event and that event's digest. */
export interface Head {
  readonly version: number;
  readonly sha256: string;
}

/** The event a run plans for a break: its version and state, payload digest, and the head it was planned on. */
export interface PlannedEvent {
  readonly version: number;
  readonly to_state: BreakState;
  readonly sha256: string;
  /** Digest of the event before it (null for a new break). */
  readonly base_sha256: string | null;
}

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
  /** The head after this run (null when the break has no event). */
  readonly head: Head | null;
  /** The event this run planned (OPEN or REOPENED), or null. */
  readonly event: PlannedEvent | null;
  /** Digest of this run's observation of the difference. */
  readonly observation_sha256: string;
}

/** A CORRECTED break the run verifies automatically. */
export interface VerifiedOutcome {
  readonly break_id: string;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly head: Head;
  readonly event: PlannedEvent;
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

/** How many break-store objects a run reads at once. */
const STORE_CONCURRENCY = 16;

/** Everything a run plans for breaks: outcomes (manifest `breaks`), automatic verifications, the objects to write. */
export interface BreakPlan {
  readonly outcomes: readonly BreakOutcome[];
  readonly verified: readonly VerifiedOutcome[];
  readonly objects: readonly PlannedObject[];
}

/** The run-wide facts a plan is made of. */
export interface PlanArgs {
  readonly runId: string;
  readonly window: Window;
  /** Definitions of the controls the run evaluated. */
  readonly controls: readonly ControlDefinition[];
  readonly results: readonly ResultLike[];
  readonly config: Config;
  /** The run's wall-clock start (automatic VERIFIED needs CORRECTED strictly before it). */
  readonly startedAt: Date;
  /** Wall-clock time of the plan: the time of the run's events and observations. */
  readonly now?: Date;
}

/** Plans the break objects of a run (see the module comment). Reads the store; writes nothing. */
export async function planBreaks(store: Pick<ObjectStore, 'get' | 'list'>, args: PlanArgs): Promise<BreakPlan> {
  const bs = new BreakStore(await listedOnce(store));
  const at = (args.now ?? new Date()).toISOString();
  const outcomes: BreakOutcome[] = [];
  const objects: PlannedObject[] = [];
  const limit = pLimit(STORE_CONCURRENCY);
  for (const r of args.results) {
    if (r.status !== 'CLEAN' && r.status !== 'BREAKS') continue;
    const control = args.controls.find((c) => c.control_id === r.control_id)!;
    const planned = await Promise.all(r.differences.map((d) => limit(() => planOne(bs, { ...args, at, control, result: r, d }))));
    // Loops, not push(...spread): a day can hold hundreds of thousands of differences.
    for (const p of planned) {
      outcomes.push(p.outcome);
      for (const o of p.objects) objects.push(o);
    }
  }
  const verified = await planVerified(bs, args, at);
  for (const v of verified) objects.push(v.object);
  return { outcomes, verified: verified.map((v) => v.outcome), objects };
}

type Difference = ResultLike['differences'][number];

/**
 * A read view of `store` whose listings under `breaks/` come from one listing of it, taken now:
 * the plan looks at every difference's break (its events, and for a TIMING difference its
 * observations) and at every break's head, and a listing per difference was most of the plan's
 * time at 10^5 differences (225,000 folder reads that find nothing, for a new break). Reads of
 * objects go to the store.
 */
async function listedOnce(store: Pick<ObjectStore, 'get' | 'list'>): Promise<Pick<ObjectStore, 'get' | 'list'>> {
  const all = await store.list('breaks/');
  const byId = groupById(all);
  return {
    get: (key) => store.get(key),
    list: async (prefix) => {
      if (prefix === 'breaks/') return [...all];
      const id = /^breaks\/([^/]+)\//.exec(prefix)?.[1];
      if (id === undefined) return store.list(prefix);
      return (byId.get(id) ?? []).filter((k) => k.startsWith(prefix)).sort();
    },
  };
}

async function planOne(bs: BreakStore, a: PlanArgs & { at: string; control: ControlDefinition; result: ResultLike; d: Difference }): Promise<{ outcome: BreakOutcome; objects: PlannedObject[] }> {
  const { d, control } = a;
  const id = breakId(control.control_id, d.kind, d.key);
  const w = { start: a.window.start, end: a.window.end };
  const log = await bs.readLog(id);
  const decision = await decide(bs, log, { id, d, window: w });
  const objects: PlannedObject[] = [];
  let event: PlannedEvent | null = null;
  let head: Head | null = log ? { version: log.version, sha256: log.head_sha256 } : null;
  if (decision.disposition === 'OPENED' || decision.disposition === 'REOPENED') {
    const body: BreakEvent = {
      format: FORMATS.event, break_id: id, version: (log?.version ?? 0) + 1, expected_version: log?.version ?? 0, previous_event_sha256: log?.head_sha256 ?? null,
      control_id: control.control_id, kind: d.kind, key: d.key, from_state: log?.state ?? null, to_state: 'OPEN', actor: RECONCILER, at: a.at,
      evidence: { detail: d.detail }, proof: 'manifest', window: w, record_time: d.record_time, run_id: a.runId,
    };
    const p = plannedEvent(body, log);
    objects.push(p.object);
    event = p.event;
    head = { version: body.version, sha256: p.event.sha256 };
  }
  const obs = payloadOf({
    format: FORMATS.observation, break_id: id, run_id: a.runId, window: w, observed_at: a.at, record_time: d.record_time,
    as_of: a.result.as_of ?? null, detail: d.detail, disposition: decision.disposition,
  });
  objects.push({ kind: 'observation', key: BREAK_KEYS.observation(id, a.runId), break_id: id, payload: obs, digest: payloadDigest(obs) });
  const asOf = microsOrNull(a.result.as_of ?? null);
  const ageUs = decision.first_record_us !== null && asOf !== null ? asOf - decision.first_record_us : null;
  const sla = slaSeconds(a.config, control, d.kind);
  return {
    objects,
    outcome: {
      break_id: id, control_id: control.control_id, kind: d.kind, key: d.key, disposition: decision.disposition,
      state: decision.state, version: decision.version,
      age_s: ageUs === null ? null : formatScaled(ageUs, 6), sla_s: sla,
      sla_breached: ageUs === null || sla === null ? null : ageUs > BigInt(sla) * 1_000_000n,
      head, event, observation_sha256: payloadDigest(obs),
    },
  };
}

function plannedEvent(body: BreakEvent, log: BreakLog | undefined): { object: PlannedObject; event: PlannedEvent } {
  const payload = payloadOf(body);
  const sha256 = payloadDigest(payload);
  return {
    object: { kind: 'event', key: BREAK_KEYS.event(body.break_id, body.version), break_id: body.break_id, payload, digest: sha256, base: log ? { version: log.version, sha256: log.head_sha256 } : null },
    event: { version: body.version, to_state: body.to_state, sha256, base_sha256: log?.head_sha256 ?? null },
  };
}

/** What the run does with one difference, the break's state and version after it, and the first record time. */
interface Decision {
  readonly disposition: Disposition;
  readonly state: BreakState | null;
  readonly version: number | null;
  readonly first_record_us: bigint | null;
}

async function decide(bs: BreakStore, log: BreakLog | undefined, a: { id: string; d: Difference; window: WindowText }): Promise<Decision> {
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
  if (!log) return { disposition: 'OPENED', state: 'OPEN', version: 1, first_record_us: first };
  if (REOPENABLE_STATES.includes(log.state)) return { disposition: 'REOPENED', state: 'OPEN', version: log.version + 1, first_record_us: first };
  return { disposition: 'REOBSERVED', state: log.state, version: log.version, first_record_us: first };
}

/**
 * Automatic verification (CONTRACT §5): for each control the run evaluated to CLEAN or BREAKS,
 * every CORRECTED break of that control is VERIFIED by `reconciler` when the run covered the
 * break's window, started strictly after CORRECTED, and does not list the break's (kind, key)
 * among its differences (TIMING ones included: still observed). The event's evidence names the
 * run; the manifest that proves it is its binding.
 */
async function planVerified(bs: BreakStore, args: PlanArgs, at: string): Promise<{ outcome: VerifiedOutcome; object: PlannedObject }[]> {
  const ran = new Map(args.results.filter((r) => r.status === 'CLEAN' || r.status === 'BREAKS').map((r) => [r.control_id, r]));
  if (ran.size === 0) return [];
  const started = args.startedAt.getTime();
  const runWindow = { start: args.window.start, end: args.window.end };
  const out: { outcome: VerifiedOutcome; object: PlannedObject }[] = [];
  // Each control's differences by kind and key: one lookup per candidate, not a scan of the differences.
  const observed = new Map([...ran].map(([id, r]) => [id, new Set(r.differences.map((d) => JSON.stringify([d.kind, d.key])))]));
  const candidates = (await bs.heads()).filter((h) => h.last.event.to_state === 'CORRECTED' && ran.has(h.last.event.control_id));
  for (const { break_id: id } of candidates) {
    const rec = await bs.readLog(id);
    if (!rec || rec.state !== 'CORRECTED') continue;
    const r = ran.get(rec.control_id)!;
    if (observed.get(rec.control_id)!.has(JSON.stringify([rec.kind, rec.key]))) continue;
    const corrected = [...currentCycle(rec)].reverse().find((e) => e.to_state === 'CORRECTED')!;
    if (!(Date.parse(corrected.at) < started) || corrected.actor === RECONCILER) continue;
    const w = breakWindow(rec);
    if (!w || !covers(runWindow, w)) continue;
    const body: BreakEvent = {
      format: FORMATS.event, break_id: rec.break_id, version: rec.version + 1, expected_version: rec.version, previous_event_sha256: rec.head_sha256,
      control_id: rec.control_id, kind: rec.kind, key: rec.key, from_state: 'CORRECTED', to_state: 'VERIFIED', actor: RECONCILER, at,
      evidence: { run_id: args.runId, note: 'automatic: a run that started after CORRECTED and covered the break window no longer observes the difference' },
      proof: 'manifest',
    };
    const p = plannedEvent(body, rec);
    out.push({ object: p.object, outcome: { break_id: rec.break_id, control_id: rec.control_id, kind: rec.kind, key: rec.key, head: { version: body.version, sha256: p.event.sha256 }, event: p.event } });
  }
  return out;
}

/**
 * The checkpoint entries of every break of `store` after the plan: its version and head digest (the
 * planned event's where the run plans one) and the digests of its proposals and withdrawals.
 */
export async function headEntries(store: Pick<ObjectStore, 'get' | 'list'>, plan: BreakPlan): Promise<HeadEntry[]> {
  const planned = new Map<string, Head>();
  for (const o of plan.outcomes) if (o.event) planned.set(o.break_id, o.head!);
  for (const v of plan.verified) planned.set(v.break_id, v.head);
  const out: HeadEntry[] = [];
  for (const h of await new BreakStore(store).heads()) {
    const head = planned.get(h.break_id) ?? { version: h.last.event.version, sha256: h.last.object.digest };
    planned.delete(h.break_id);
    out.push({ break_id: h.break_id, version: head.version, sha256: head.sha256, proposals: h.proposals });
  }
  // Breaks this run opens.
  for (const [id, head] of planned) out.push({ break_id: id, version: head.version, sha256: head.sha256, proposals: [] });
  return out.sort((a, b) => (a.break_id < b.break_id ? -1 : 1));
}
