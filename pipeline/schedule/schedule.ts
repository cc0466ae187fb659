/**
 * Scheduled runs (issue 7). Works out the windows a plan makes due at `now` and which of them
 * still need a run:
 * - nightly: whole UTC days [D 00:00Z, D+1 00:00Z) whose end + lag ≤ now, within the lookback;
 * - intraday: a fixed UTC grid of `interval` (aligned to the epoch, so 00:00, 00:15, …), windows
 *   whose end + lag ≤ now, within the lookback.
 * A window is complete when a published manifest of the same window is a scheduled run
 * (`scheduled-nightly` or `scheduled-intraday`) of the same sources location, covers the plan's
 * controls with the same code and configuration fingerprints, and has no control in a status the
 * schedule runs again (NOT_READY; core/outcome.ts `rerunBySchedule`). So an incident rerun, a
 * manual run, or any run on another sources folder into the same store never makes the schedule
 * skip its window (issue 19). Complete windows are never run again by the schedule, even when
 * later extracts change the source folder (a correction of a closed window is an incident rerun:
 * `reckon run --trigger incident --rerun-of RUN --reason …`).
 * NOT_READY windows run again on the next call (catch-up). The inputs fingerprint is still
 * recorded in every manifest, so an auditor can tell which runs saw the same inputs.
 */
import { DATASETS } from '../contract/datasets.js';
import { codeFingerprint, inputsFingerprint } from '../publish/fingerprint.js';
import { listManifests } from '../store/manifests.js';

/** The store's published manifests, as listManifests gives them. */
export type Published = Awaited<ReturnType<typeof listManifests>>;
import { listDatasetFolder, readRegularFile, SIDE_FILE_MAX_BYTES } from '../sources/files.js';
import { hashFile, sha256Hex } from '../core/digest.js';
import type { ObjectStore } from '../store/object-store.js';
import { ConfigError } from '../core/errors.js';
import { STATUS_OUTCOMES } from '../core/outcome.js';
import { makeWindow, type Window } from '../contract/window.js';

export type Plan = 'nightly' | 'intraday';

const UNIT_US: Record<string, bigint> = { s: 1_000_000n, m: 60_000_000n, h: 3_600_000_000n, d: 86_400_000_000n };

/** Parses `15m`, `1h`, `30s`, `3d` into microseconds. Throws ConfigError. */
export function parseDuration(text: string, what: string): bigint {
  const m = /^([0-9]+)([smhd])$/.exec(text);
  if (!m || BigInt(m[1]) === 0n && what !== '--lag') throw new ConfigError(`${what} '${text}' is not a duration like 15m, 1h, 30s or 3d`);
  return BigInt(m[1]) * UNIT_US[m[2]];
}

/** Due windows of a plan at `nowMicros`, oldest first (UTC, half-open). */
export function dueWindows(plan: Plan, nowMicros: bigint, opts: { intervalUs: bigint; lagUs: bigint; lookbackUs: bigint }): Window[] {
  const size = plan === 'nightly' ? UNIT_US.d : opts.intervalUs;
  if (plan === 'intraday' && UNIT_US.d % size !== 0n) throw new ConfigError('--interval must divide a day evenly (e.g. 5m, 15m, 1h)');
  const latestEnd = ((nowMicros - opts.lagUs) / size) * size; // last grid point with end + lag ≤ now
  const out: Window[] = [];
  for (let end = latestEnd; end > latestEnd - opts.lookbackUs && end - size >= 0n; end -= size) out.unshift(makeWindow(end - size, end));
  return out;
}

/** The current inputs fingerprint of a local source folder (same objects a run hashes); for reports. */
export async function currentInputsFingerprint(root: string): Promise<string> {
  const objects: { path: string; sha256: string }[] = [];
  for (const d of DATASETS) {
    const folder = await listDatasetFolder(root, d.name);
    for (const f of folder.files) objects.push({ path: f.relPath, sha256: f.realPath && !f.refused ? await hashFile(f.realPath).then((h) => h.sha256, () => '') : '' });
    // Side files as a run reads them: regular files inside the root only, never a FIFO or device.
    for (const side of [folder.watermark, folder.importReport]) {
      if (!side || side.refused) continue;
      const read = await readRegularFile(side.path, side.relPath, SIDE_FILE_MAX_BYTES);
      if ('bytes' in read) objects.push({ path: side.relPath, sha256: sha256Hex(read.bytes) });
    }
  }
  return inputsFingerprint(objects);
}

/** The triggers of the schedule's own runs: only these complete a window. */
const SCHEDULED_TRIGGERS: readonly string[] = ['scheduled-nightly', 'scheduled-intraday'];

/** A sources location compared as the same place: an `s3://` URL or a path without trailing slashes. */
const sameLocation = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/**
 * The run that already completed a window for the schedule's job (see the module comment): the
 * latest scheduled run of `fp.sources` over `controls` with this code and configuration `fp.config`
 * and no control the schedule runs again; undefined when there is none. `manifests`: the store's,
 * listed once by the caller for all its windows (else listed here).
 */
export async function completedRun(store: ObjectStore, w: Window, controls: readonly string[], fp: { config: string; sources: string }, manifests?: Published): Promise<string | undefined> {
  const code = await codeFingerprint();
  for (const m of [...(manifests ?? await listManifests(store))].reverse()) {
    const doc = m.manifest;
    if (doc.window.start !== w.start || doc.window.end !== w.end) continue;
    if (!SCHEDULED_TRIGGERS.includes(doc.trigger) || !sameLocation(doc.sources.location, fp.sources)) continue;
    if (!controls.every((c) => doc.controls.includes(c))) continue;
    const f = doc.fingerprints;
    if (!f || f.code_sha256 !== code || f.config_sha256 !== fp.config) continue;
    const covered = doc.results.filter((r) => controls.includes(r.control_id));
    if (covered.some((r) => STATUS_OUTCOMES[r.status].rerunBySchedule)) continue;
    return doc.run_id;
  }
  return undefined;
}


/**
 * The start of the earliest window a `trigger` run of `sources` was published for among `manifests` (any
 * status), or null when there is none: the schedule's first call there. Windows before it are not
 * the schedule's to catch up unless a lookback was asked for (schedule-command.ts): the extract at
 * hand was delivered for the latest window, and earlier windows over it hold none of their own
 * records (RC05 would report the whole projection build as EXTRA in each). A first window left
 * NOT_READY still marks where the schedule began.
 */
export function firstScheduledStart(manifests: Published, sources: string, trigger: string): string | null {
  const starts = manifests.filter((m) => m.manifest.trigger === trigger && sameLocation(m.manifest.sources.location, sources)).map((m) => m.manifest.window.start);
  return starts.length ? starts.reduce((a, b) => (b < a ? b : a)) : null;
}
