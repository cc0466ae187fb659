/**
 * The append-only break store (CONTRACT §5). Each break has a log of lifecycle events, one
 * write-once object per version (`breaks/<id>/events/000001.json`, …), so that two writers
 * expecting the same version cannot both land: the second write of a version fails and maps to a
 * lost transition (ConcurrencyError 'version', exit 6). Observations by runs live beside the log
 * (`breaks/<id>/observations/<run_id>.json`) and never change the version; proposals waiting for
 * a countersignature, and their withdrawals, under `breaks/<id>/proposals/`. The current state is
 * derived by replaying the log; nothing is edited in place. Objects are break-objects.ts's (signed
 * payloads, or legacy plain JSON written before signing); each event's payload names the digest
 * of the event before it, so the log is a hash chain.
 *
 * A difference recorded only as TIMING has observations but no events: it is not a break (yet),
 * so `read` returns undefined for it and `ids`/`readAll` leave it out.
 */
import pLimit from 'p-limit';
import type { ObjectStore } from '../store/object-store.js';
import { AlreadyExistsError } from '../store/object-store.js';
import { ConcurrencyError, InternalError, StoreError } from '../core/errors.js';
import type { SignatureRecord } from '../signing/signatures.js';
import { BREAK_KEYS, decodeObject, encodeObject, keyKind, ObjectFormatError, type BreakObject, type DecodedObject, type ManifestBinding } from './break-objects.js';
import type { BreakState, Disposition } from './states.js';

/** A UTC half-open window `[start, end)` as ISO texts (CONTRACT §3). */
export interface WindowText {
  readonly start: string;
  readonly end: string;
}

/**
 * What vouches for an event: the signatures of the people who made it (`signed`), nothing because
 * the configuration says so (`unsigned`), or the manifest of the run that made it (`manifest`).
 * Absent in legacy events.
 */
export type EventProof = 'signed' | 'unsigned' | 'manifest';

/**
 * One lifecycle event. `version` starts at 1 (OPEN) and grows by one per event; `expected_version`
 * is the version the writer saw (0 for the first OPEN). `evidence` holds the fields the transition
 * was made with (owner, classification, approver, note, evidence_ref, reason, root_cause,
 * prevention) and, for VERIFIED, the proving run (`run_id`, and `manifest_key`, `manifest_sha256`
 * of the manifest that proves it: for a run's own events these come from the binding).
 */
export interface BreakEvent {
  /** `reckon.break-event/2`; absent in legacy events. */
  readonly format?: string;
  readonly break_id: string;
  readonly version: number;
  readonly expected_version: number;
  /** SHA-256 of the payload of the event before (legacy: of its file), null at version 1; absent in legacy events. */
  readonly previous_event_sha256?: string | null;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly from_state: BreakState | null;
  readonly to_state: BreakState;
  readonly actor: string;
  /** Wall-clock time the event was made (for a countersigned one: proposed), ISO-8601 UTC (milliseconds). */
  readonly at: string;
  readonly evidence: Readonly<Record<string, string | null>>;
  readonly proof?: EventProof;
  /** True when the transition needs the approver's countersignature (maker-checker). */
  readonly dual_control?: boolean;
  /** SHA-256 of the configuration the person's command ran with (roles are judged there). */
  readonly config_sha256?: string | null;
  /** Set on OPEN events: the window and record time of the observation that opened it. */
  readonly window?: WindowText;
  readonly record_time?: string | null;
  /** Set on OPEN events written by a run: the run that opened or reopened the break. */
  readonly run_id?: string;
}

/** One observation of a break's difference by a run (also TIMING ones, before any event exists). */
export interface BreakObservation {
  readonly format?: string;
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
  /** The manifest of the observing run (from the binding); absent in legacy observations. */
  readonly manifest_key?: string;
  readonly manifest_sha256?: string;
}

