/**
 * The append-only break store (CONTRACT §5). Each break has a log of lifecycle events, one
 * write-once object per version (`breaks/<id>/events/000001.json`, …), so that two writers
 * expecting the same version cannot both land: the second write of a version fails and maps to a
 * lost transition (ConcurrencyError 'version', exit 6). Observations by runs live beside the log
 * (`breaks/<id>/observations/<run_id>.json`) and never change the version. The current state is
 * derived by replaying the log; nothing is edited in place.
 *
 * A difference recorded only as TIMING has observations but no events: it is not a break (yet),
 * so `read` returns undefined for it and `ids`/`readAll` leave it out.
 */
import pLimit from 'p-limit';
import type { ObjectStore } from '../store/object-store.js';
import { AlreadyExistsError } from '../store/object-store.js';
import { canonicalJson } from '../core/canonical.js';
import { ConcurrencyError, InternalError } from '../core/errors.js';
import type { BreakState, Disposition } from './states.js';

/** A UTC half-open window `[start, end)` as ISO texts (CONTRACT §3). */
export interface WindowText {
  readonly start: string;
  readonly end: string;
}

/**
 * One lifecycle event. `version` starts at 1 (OPEN) and grows by one per event; `expected_version`
 * is the version the writer saw (0 for the first OPEN). `evidence` holds the fields the transition
 * was made with (owner, classification, approver, note, evidence_ref, reason, root_cause,
 * prevention) and, for VERIFIED, the proving run (`run_id`, `manifest_key`, `manifest_sha256`).
 */
export interface BreakEvent {
  readonly break_id: string;
  readonly version: number;
  readonly expected_version: number;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly from_state: BreakState | null;
  readonly to_state: BreakState;
  readonly actor: string;
  /** Wall-clock time the event was recorded, ISO-8601 UTC (milliseconds). */
  readonly at: string;
  readonly evidence: Readonly<Record<string, string | null>>;
  /** Set on OPEN events: the window and record time of the observation that opened it. */
  readonly window?: WindowText;
  readonly record_time?: string | null;
  /** Set on OPEN events written by a run: the run that opened or reopened the break. */
  readonly run_id?: string;
}

/** One observation of a break's difference by a run (also TIMING ones, before any event exists). */
export interface BreakObservation {
  readonly break_id: string;
  readonly run_id: string;
  readonly window: WindowText;
  /** Wall-clock time the run recorded it, ISO-8601 UTC. */
  readonly observed_at: string;
  /** The window column of the record the key names (CONTRACT §5), or null when the difference names none. */
  readonly record_time: string | null;
  /**
   * The control's as-of in that run (smallest watermark of the datasets it reads, CONTRACT §3):
   * the clock ages are measured on. Absent in observations written before this field existed.
   */
  readonly as_of?: string | null;
  readonly detail: string;
  readonly disposition: Disposition;
}

/** A break's identity, current state and version, and its lifecycle log (no observations). */
export interface BreakLog {
  readonly break_id: string;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly state: BreakState;
  readonly version: number;
  /** Every lifecycle event, version 1 first. */
  readonly events: readonly BreakEvent[];
}

/** A break as derived from its log, with every observation: the full history. */
export interface BreakRecord extends BreakLog {
  /** Every observation, oldest `observed_at` first. */
  readonly observations: readonly BreakObservation[];
}

const pad = (n: number) => String(n).padStart(6, '0');

function byObservedAt(a: BreakObservation, b: BreakObservation): number {
  if (a.observed_at !== b.observed_at) return a.observed_at < b.observed_at ? -1 : 1;
  return a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0;
}

/** Reads and appends break logs in an ObjectStore. */
export class BreakStore {
  constructor(private readonly store: ObjectStore) {}

  private async json<T>(key: string): Promise<T> {
    const body = await this.store.get(key);
    if (!body) throw new InternalError(`break store object ${key} was listed but cannot be read`);
    return JSON.parse(body.toString('utf8')) as T;
  }

