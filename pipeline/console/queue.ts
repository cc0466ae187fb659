/**
 * The queue's filter, sort and paging (issue 22), pure over the read model's rows. The filter is
 * the URL's query (`?state=OPEN&control=RC03&sla=breached&q=EXE-`), so a view can be shared, and
 * the CSV export takes the same query. Unknown values are ignored rather than refused: a shared
 * link from an older console still opens.
 */
import { BREAK_STATES } from '../breaks/states.js';
import { ownedBy } from '../breaks/break-summary.js';
import { parseTimestamp } from '../contract/values.js';
import type { QueueRow } from './row.js';

/** Age buckets of the queue filter and the ageing page, by upper bound in seconds (exclusive of the lower). */
export const AGE_BUCKETS = [
  { id: 'lt1h', label: '< 1 h', max: 3_600n },
  { id: '1h-4h', label: '1–4 h', max: 4n * 3_600n },
  { id: '4h-24h', label: '4–24 h', max: 86_400n },
  { id: '1d-3d', label: '1–3 d', max: 3n * 86_400n },
  { id: '3d-7d', label: '3–7 d', max: 7n * 86_400n },
  { id: 'gt7d', label: '> 7 d', max: null },
] as const;
export type AgeBucket = (typeof AGE_BUCKETS)[number]['id'] | 'unknown';

/** The bucket of an age in microseconds: the first whose bound the age does not pass. */
export function ageBucket(ageUs: bigint | null): AgeBucket {
  if (ageUs === null) return 'unknown';
  for (const b of AGE_BUCKETS) if (b.max === null || ageUs <= b.max * 1_000_000n) return b.id;
  return 'gt7d';
}

export const SORTS = ['age', 'control', 'state', 'owner', 'key', 'first_seen', 'last_observed', 'sla_due'] as const;
export type SortKey = (typeof SORTS)[number];

/** A parsed queue query. */
export interface QueueQuery {
  readonly state: string | null;
  readonly control: string | null;
  readonly kind: string | null;
  readonly owner: string | null;
  /** `breached`, `ok` or null (any). */
  readonly sla: 'breached' | 'ok' | null;
  readonly age: AgeBucket | null;
  readonly pending: boolean;
  /** Free text matched against the key (case-insensitive substring). */
  readonly q: string | null;
  readonly sort: SortKey;
  readonly dir: 'asc' | 'desc';
  readonly page: number;
  readonly size: number;
}

export const PAGE_SIZES = [25, 50, 100, 200] as const;

const one = (p: URLSearchParams, k: string): string | null => {
  const v = p.get(k)?.trim();
  return v ? v : null;
};

/** Parses the query string of a queue URL. */
export function parseQuery(p: URLSearchParams): QueueQuery {
  const state = one(p, 'state')?.toUpperCase() ?? null;
  const sla = one(p, 'sla');
  const age = one(p, 'age');
  const sort = one(p, 'sort');
  const size = Number(one(p, 'size') ?? 50);
  const page = Number(one(p, 'page') ?? 1);
  return {
    state: state && (BREAK_STATES as readonly string[]).includes(state) ? state : null,
    control: one(p, 'control')?.toUpperCase() ?? null,
    kind: one(p, 'kind'),
    owner: one(p, 'owner'),
    sla: sla === 'breached' || sla === 'ok' ? sla : null,
    age: age && [...AGE_BUCKETS.map((b) => b.id as string), 'unknown'].includes(age) ? (age as AgeBucket) : null,
    pending: p.get('pending') === '1' || p.get('pending') === 'on',
    q: one(p, 'q'),
    sort: (SORTS as readonly string[]).includes(sort ?? '') ? (sort as SortKey) : 'age',
    dir: p.get('dir') === 'asc' ? 'asc' : 'desc',
    page: Number.isInteger(page) && page > 0 ? page : 1,
    size: (PAGE_SIZES as readonly number[]).includes(size) ? size : 50,
  };
}