/** An event as stored: the event, and the object it was read from (digest, signatures, binding). */
export interface StoredEvent {
  readonly event: BreakEvent;
  readonly object: DecodedObject;
}

/** A proposal waiting for (or given) its countersignature, with its withdrawal when there is one. */
export interface StoredProposal {
  /** The event the proposal would land as. */
  readonly event: BreakEvent;
  readonly object: DecodedObject;
  readonly withdrawal: { readonly actor: string; readonly at: string; readonly object: DecodedObject } | null;
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
  /** The same events as stored. */
  readonly stored: readonly StoredEvent[];
  /** Digest of the newest event: what the next event's `previous_event_sha256` must name. */
  readonly head_sha256: string;
}

/** A break as derived from its log, with every observation and proposal: the full history. */
export interface BreakRecord extends BreakLog {
  /** Every observation, oldest `observed_at` first. */
  readonly observations: readonly BreakObservation[];
  /** Every proposal, by version then key. */
  readonly proposals: readonly StoredProposal[];
}

function byObservedAt(a: BreakObservation, b: BreakObservation): number {
  if (a.observed_at !== b.observed_at) return a.observed_at < b.observed_at ? -1 : 1;
  return a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0;
}

/** The event of a stored object: its payload, with a run's binding shown among the evidence. */
export function eventOf(o: DecodedObject): BreakEvent {
  const e = o.body as unknown as BreakEvent;
  if (!o.binding) return e;
  return { ...e, evidence: { ...e.evidence, manifest_key: o.binding.manifest_key, manifest_sha256: o.binding.manifest_sha256 } };
}

/** The observation of a stored object, with its run's manifest from the binding. */
export function observationOf(o: DecodedObject): BreakObservation {
  const b = o.body as unknown as BreakObservation;
  return o.binding ? { ...b, manifest_key: o.binding.manifest_key, manifest_sha256: o.binding.manifest_sha256 } : b;
}

/**
 * What a BreakStore reads: an ObjectStore, or anything that reads like one. `decoded`, when
 * present, gives an object already decoded (a run's planned objects, break-plan.ts overlay), so
 * that it is not encoded to bytes only to be parsed and hashed again; undefined sends the read
 * to `get`.
 */
export type BreakSource = Pick<ObjectStore, 'get' | 'list'> & Partial<Pick<ObjectStore, 'putOnce' | 'location'>> & {
  readonly decoded?: (key: string) => DecodedObject | undefined;
};

/** Reads and appends break logs in an ObjectStore (or anything that reads like one). */
export class BreakStore {
  constructor(private readonly store: BreakSource) {}

  /**
   * Reads and decodes one object. Throws StoreError('corrupt_object') naming it when it is not a
   * break object (a truncated or edited file): the log cannot be replayed.
   */
  private async object(key: string): Promise<DecodedObject> {
    const known = this.store.decoded?.(key);
    if (known) return known;
    const body = await this.store.get(key);
    if (!body) throw new InternalError(`break store object ${key} was listed but cannot be read`);
    try { return decodeObject(key, body); } catch (e) {
      if (e instanceof ObjectFormatError) throw new StoreError(`break store object ${e.message}: the log cannot be replayed`, { path: key, reason: 'corrupt_object' });
      throw e;
    }
  }

  /** One event of `breakId`; StoreError('corrupt_object') when the object is not an event of that break. */
  private async event(breakId: string, key: string): Promise<StoredEvent> {
    const object = await this.object(key);
    const b = object.body;
    if (b.break_id !== breakId || typeof b.version !== 'number' || typeof b.to_state !== 'string' || typeof b.control_id !== 'string') {
      throw new StoreError(`break store object ${key} is JSON but not a break event of its break: the log cannot be replayed`, { path: key, reason: 'corrupt_object' });
    }
    return { event: eventOf(object), object };
  }

