/**
 * Break writes after the commit (issue 17). A run does not write break objects while it runs: it
 * *plans* them — the events it makes (OPEN, REOPENED, automatic VERIFIED) and one observation per
 * difference — stages the plan beside its outputs (`_staging/<run_id>/_break-plan.jsonl`, one
 * canonical JSON line per object with its final key, payload, digest and, for an event, the head it
 * was planned on), lists every planned digest in its manifest, and writes the objects only after
 * the manifest is published, each bound to it (`binding`: the manifest's key and SHA-256). Recovery
 * (run/recovery.ts) rolls the plan of a published run forward and discards the plan of a run that
 * never published, so a store never holds a break object of an unpublished run.
 *
 * A planned event's slot may be taken when it is written: by a person's transition that landed
 * after the plan, or by another run that opened the same new break. The planned event is then
 * dropped (the slot is never overwritten) and reported as superseded: the event in the slot chains
 * from the same base, which verification checks (verify-log.ts).
 *
 * Every run also stages a checkpoint of the store's break heads (`heads/<run_id>.json`): for every
 * break, its version and head digest after the run and the digests of its proposals and
 * withdrawals. Its SHA-256 is in the manifest, so removing any event or proposal older than the
 * latest published run is detected, not only those of breaks the run touched.
 */
import pLimit from 'p-limit';
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { StoreError } from '../core/errors.js';
import type { FaultPoints } from '../core/fault.js';
import { AlreadyExistsError, type ObjectStore } from '../store/object-store.js';
import { decodeObject, encodeObject, type DecodedObject, type ManifestBinding } from './break-objects.js';

/** A break object a run will write once its manifest is published. */
export interface PlannedObject {
  readonly kind: 'event' | 'observation';
  readonly key: string;
  readonly break_id: string;
  readonly payload: string;
  /** SHA-256 of the payload. */
  readonly digest: string;
  /** For an event: the head it was planned on (version − 1 and its digest); null for a new break. */
  readonly base?: { readonly version: number; readonly sha256: string } | null;
}

/** Staging key of a run's break plan (its name starts with `_`: never an output key). */
export const planKey = (runId: string) => `_staging/${runId}/_break-plan.jsonl`;

/** Final and staging keys of a run's checkpoint of break heads. */
export const headsKey = (runId: string) => `heads/${runId}.json`;

/** The bytes of a plan: one canonical JSON line per object, in plan order. */
export function planBytes(objects: readonly PlannedObject[]): string {
  return objects.map((o) => `${canonicalJson(o)}\n`).join('');
}

/**
 * Parses plan bytes read from `key`; throws StoreError (`corrupt_object`, exit 2) naming the key
 * and line when a line is not a planned object: a staged plan is store content, and one that does
 * not parse was damaged or edited, not a fault of this program.
 */
export function parsePlan(text: string, key = 'the break plan'): PlannedObject[] {
  return text.split('\n').filter(Boolean).map((line, i) => {
    let o: PlannedObject | undefined;
    try { o = JSON.parse(line) as PlannedObject; } catch { o = undefined; }
    if (!o || (o.kind !== 'event' && o.kind !== 'observation') || typeof o.key !== 'string' || typeof o.payload !== 'string' || sha256Hex(o.payload) !== o.digest) {
      throw new StoreError(`${key} line ${i + 1} is not a planned break object: the staged break plan is damaged (${PLAN_ADVICE})`, { path: key, reason: 'corrupt_object' });
    }
    return o;
  });
}

/** What an operator does about a staged plan that fails its checks. */
const PLAN_ADVICE = 'its run\'s break objects cannot be completed from it; restore the object from the store\'s versions or backup, and see `reckon manifest verify`';

/** One break's entry in a checkpoint: its version and head digest, and the digests of its proposals and withdrawals. */
export interface HeadEntry {
  readonly break_id: string;
  readonly version: number;
  readonly sha256: string;
  /** Proposal and withdrawal objects by key, with the digest of each. */
  readonly proposals: readonly { readonly key: string; readonly sha256: string }[];
}

/** The checkpoint document of a run. */
export interface HeadsDocument {
  readonly format: 'reckon.break-heads/1';
  readonly run_id: string;
  readonly heads: readonly HeadEntry[];
}