/** The query as URL parameters (defaults left out), with `over` replacing some. */
export function queryString(q: QueueQuery, over: Partial<Record<keyof QueueQuery, string | number | boolean | null>> = {}): string {
  const v: Record<string, unknown> = { ...q, ...over };
  const p = new URLSearchParams();
  for (const k of ['state', 'control', 'kind', 'owner', 'sla', 'age', 'q'] as const) if (v[k]) p.set(k, String(v[k]));
  if (v.pending) p.set('pending', '1');
  if (v.sort !== 'age') p.set('sort', String(v.sort));
  if (v.dir !== 'desc') p.set('dir', String(v.dir));
  if (v.size !== 50) p.set('size', String(v.size));
  if (v.page !== 1) p.set('page', String(v.page));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** True when `r` passes every filter of `q`. */
export function matches(r: QueueRow, q: QueueQuery): boolean {
  if (q.state && r.state !== q.state) return false;
  if (q.control && r.control_id !== q.control) return false;
  if (q.kind && r.kind !== q.kind) return false;
  if (q.owner && !ownedBy([q.owner], r)) return false;
  if (q.sla === 'breached' && r.sla_breached !== true) return false;
  if (q.sla === 'ok' && r.sla_breached !== false) return false;
  if (q.age && ageBucket(r.age_us) !== q.age) return false;
  if (q.pending && r.pending.length === 0) return false;
  if (q.q && !r.key.toLowerCase().includes(q.q.toLowerCase())) return false;
  return true;
}

const STATE_ORDER = new Map(BREAK_STATES.map((s, i) => [s, i]));

/** SLA due time in microseconds: first record time + SLA (null when either is unknown). */
export function slaDueUs(r: QueueRow): bigint | null {
  if (r.sla_s === null || r.first_record_time === null) return null;
  const first = parseTimestamp(r.first_record_time);
  return first.ok ? first.value + BigInt(r.sla_s) * 1_000_000n : null;
}

function compare(a: QueueRow, b: QueueRow, key: SortKey): number {
  const big = (x: bigint | null, y: bigint | null) => (x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1);
  const str = (x: string | null, y: string | null) => ((x ?? '') < (y ?? '') ? -1 : (x ?? '') > (y ?? '') ? 1 : 0);
  switch (key) {
    case 'age': return big(a.age_us, b.age_us);
    case 'control': return str(a.control_id, b.control_id) || str(a.kind, b.kind);
    case 'state': return (STATE_ORDER.get(a.state) ?? 0) - (STATE_ORDER.get(b.state) ?? 0);
    case 'owner': return str(a.owner, b.owner);
    case 'key': return str(a.key, b.key);
    case 'first_seen': return str(a.first_seen, b.first_seen);
    case 'last_observed': return str(a.last_observed, b.last_observed);
    case 'sla_due': return big(slaDueUs(a), slaDueUs(b));
  }
}

/** `rows` sorted by `sort` in `dir` (ties broken by break id, so pages are stable). */
export function sortRows(rows: readonly QueueRow[], sort: SortKey, dir: 'asc' | 'desc'): QueueRow[] {
  const sign = dir === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => sign * compare(a, b, sort) || (a.break_id < b.break_id ? -1 : 1));
}

/** The filtered, sorted rows. `presorted` says `rows` is already in the query's order (the index keeps each order once). */
export function select(rows: readonly QueueRow[], q: QueueQuery, presorted = false): QueueRow[] {
  const out = rows.filter((r) => matches(r, q));
  return presorted ? out : sortRows(out, q.sort, q.dir);
}

/** One page of `rows`: the rows, the page shown (clamped) and the page count. */
export function pageOf<T>(rows: readonly T[], q: Pick<QueueQuery, 'page' | 'size'>): { rows: T[]; page: number; pages: number } {
  const pages = Math.max(1, Math.ceil(rows.length / q.size));
  const page = Math.min(q.page, pages);
  return { rows: rows.slice((page - 1) * q.size, page * q.size), page, pages };
}

const CSV_COLUMNS = ['break_id', 'control_id', 'kind', 'key', 'state', 'version', 'owner', 'owner_assigned', 'classification', 'age_s', 'sla_s', 'sla_breached', 'first_seen', 'last_observed', 'first_record_time', 'as_of', 'pending_approvals', 'detail'] as const;

/** RFC 4180 field: quoted when it holds a comma, quote or line break; a leading = + - @ is prefixed with ' (spreadsheet formulas). */
function csvField(v: unknown): string {
  let s = v === null || v === undefined ? '' : String(v);
  if (/^[=+\-@\t\r]/.test(s) && !/^-?[0-9]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The rows as CSV (header first, CRLF line ends). */
export function toCsv(rows: readonly QueueRow[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) {
    const rec: Record<string, unknown> = { ...r, pending_approvals: r.pending.length };
    lines.push(CSV_COLUMNS.map((c) => csvField(rec[c])).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