  private async build(breakId: string, keys: readonly string[], parts: { observations: boolean; proposals: boolean }): Promise<BreakRecord | undefined> {
    const eventKeys = keys.filter((k) => keyKind(k) === 'event' && k.startsWith(`breaks/${breakId}/`)).sort();
    if (eventKeys.length === 0) return undefined;
    const stored = await Promise.all(eventKeys.map((k) => this.event(breakId, k)));
    stored.forEach((s, i) => {
      // A gap or a reordering is an edited store (tampering or a lost object), not a bug of reckon.
      if (s.event.version !== i + 1) throw new StoreError(`break ${breakId}: event ${eventKeys[i]} holds version ${s.event.version}, expected ${i + 1}; the log has a gap or its events were reordered, so it cannot be replayed`, { path: eventKeys[i], reason: 'corrupt_object' });
    });
    const events = stored.map((s) => s.event);
    const observations = parts.observations ? await this.observationsOf(breakId, keys) : [];
    const proposals = parts.proposals ? await this.proposalsOf(breakId, keys) : [];
    const last = events[events.length - 1];
    return {
      break_id: breakId, control_id: events[0].control_id, kind: events[0].kind, key: events[0].key, state: last.to_state, version: last.version,
      events, stored, head_sha256: stored[stored.length - 1].object.digest, observations, proposals,
    };
  }

  private async observationsOf(breakId: string, keys: readonly string[]): Promise<BreakObservation[]> {
    const obs = await Promise.all(keys.filter((k) => keyKind(k) === 'observation' && k.startsWith(`breaks/${breakId}/`)).map(async (k) => observationOf(await this.object(k))));
    return obs.sort(byObservedAt);
  }

  private async proposalsOf(breakId: string, keys: readonly string[]): Promise<StoredProposal[]> {
    const mine = keys.filter((k) => k.startsWith(`breaks/${breakId}/proposals/`)).sort();
    const out: StoredProposal[] = [];
    for (const k of mine.filter((x) => keyKind(x) === 'proposal')) {
      const object = await this.object(k);
      const wKey = k.replace(/\.json$/, '.withdrawal.json');
      const w = mine.includes(wKey) ? await this.object(wKey) : null;
      out.push({
        event: object.body as unknown as BreakEvent, object,
        withdrawal: w ? { actor: String(w.body.actor), at: String(w.body.at), object: w } : null,
      });
    }
    return out;
  }

  /** The break with its full log, observations and proposals, or undefined when it was never opened. */
  async read(breakId: string): Promise<BreakRecord | undefined> {
    return this.build(breakId, await this.store.list(`breaks/${breakId}/`), { observations: true, proposals: true });
  }

  /**
   * The break's log without its observations and proposals (cheaper: a run reads it once per
   * difference, and observations accumulate with every run), or undefined when it was never opened.
   */
  async readLog(breakId: string): Promise<BreakLog | undefined> {
    const rec = await this.build(breakId, await this.store.list(`breaks/${breakId}/events/`), { observations: false, proposals: false });
    if (!rec) return undefined;
    const { observations: _o, proposals: _p, ...log } = rec;
    void _o; void _p;
    return log;
  }

  /**
   * Every break of the store with its full history, sorted by break id: one listing (or `keys`,
   * the caller's listing of `breaks/`), then `parallel` breaks read at a time. A break with an
   * object that cannot be read throws StoreError('corrupt_object'), unless `onUnreadable` is
   * given: then that break is left out and reported to it (listing is safe to continue; packing
   * evidence or publishing a run is not, and those callers do not pass it).
   */
  async readAll(opts: { readonly onUnreadable?: (breakId: string, error: StoreError) => void; readonly keys?: readonly string[]; readonly parallel?: number } = {}): Promise<BreakRecord[]> {
    const { onUnreadable } = opts;
    const byId = groupById(opts.keys ?? await this.store.list('breaks/'));
    const limit = pLimit(opts.parallel ?? 16);
    const recs = await Promise.all([...byId.keys()].sort().map((id) => limit(async () => {
      try { return await this.build(id, byId.get(id)!, { observations: true, proposals: true }); } catch (e) {
        if (!onUnreadable || !(e instanceof StoreError)) throw e;
        onUnreadable(id, e);
        return undefined;
      }
    })));
    return recs.filter((r): r is BreakRecord => r !== undefined);
  }