/** Canonical bytes of a checkpoint (heads sorted by break id). */
export function headsBytes(runId: string, heads: readonly HeadEntry[]): string {
  const doc: HeadsDocument = { format: 'reckon.break-heads/1', run_id: runId, heads: [...heads].sort((a, b) => (a.break_id < b.break_id ? -1 : 1)) };
  return canonicalJson(doc);
}

/** What a roll-forward did: objects written now, found already written, and planned events whose slot another event took. */
export interface RollForward {
  readonly written: number;
  readonly present: number;
  readonly superseded: readonly { readonly key: string; readonly planned: string; readonly found: string }[];
}

/** Breaks whose planned objects are written at once after the first object (41 breaks one after another took ~100 ms). */
const WRITE_PARALLEL = 8;

/** Planned objects per batch on a store that writes batches (a few tens of milliseconds of a local store's event loop each). */
export const WRITE_BATCH = 256;

/** The break a planned object belongs to (`breaks/<id>/…`), or its key for anything else. */
const breakOf = (key: string) => /^breaks\/[^/]+\//.exec(key)?.[0] ?? key;

/**
 * Writes the planned objects of a published run, each bound to its manifest, with write-once
 * puts; an object already there with the planned payload is fine (an earlier attempt wrote it),
 * an event slot holding another event is a superseded plan (left as it is). Fault points
 * `writing-breaks` after the first object written and `breaks-written` after the last. Up to the
 * first written, objects are read and, if absent, written one by one; then, on a store that writes batches
 * (putManyOnce: the local one), `batch` objects at a time in plan order, else WRITE_PARALLEL
 * breaks at a time, each break's objects in plan order (either way a break never shows a later
 * event without the earlier one). A crash between batches leaves a prefix of the plan written,
 * which the next run's roll-forward finds present. Superseded plans are listed in plan order.
 */
export async function writePlanned(store: ObjectStore, objects: readonly PlannedObject[], binding: ManifestBinding, fault: FaultPoints, batch = WRITE_BATCH): Promise<RollForward> {
  const outcomes: WriteOutcome[] = new Array(objects.length);
  let next = 0;
  let first = false;
  for (; next < objects.length && !first; next++) first = (outcomes[next] = await readOrPut(store, objects[next], binding)) === 'written';
  if (first) await fault('writing-breaks');
  if (store.putManyOnce) await writeBatches(store, objects, next, binding, outcomes, batch);
  else await writeByBreak(store, objects, next, binding, outcomes);
  await fault('breaks-written');
  const superseded = outcomes.filter((x): x is Superseded => typeof x === 'object');
  return { written: outcomes.filter((x) => x === 'written').length, present: outcomes.filter((x) => x === 'present').length, superseded };
}

type Superseded = RollForward['superseded'][number];
type WriteOutcome = 'written' | 'present' | Superseded;

