/**
 * What a run does to breaks (CONTRACT §5): each difference of a CLEAN/BREAKS control opens its
 * break, is recorded as a new observation of it, or reopens it after VERIFIED/CLOSED. A difference
 * matched by a timing rule is recorded as TIMING instead, and opens if a run of a later window
 * still observes it. After the manifest is published, CORRECTED breaks that this run covered and
 * no longer observes are VERIFIED by `reconciler` with the manifest digest as proof.
 */
import type { Config } from '../config.js';
import type { ControlDefinition } from '../controls.js';
import { ConcurrencyError } from '../errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { Window } from '../window.js';
import { breakId } from './break-id.js';
import { BreakStore, type BreakRecord } from './break-store.js';
import type { BreakState, Disposition } from './states.js';

/** The break a difference maps to and what the run did with it. */
export interface BreakOutcome {
  readonly break_id: string;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly disposition: Disposition;
}

interface ResultLike {
  readonly control_id: string;
  readonly status: string;
  readonly differences: readonly { kind: string; key: string; detail: string; record_time: string | null; disposition: Disposition }[];
}

/** The pipeline's actor name in break events. */
export const RECONCILER = 'reconciler';

/** Opens, reobserves or reopens the breaks of one control's differences; returns their outcomes. */
export async function recordBreaks(
  store: ObjectStore,
  args: { runId: string; window: Window; control: ControlDefinition; result: ResultLike; config: Config },
): Promise<BreakOutcome[]> {
  const { runId, window, control, result } = args;
  if (result.status !== 'CLEAN' && result.status !== 'BREAKS') return [];
  const bs = new BreakStore(store);
  const w = { start: window.start, end: window.end };
  const out: BreakOutcome[] = [];
  for (const d of result.differences) {
    const id = breakId(control.control_id, d.kind, d.key);
    let disposition: Disposition;
    for (let attempt = 0; ; attempt++) {
      const rec = await bs.read(id);
      try {
        disposition = await decide(bs, rec, { id, control, d, window: w, timing: d.disposition === 'TIMING' });
        break;
      } catch (e) {
        if (e instanceof ConcurrencyError && attempt < 3) continue; // another run appended first: re-read
        throw e;
      }
    }
    await bs.observe({ break_id: id, run_id: runId, window: w, observed_at: new Date().toISOString(), record_time: d.record_time, detail: d.detail, disposition });
    out.push({ break_id: id, control_id: control.control_id, kind: d.kind, key: d.key, disposition });
  }
  return out;
}

async function decide(
  bs: BreakStore,
  rec: BreakRecord | undefined,
  a: { id: string; control: ControlDefinition; d: ResultLike['differences'][number]; window: { start: string; end: string }; timing: boolean },
): Promise<Disposition> {
  const open = async (from: BreakState | null, version: number) =>
    bs.append({
      break_id: a.id, version: version + 1, expected_version: version, control_id: a.control.control_id, kind: a.d.kind, key: a.d.key,
      from_state: from, to_state: 'OPEN', actor: RECONCILER, at: new Date().toISOString(),
      evidence: { detail: a.d.detail }, window: a.window, record_time: a.d.record_time,
    });
  if (!rec) {
    if (a.timing) {
      const earlier = (await bs.observations(a.id)).some((o) => o.disposition === 'TIMING' && o.window.end <= a.window.start);
      if (!earlier) return 'TIMING';
    }
    await open(null, 0);
    return 'OPENED';
  }
  if (rec.state === 'VERIFIED' || rec.state === 'CLOSED') {
    await open(rec.state, rec.version);
    return 'REOPENED';
  }
  return 'REOBSERVED';
}

/**
 * Automatic verification (CONTRACT §5): for each CLEAN/BREAKS control of the run, every CORRECTED
 * break of that control whose window the run covers, corrected before the run started by someone
 * other than `reconciler`, and not observed by the run, is VERIFIED by `reconciler`.
 */
export async function verifyCorrectedBreaks(
  store: ObjectStore,
  args: { runId: string; window: Window; controls: readonly ControlDefinition[]; results: readonly ResultLike[]; manifestSha256: string; startedAt: string },
): Promise<string[]> {
  const bs = new BreakStore(store);
  const verified: string[] = [];
  const ran = new Map(args.results.filter((r) => r.status === 'CLEAN' || r.status === 'BREAKS').map((r) => [r.control_id, r]));
  if (ran.size === 0) return verified;
  for (const id of await bs.ids()) {
    const rec = await bs.read(id);
    if (!rec || rec.state !== 'CORRECTED') continue;
    const r = ran.get(rec.control_id);
    if (!r) continue;
    if (r.differences.some((d) => d.kind === rec.kind && d.key === rec.key)) continue;
    const opened = [...rec.events].reverse().find((e) => e.to_state === 'OPEN');
    const corrected = rec.events[rec.events.length - 1];
    if (!opened?.window || !(args.window.start <= opened.window.start && args.window.end >= opened.window.end)) continue;
    if (!(corrected.at < args.startedAt) || corrected.actor === RECONCILER) continue;
    try {
      await bs.append({
        break_id: id, version: rec.version + 1, expected_version: rec.version, control_id: rec.control_id, kind: rec.kind, key: rec.key,
        from_state: 'CORRECTED', to_state: 'VERIFIED', actor: RECONCILER, at: new Date().toISOString(),
        evidence: { run_id: args.runId, manifest_sha256: args.manifestSha256, note: 'run covering the break window no longer observes the difference' },
      });
      verified.push(id);
    } catch (e) {
      if (!(e instanceof ConcurrencyError)) throw e;
    }
  }
  return verified;
}
