/**
 * The console's read model (issue 22): every break of the store summarized once at start, kept in
 * memory and refreshed on change, so that a queue request filters rows in memory instead of
 * reading 100,000 break logs. A row is the break's summary (breaks/break-summary.ts, the CLI's
 * `breaks list` fields) with what the queue filters and the ageing page counts on: age in exact
 * microseconds, pending proposals, the last observation's detail, and each observing run's age.
 *
 * Refresh: the console's own actions and every break page re-read their break at once
 * (`refreshBreak`). Runs are taken in without listing the breaks (`refreshFromRuns`): a new run's
 * checkpoint of every break's head (heads/<run_id>.json, issue 17) says which breaks changed, and
 * only those and the ones the run observed are read. A person's change between runs (another
 * console, the command line) is found by the sweep (`refreshChanged`), which lists the store's
 * break keys and re-reads only the breaks whose set of objects changed. An event edited in place
 * keeps its key, so it is found by the break page, which reads and verifies the break afresh.
 */
import pLimit from 'p-limit';
import { slaSeconds, type LoadedConfig } from '../config/config.js';
import type { ControlDefinition } from '../controls/definitions.js';
import { formatMicros, parseTimestamp } from '../contract/values.js';
import { breakAge, summarizeBreak } from '../breaks/break-summary.js';
import { BreakStore, groupById, type BreakRecord } from '../breaks/break-store.js';
import { proposalStatus } from '../breaks/transitions.js';
import type { HeadEntry, HeadsDocument } from '../breaks/break-plan.js';
import { sha256Hex } from '../core/digest.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';

/** A published run as the index takes it in (its manifest). */
type PublishedRun = { readonly manifest: ManifestV1 };
import type { ObjectStore } from '../store/object-store.js';
import { sortRows, type SortKey } from './queue.js';
import type { QueueRow } from './row.js';

export type { QueueRow, RowObservation } from './row.js';

const micros = (ts: string | null | undefined): bigint | null => {
  if (!ts) return null;
  const p = parseTimestamp(ts);
  return p.ok ? p.value : null;
};

/** Builds the queue row of one break (pure: the clock of proposal expiry is `now`). */
export function rowOf(rec: BreakRecord, config: LoadedConfig, controls: readonly ControlDefinition[], now: Date = new Date()): QueueRow {
  const summary = summarizeBreak(rec, { config: config.config, controls });
  const { first_record_us, age_us } = breakAge(rec);
  const sla = slaSeconds(config.config, controls.find((c) => c.control_id === rec.control_id), rec.kind);
  const maxAge = config.config.signing.proposal_max_age_s;
  const pending = rec.proposals.filter((p) => proposalStatus(rec, p, maxAge, now) === 'pending')
    .map((p) => ({ version: p.event.version, to_state: p.event.to_state, actor: p.event.actor, approver: p.event.evidence.approver ?? null }));
  const observations = rec.observations.map((o) => {
    const asOf = micros(o.as_of ?? o.window.end);
    const age = asOf !== null && first_record_us !== null ? asOf - first_record_us : null;
    return { run_id: o.run_id, as_of: asOf === null ? null : formatMicros(asOf), breached: age === null || sla === null ? null : age > BigInt(sla) * 1_000_000n };
  });
  const first = rec.observations[0];
  const last = rec.observations[rec.observations.length - 1];
  return {
    ...summary, age_us, pending, first_seen: first?.observed_at ?? null, last_observed: last?.observed_at ?? null,
    detail: last?.detail ?? null, observations,
  };
}

/** The break keys of the store grouped by break, as a fingerprint per break (its sorted keys joined). */
function fingerprints(keys: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, ks] of groupById(keys)) out.set(id, ks.sort().join('\n'));
  return out;
}

/** A break's head as a run's checkpoint states it: version, head digest, and each proposal and withdrawal object by key and digest. */
function headText(h: Pick<HeadEntry, 'version' | 'sha256' | 'proposals'>): string {
  return [`${h.version} ${h.sha256}`, ...[...h.proposals].sort((a, b) => cmp(a.key, b.key)).map((p) => `${p.key} ${p.sha256}`)].join('\n');
}

/** The head of a break as read, in the form of a checkpoint entry. */
function headOf(rec: BreakRecord): string {
  const proposals = rec.proposals.flatMap((p) => [p.object, ...(p.withdrawal ? [p.withdrawal.object] : [])]).map((o) => ({ key: o.key, sha256: o.digest }));
  return headText({ version: rec.version, sha256: rec.head_sha256, proposals });
}

/** Breaks read at once at start and on refresh: reading is waiting on the store, not computing. */
const READ_PARALLEL = 64;

/** The in-memory index of every break (see the module comment). */
export class BreakIndex {
  private rows = new Map<string, QueueRow>();
  private prints = new Map<string, string>();
  /** Each break's head as last read (headOf), compared with a new run's checkpoint. */
  private heads = new Map<string, string>();
  /** The runs whose observations and checkpoint the index has taken in. */
  private runsSeen = new Set<string>();
  private sorted: QueueRow[] | null = null;
  /** Rows in each sort order asked for so far (key `sort:dir`), dropped on any change. */
  private orders = new Map<string, QueueRow[]>();
  private facetCache: { kinds: string[]; owners: string[] } | null = null;
  /** Wall-clock milliseconds the last full load or refresh took, and when it finished. */
  lastLoadMs = 0;
  loadedAt: Date | null = null;

  constructor(private readonly store: ObjectStore, private readonly config: LoadedConfig, private readonly controls: readonly ControlDefinition[]) {}

  /** Every row, sorted by control, kind and key (the CLI's `breaks list` order). */
  all(): readonly QueueRow[] {
    this.sorted ??= [...this.rows.values()].sort((a, b) => cmp(a.control_id, b.control_id) || cmp(a.kind, b.kind) || cmp(a.key, b.key));
    return this.sorted;
  }