/** Writes objects[from…] in batches of `batch` through putManyOnce, filling `outcomes`; the event loop runs between batches. */
async function writeBatches(store: ObjectStore, objects: readonly PlannedObject[], from: number, binding: ManifestBinding, outcomes: WriteOutcome[], batch: number): Promise<void> {
  for (let start = from; start < objects.length; start += batch) {
    const part = objects.slice(start, start + batch);
    const done = await store.putManyOnce!(part.map((o) => ({ key: o.key, body: encodeObject({ payload: o.payload, signatures: [], binding }) })));
    for (let j = 0; j < part.length; j++) outcomes[start + j] = done[j] === 'written' ? 'written' : await foundOutcome(store, part[j], binding);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Writes objects[from…] with putOnce, WRITE_PARALLEL breaks at a time, each break's objects in plan order, filling `outcomes`. */
async function writeByBreak(store: ObjectStore, objects: readonly PlannedObject[], from: number, binding: ManifestBinding, outcomes: WriteOutcome[]): Promise<void> {
  const groups = new Map<string, number[]>();
  for (let i = from; i < objects.length; i++) {
    const g = breakOf(objects[i].key);
    const ids = groups.get(g);
    if (ids) ids.push(i);
    else groups.set(g, [i]);
  }
  const limit = pLimit(WRITE_PARALLEL);
  try {
    await Promise.all([...groups.values()].map((ids) => limit(async () => {
      for (const i of ids) outcomes[i] = await putPlanned(store, objects[i], binding);
    })));
  } catch (e) {
    limit.clearQueue();
    throw e;
  }
}

/** Writes one planned object; what became of it (written now, present already, or its event slot taken). */
async function putPlanned(store: ObjectStore, o: PlannedObject, binding: ManifestBinding): Promise<WriteOutcome> {
  try {
    await store.putOnce(o.key, encodeObject({ payload: o.payload, signatures: [], binding }));
    return 'written';
  } catch (e) {
    if (!(e instanceof AlreadyExistsError)) throw e;
    return foundOutcome(store, o, binding);
  }
}

/**
 * putPlanned for the objects up to the first written: read first, so that a roll-forward's prefix
 * of objects already written (a run killed between batches) costs a read each, not a temporary
 * file made and removed (at 10^5 objects, inode churn this ext4 pays for in later writes).
 */
async function readOrPut(store: ObjectStore, o: PlannedObject, binding: ManifestBinding): Promise<WriteOutcome> {
  const bytes = await store.get(o.key);
  return bytes ? foundOutcome(store, o, binding, bytes) : putPlanned(store, o, binding);
}

/** A planned object whose key exists (its `bytes`, read if not given): present (the planned payload), superseded (an event slot another event took), or a StoreError (an observation with another payload). */
async function foundOutcome(store: ObjectStore, o: PlannedObject, binding: ManifestBinding, bytes?: Buffer): Promise<WriteOutcome> {
  const found = decodeObject(o.key, bytes ?? (await store.get(o.key))!);
  if (found.digest === o.digest) return 'present';
  if (o.kind === 'event') return { key: o.key, planned: o.digest, found: found.digest };
  // An observation's key holds its run id: another payload there was written by someone else.
  throw new StoreError(`${o.key} exists with another payload than the one run ${binding.manifest_key} planned: the break store was written outside reckon (see \`reckon manifest verify\`)`, { path: o.key, reason: 'corrupt_object' });
}

/** Reads and checks a staged plan against the SHA-256 its manifest recorded; undefined when it is not staged. Throws StoreError (`corrupt_object`) when it fails. */
export async function stagedPlan(store: ObjectStore, runId: string, sha256: string): Promise<PlannedObject[] | undefined> {
  const bytes = await store.get(planKey(runId));
  if (!bytes) return undefined;
  const key = planKey(runId);
  if (sha256Hex(bytes) !== sha256) throw new StoreError(`${key} does not have the SHA-256 ${sha256} its manifest recorded: the staged break plan was changed (${PLAN_ADVICE})`, { path: key, reason: 'corrupt_object' });
  return parsePlan(bytes.toString('utf8'), key);
}

/**
 * A read view of `store` in which the planned objects are already written (without binding):
 * what the store will hold after the run, for the run's own output snapshot of its breaks. A
 * BreakStore reading it gets each planned object decoded as it would be from its bytes
 * (`decoded`: the payload parsed once, the digest the plan computed), not encoded and parsed again.
 */
export function overlay(store: Pick<ObjectStore, 'get' | 'list'>, objects: readonly PlannedObject[]): Pick<ObjectStore, 'get' | 'list'> & { decoded: (key: string) => DecodedObject | undefined } {
  const byKey = new Map(objects.map((o) => [o.key, o]));
  return {
    get: async (key) => {
      const o = byKey.get(key);
      return o ? Buffer.from(encodeObject({ payload: o.payload, signatures: [] }), 'utf8') : store.get(key);
    },
    list: async (prefix) => {
      const keys = new Set(await store.list(prefix));
      for (const k of byKey.keys()) if (k.startsWith(prefix)) keys.add(k);
      return [...keys].sort();
    },
    decoded: (key) => {
      const o = byKey.get(key);
      if (!o) return undefined;
      return { key, format: 'v2', payload: o.payload, digest: o.digest, body: JSON.parse(o.payload) as Record<string, unknown>, signatures: [], binding: null };
    },
  };
}
