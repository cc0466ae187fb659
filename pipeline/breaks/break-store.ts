/**
 * The append-only break store (CONTRACT §5). Each break has a log of lifecycle events, one
 * write-once object per version (`breaks/<id>/events/000001.json`, …), so that two writers
 * expecting the same version cannot both land: the second write of a version fails and maps to a
 * lost transition (exit 6). Observations by runs live beside the log
 * (`breaks/<id>/observations/<run_id>.json`) and never change the version. The current state is
 * derived by replaying the log; nothing is edited in place.
 */
import type { ObjectStore } from '../store/object-store.js';
import { AlreadyExistsError } from '../store/object-store.js';
import { canonicalJson } from '../canonical.js';
import { ConcurrencyError } from '../errors.js';
import type { BreakState, Disposition } from './states.js';

/** One lifecycle event. `version` starts at 1 (OPEN) and grows by one per event. */
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
  /** Wall-clock time the event was recorded, ISO-8601 UTC. */
  readonly at: string;
  readonly evidence: Readonly<Record<string, string | null>>;
  /** Set on OPEN events: the window and record time of the observation that opened it. */
  readonly window?: { readonly start: string; readonly end: string };
  readonly record_time?: string | null;
}

/** One observation of a break's difference by a run. */
export interface BreakObservation {
  readonly break_id: string;
  readonly run_id: string;
  readonly window: { readonly start: string; readonly end: string };
  readonly observed_at: string;
  readonly record_time: string | null;
  readonly detail: string;
  readonly disposition: Disposition;
}

/** A break as derived from its log. */
export interface BreakRecord {
  readonly break_id: string;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly state: BreakState;
  readonly version: number;
  readonly events: readonly BreakEvent[];
  readonly observations: readonly BreakObservation[];
}

const pad = (n: number) => String(n).padStart(6, '0');

/** Reads and appends break logs in an ObjectStore. */
export class BreakStore {
  constructor(private readonly store: ObjectStore) {}

  /** The break with its full log and observations, or undefined when it was never opened. */
  async read(breakId: string): Promise<BreakRecord | undefined> {
    const keys = await this.store.list(`breaks/${breakId}`);
    const eventKeys = keys.filter((k) => k.includes('/events/')).sort();
    if (eventKeys.length === 0) return undefined;
    const events: BreakEvent[] = [];
    for (const k of eventKeys) events.push(JSON.parse((await this.store.get(k))!.toString('utf8')) as BreakEvent);
    const observations: BreakObservation[] = [];
    for (const k of keys.filter((x) => x.includes('/observations/'))) observations.push(JSON.parse((await this.store.get(k))!.toString('utf8')) as BreakObservation);
    observations.sort((a, b) => (a.observed_at < b.observed_at ? -1 : a.observed_at > b.observed_at ? 1 : a.run_id < b.run_id ? -1 : 1));
    const last = events[events.length - 1];
    return { break_id: breakId, control_id: events[0].control_id, kind: events[0].kind, key: events[0].key, state: last.to_state, version: last.version, events, observations };
  }

  /** Observations of a break (also those recorded as TIMING before any event), oldest first. */
  async observations(breakId: string): Promise<BreakObservation[]> {
    const keys = (await this.store.list(`breaks/${breakId}/observations`)).sort();
    const out: BreakObservation[] = [];
    for (const k of keys) out.push(JSON.parse((await this.store.get(k))!.toString('utf8')) as BreakObservation);
    return out;
  }

  /** Ids of every break in the store, sorted. */
  async ids(): Promise<string[]> {
    const keys = await this.store.list('breaks');
    return [...new Set(keys.filter((k) => k.includes('/events/')).map((k) => k.split('/')[1]))].sort();
  }

  /**
   * Appends the event of version `expected_version + 1`. Throws ConcurrencyError('version') (exit 6)
   * when that version already exists: another transition landed first.
   */
  async append(event: BreakEvent): Promise<void> {
    if (event.version !== event.expected_version + 1) throw new Error('event version must be expected_version + 1');
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