  /**
   * The newest event of every break with its version and digest, and the digests of its proposal
   * and withdrawal objects (one listing; reads only those objects), sorted by break id.
   */
  async heads(): Promise<{ break_id: string; last: StoredEvent; proposals: { key: string; sha256: string }[] }[]> {
    const byId = groupById(await this.store.list('breaks/'));
    const limit = pLimit(16);
    const out = await Promise.all([...byId.keys()].sort().map((id) => limit(async () => {
      const keys = byId.get(id)!;
      const events = keys.filter((k) => keyKind(k) === 'event').sort();
      if (!events.length) return null;
      const last = await this.event(id, events[events.length - 1]);
      const proposals = await Promise.all(keys.filter((k) => keyKind(k) === 'proposal' || keyKind(k) === 'withdrawal').sort().map(async (k) => ({ key: k, sha256: (await this.object(k)).digest })));
      return { break_id: id, last, proposals };
    })));
    return out.filter((x): x is NonNullable<typeof x> => x !== null);
  }

  /** Observations of a break (also those recorded as TIMING before any event), oldest first. */
  async observations(breakId: string): Promise<BreakObservation[]> {
    return this.observationsOf(breakId, await this.store.list(`breaks/${breakId}/observations/`));
  }

  /** Ids of every break in the store (with at least one event), sorted. */
  async ids(): Promise<string[]> {
    const byId = groupById(await this.store.list('breaks/'));
    return [...byId].filter(([, keys]) => keys.some((k) => keyKind(k) === 'event')).map(([id]) => id).sort();
  }

  private async putOnce(key: string, bytes: string): Promise<void> {
    if (!this.store.putOnce) throw new InternalError('this break store is read-only');
    await this.store.putOnce(key, bytes);
  }

  /**
   * Appends `object` as the event of `version` with a write-once put. Throws
   * ConcurrencyError('version') (exit 6) when that version already exists: another transition
   * landed first.
   */
  async putEvent(breakId: string, version: number, object: BreakObject): Promise<void> {
    try {
      await this.putOnce(BREAK_KEYS.event(breakId, version), encodeObject(object));
    } catch (e) {
      if (e instanceof AlreadyExistsError) throw new ConcurrencyError(`break ${breakId}: version ${version} already exists; the break moved on (another transition landed first)`, 'version');
      throw e;
    }
  }

  /** Writes a proposal (write-once, named by its digest) and returns its key. */
  async putProposal(breakId: string, version: number, digest: string, object: BreakObject): Promise<string> {
    const key = BREAK_KEYS.proposal(breakId, version, digest);
    try { await this.putOnce(key, encodeObject(object)); } catch (e) {
      if (!(e instanceof AlreadyExistsError)) throw e;
      throw new ConcurrencyError(`${key} already exists: the same proposal was made before`, 'version');
    }
    return key;
  }

  /** Writes the withdrawal of a proposal (write-once); a second withdrawal exits 6. */
  async putWithdrawal(breakId: string, version: number, proposalDigest: string, object: BreakObject): Promise<string> {
    const key = BREAK_KEYS.withdrawal(breakId, version, proposalDigest);
    try { await this.putOnce(key, encodeObject(object)); } catch (e) {
      if (!(e instanceof AlreadyExistsError)) throw e;
      throw new ConcurrencyError(`${key} already exists: the proposal was withdrawn before`, 'version');
    }
    return key;
  }
}

/** Groups `breaks/<id>/…` keys by break id. */
export function groupById(keys: readonly string[]): Map<string, string[]> {
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

export type { BreakObject, DecodedObject, ManifestBinding, SignatureRecord };