  /** Every row in the order of `sort` and `dir`, computed once per change (a queue request then only filters). */
  ordered(sort: SortKey, dir: 'asc' | 'desc'): readonly QueueRow[] {
    const k = `${sort}:${dir}`;
    let rows = this.orders.get(k);
    if (!rows) {
      rows = sortRows(this.all(), sort, dir);
      this.orders.set(k, rows);
    }
    return rows;
  }

  /** The kinds and owners present (the queue's filter choices). */
  facets(): { kinds: string[]; owners: string[] } {
    this.facetCache ??= {
      kinds: [...new Set(this.all().map((r) => r.kind))].sort(),
      owners: [...new Set(this.all().map((r) => r.owner ?? '').filter(Boolean))].sort(),
    };
    return this.facetCache;
  }

  /** Grows by one at every change of the rows: what a page computed from all rows may be cached under. */
  generation = 0;

  private changed(): void {
    this.generation += 1;
    this.sorted = null;
    this.orders.clear();
    this.facetCache = null;
  }

  get(id: string): QueueRow | undefined {
    return this.rows.get(id);
  }

  private put(rec: BreakRecord, now: Date): void {
    this.rows.set(rec.break_id, rowOf(rec, this.config, this.controls, now));
    this.heads.set(rec.break_id, headOf(rec));
  }

  /**
   * Reads every break of the store: one listing of `breaks/`, then READ_PARALLEL breaks at a time
   * (BreakStore.readAll). `runs` are the published manifests at start: their observations are in
   * what was read, so a later checkpoint refresh starts after them.
   */
  async load(runs: readonly PublishedRun[] = []): Promise<void> {
    const t0 = Date.now();
    const keys = await this.store.list('breaks/');
    const now = new Date();
    for (const rec of await new BreakStore(this.store).readAll({ keys, parallel: READ_PARALLEL })) this.put(rec, now);
    this.prints = fingerprints(keys);
    for (const r of runs) this.runsSeen.add(r.manifest.run_id);
    this.changed();
    this.lastLoadMs = Date.now() - t0;
    this.loadedAt = new Date();
  }

  /**
   * Takes in the runs published since the last look without listing the breaks: each new run's
   * checkpoint (heads/<run_id>.json, checked against the SHA-256 its manifest records) names every
   * break's head after the run, so only the breaks whose head differs from the one read, and the
   * breaks the run observed (its manifest's breaks), are read again. A run without a
   * checkpoint (written before signing), or one that does not match its manifest, makes a full
   * sweep (`refreshChanged`). Returns the ids read again.
   */
  async refreshFromRuns(runs: readonly PublishedRun[]): Promise<string[]> {
    const fresh = runs.filter((r) => !this.runsSeen.has(r.manifest.run_id));
    if (!fresh.length) return [];
    const t0 = Date.now();
    const ids = new Set<string>();
    for (const run of fresh) {
      const stated = await this.checkpoint(run);
      if (!stated) return this.refreshChanged(runs);
      for (const [id, head] of stated) if (this.heads.get(id) !== head) ids.add(id);
      for (const b of run.manifest.breaks) ids.add(b.break_id);
    }
    await this.readBreaks([...ids]);
    for (const run of fresh) this.runsSeen.add(run.manifest.run_id);
    this.lastLoadMs = Date.now() - t0;
    this.loadedAt = new Date();
    return [...ids];
  }

  /** A run's checkpoint as break id → head text, or null when it has none or it does not match its manifest. */
  private async checkpoint(run: PublishedRun): Promise<Map<string, string> | null> {
    const log = run.manifest.break_log;
    if (!log) return null;
    const bytes = await this.store.get(log.heads.key);
    if (!bytes || sha256Hex(bytes) !== log.heads.sha256) return null;
    const doc = JSON.parse(bytes.toString('utf8')) as HeadsDocument;
    return new Map(doc.heads.map((h) => [h.break_id, headText(h)]));
  }

  /**
   * The full sweep: lists every break key of the store and re-reads the breaks whose set of
   * objects changed since the last read (new events, proposals, observations, new breaks): what
   * a checkpoint cannot tell, a change made by a person after the latest run. Returns their ids.
   */
  async refreshChanged(runs: readonly PublishedRun[] = []): Promise<string[]> {
    const t0 = Date.now();
    const prints = fingerprints(await this.store.list('breaks/'));
    const changed = [...prints].filter(([id, p]) => this.prints.get(id) !== p).map(([id]) => id);
    await this.readBreaks(changed);
    this.prints = prints;
    for (const r of runs) this.runsSeen.add(r.manifest.run_id);
    this.lastLoadMs = Date.now() - t0;
    this.loadedAt = new Date();
    return changed;
  }

  /** Re-reads one break now (after an action of this console, or to show its page). */
  async refreshBreak(id: string): Promise<BreakRecord | undefined> {
    const keys = await this.store.list(`breaks/${id}/`);
    const rec = await new BreakStore(this.store).read(id);
    this.prints.set(id, [...keys].sort().join('\n'));
    if (rec) this.put(rec, new Date());
    this.changed();
    return rec;
  }

  private async readBreaks(ids: readonly string[]): Promise<void> {
    const bs = new BreakStore(this.store);
    const limit = pLimit(READ_PARALLEL);
    const now = new Date();
    await Promise.all(ids.map((id) => limit(async () => {
      const [keys, rec] = await Promise.all([this.store.list(`breaks/${id}/`), bs.read(id)]);
      this.prints.set(id, [...keys].sort().join('\n'));
      if (rec) this.put(rec, now);
    })));
    if (ids.length) this.changed();
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