  private async build(breakId: string, keys: readonly string[], withObservations = true): Promise<BreakRecord | undefined> {
    const eventKeys = keys.filter((k) => k.startsWith(`breaks/${breakId}/events/`) && k.endsWith('.json')).sort();
    if (eventKeys.length === 0) return undefined;
    const events: BreakEvent[] = await Promise.all(eventKeys.map((k) => this.json<BreakEvent>(k)));
    events.forEach((e, i) => {
      if (e.version !== i + 1) throw new InternalError(`break ${breakId}: event ${eventKeys[i]} holds version ${e.version}, expected ${i + 1}; the log has a gap`);
    });
    const observations: BreakObservation[] = withObservations
      ? await Promise.all(keys.filter((x) => x.startsWith(`breaks/${breakId}/observations/`) && x.endsWith('.json')).map((k) => this.json<BreakObservation>(k)))
      : [];
    observations.sort(byObservedAt);
    const last = events[events.length - 1];
    return { break_id: breakId, control_id: events[0].control_id, kind: events[0].kind, key: events[0].key, state: last.to_state, version: last.version, events, observations };
  }

  /** The break with its full log and observations, or undefined when it was never opened. */
  async read(breakId: string): Promise<BreakRecord | undefined> {
    return this.build(breakId, await this.store.list(`breaks/${breakId}/`));
  }

  /**
   * The break's log without its observations (cheaper: a run reads it once per difference, and
   * observations accumulate with every run), or undefined when it was never opened.
   */
  async readLog(breakId: string): Promise<BreakLog | undefined> {
    const keys = await this.store.list(`breaks/${breakId}/events/`);
    const rec = await this.build(breakId, keys, false);
    if (!rec) return undefined;
    const { observations: _ignored, ...log } = rec;
    void _ignored;
    return log;
  }

  /** Every break of the store with its full history, sorted by break id (one listing, then reads). */
  async readAll(): Promise<BreakRecord[]> {
    const byId = groupById(await this.store.list('breaks/'));
    const limit = pLimit(16);
    const recs = await Promise.all([...byId.keys()].sort().map((id) => limit(() => this.build(id, byId.get(id)!))));
    return recs.filter((r): r is BreakRecord => r !== undefined);
  }

  /**
   * The last event of every break (one listing, one read per break): enough to find breaks in a
   * given state without replaying every history. Sorted by break id.
   */
  async lastEvents(): Promise<BreakEvent[]> {
    const byId = groupById(await this.store.list('breaks/'));
    const out: BreakEvent[] = [];
    for (const id of [...byId.keys()].sort()) {
      const events = byId.get(id)!.filter((k) => k.includes('/events/') && k.endsWith('.json')).sort();
      if (events.length) out.push(await this.json<BreakEvent>(events[events.length - 1]));
    }
    return out;
  }

  /** Observations of a break (also those recorded as TIMING before any event), oldest first. */
  async observations(breakId: string): Promise<BreakObservation[]> {
    const keys = (await this.store.list(`breaks/${breakId}/observations/`)).filter((k) => k.endsWith('.json'));
    const out: BreakObservation[] = [];
    for (const k of keys) out.push(await this.json<BreakObservation>(k));
    return out.sort(byObservedAt);
  }

  /** Ids of every break in the store (with at least one event), sorted. */
  async ids(): Promise<string[]> {
    const byId = groupById(await this.store.list('breaks/'));
    return [...byId].filter(([, keys]) => keys.some((k) => k.includes('/events/'))).map(([id]) => id).sort();
  }

  /**
   * Appends the event of version `expected_version + 1` with a write-once put. Throws
   * ConcurrencyError('version') (exit 6) when that version already exists: another transition
   * landed first. Throws InternalError when the event's version is not expected_version + 1.
   */
  async append(event: BreakEvent): Promise<void> {
    if (event.version !== event.expected_version + 1) throw new InternalError('event version must be expected_version + 1');
    try {
      await this.store.putOnce(`breaks/${event.break_id}/events/${pad(event.version)}.json`, canonicalJson(event));
    } catch (e) {
      if (e instanceof AlreadyExistsError) throw new ConcurrencyError(`break ${event.break_id}: version ${event.version} already exists; expected version ${event.expected_version} is stale`, 'version');
      throw e;
    }
  }

  /** Records an observation (write-once per break and run). A repeat for the same run is ignored. */
  async observe(obs: BreakObservation): Promise<void> {
    try {
      await this.store.putOnce(`breaks/${obs.break_id}/observations/${obs.run_id}.json`, canonicalJson(obs));
    } catch (e) {
      if (!(e instanceof AlreadyExistsError)) throw e;
    }
  }
}

function groupById(keys: readonly string[]): Map<string, string[]> {
  const byId = new Map<string, string[]>();
  for (const k of keys) {
    const parts = k.split('/');
    if (parts.length < 4 || parts[0] !== 'breaks') continue;
    const list = byId.get(parts[1]) ?? [];
    list.push(k);
    byId.set(parts[1], list);
  }
  return byId;
}
