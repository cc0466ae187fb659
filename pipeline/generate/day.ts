/**
 * `reckon generate`: a consistent synthetic trading day for every dataset of CONTRACT §2, at any
 * size, deterministic for a seed, with a small number of injected differences of every kind of
 * CONTRACT §4 at deterministic keys, plus traps that must not fire.
 *
 * The day is built order by order and written as it goes (streaming; memory holds only small
 * aggregates per account, instrument and currency). The consistent part reconciles CLEAN on every
 * control: orders with version logs and outbox events, executions matched one to one by venue
 * fills (venue local time), balanced TRADE posting sets whose DEBIT legs equal the HALF_EVEN
 * notional, balance snapshots at the window start and end that roll forward, reservations that
 * agree with the snapshot, bank statements whose lines reference posting sets and tie to the
 * ledger, custodian positions, positions at the window start, a projection that agrees with the
 * authority, notification intents with receipts. Faults are then injected at "slots" (orders at
 * fixed positions in the day) and on the aggregates, and every difference they must cause is
 * recorded in `_expected.json` beside the datasets, with the generator's own control totals: an
 * independent model the product's answers are checked against.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATASETS, type DatasetSpec } from '../contract/datasets.js';
import type { ControlDefinition } from '../controls/definitions.js';
import { InternalError } from '../core/errors.js';
import { runOutcome } from '../core/outcome.js';
import { decText, notionalMinor } from './decimal.js';
import { Prng } from './prng.js';
import {
  BANK_ACCOUNTS, CLOSED_ACCOUNT, CURRENCIES, CURRENCY_CODES, HOLD_ACCOUNT, INSTRUMENTS, PROVIDER_ZONES, TREASURY_ACCOUNT,
  clientAccountCount, clientAccountId, type BankAccount, type Instrument,
} from './universe.js';
import { DatasetWriter, convertToParquet, type CellText, type OutputFormat, type WrittenFile } from './writers.js';
import { DAY_US, cutoffUs, dateText, dateUs, isoZ, localText, roundTrips } from './zone.js';

/** What to generate. */
export interface GenerateOptions {
  /** Number of orders (≥ 1; ≥ MIN_ORDERS_WITH_FAULTS unless `faults` is false). */
  readonly orders: number;
  /** The business day `YYYY-MM-DD`; the run window is [D 00:00Z, D+1 00:00Z). */
  readonly date: string;
  /** Output folder (one sub-folder per dataset); created if absent, must hold no dataset folders. */
  readonly out: string;
  /** PRNG seed (any text). */
  readonly seed: string;
  /** Default format of every dataset. */
  readonly format: 'csv' | 'parquet';
  /** Per-dataset format overrides (the bundled sample day mixes CSV, JSON Lines and Parquet). */
  readonly formats?: Readonly<Record<string, OutputFormat>>;
  /** In JSON Lines, write decimals, amounts and ints as JSON numbers (default true). */
  readonly jsonNumbers?: boolean;
  /** Inject the differences of CONTRACT §4 (default true). Traps are part of the consistent day either way. */
  readonly faults?: boolean;
  /** Rows per data file before a new part starts (default 2 000 000). */
  readonly rowsPerPart?: number;
}

/** Smallest day that has room for every trap and fault slot. */
export const MIN_ORDERS_WITH_FAULTS = 100;

/** One expected difference: control, kind and key (CONTRACT §4). */
export type ExpectedDifference = readonly [control: string, kind: string, key: string];

/** A totals value as the product reports it: exact text, or dimension → exact text. */
export type TotalValue = string | Record<string, string>;

/** The generator's expectation for the run of `--date D` over the generated sources. */
export interface Expectation {
  readonly generator: { readonly name: 'reckon generate'; readonly version: 1; readonly orders: number; readonly seed: string; readonly date: string; readonly faults: boolean };
  readonly window: { readonly start: string; readonly end: string };
  readonly exit_code: number;
  /** Per control the generator models, of the definitions it was given (by control id). */
  readonly controls: Record<string, { status: 'CLEAN' | 'BREAKS'; differences: [string, string][]; totals: Record<string, TotalValue> }>;
  /** Defined controls the generator has no model for: a run reports them, this expectation does not (absent when none). */
  readonly not_modelled?: readonly string[];
  /** Every injected fault: id, what it is, the differences it must cause. */
  readonly faults: { id: string; description: string; differences: [string, string, string][] }[];
  /** Every trap: id, what must not fire, the records it sits on. */
  readonly traps: { id: string; description: string; refs: string[] }[];
  readonly files: { path: string; rows: number }[];
}

type Side = 'BUY' | 'SELL';
type Status = 'ACCEPTED' | 'ROUTED' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'EXPIRED' | 'REJECTED';

interface VersionRow { version: number; status: Status; at: number; qty: bigint; qtyText?: string; part?: string; extraIngestUs?: number }

type PostingMode = 'normal' | 'none' | 'reversed_only' | 'reversed_replaced' | 'double' | 'half_up';

interface FillPlan {
  execId: string;
  venueFillId: string;
  qty: bigint;
  price: bigint;
  at: number;
  /** Venue side: omitted, or written with other values or other text. */
  venue: { omit?: boolean; qty?: bigint; price?: bigint; qtyText?: string; priceText?: string; seqGapBefore?: boolean };
  posting: PostingMode;
  fee: 'none' | 'normal' | 'unbalanced';
  /** Extra internal execution ids booked for the same venue fill (EXECUTION_DUPLICATE). */
  duplicateExecIds: string[];
}

interface NoticePlan {
  create: boolean;
  required: boolean;
  channel: string;
  receipts: { status: 'DELIVERED' | 'FAILED'; afterUs: number; redeliver?: boolean }[];
  exception: boolean;
  createdAt?: number;
}

interface OrderPlan {
  num: string;
  id: string;
  account: string;
  instrument: Instrument;
  side: Side;
  qty: bigint;
  acceptedAt: number | null;
  versions: VersionRow[];
  fills: FillPlan[];
  /** Venue-only fills (FILL_MISSING_INTERNAL). */
  venueOnly: FillPlan[];
  outbox: { status: 'SENT' | 'PENDING' | 'CLAIMED' } | null;
  notice: NoticePlan;
}

interface KeyState {
  account: string;
  instrument: Instrument;
  startQty: bigint;
  startCost: bigint;
  hasStart: boolean;
  windowQty: bigint;
  windowCost: bigint;
  hasWindowFill: boolean;
  custodianQty: bigint;
}

const TRAP_SLOTS = [
  'trap_equal_decimals', 'trap_half_even_jpy', 'trap_half_even_gbp', 'trap_reversed_replaced', 'trap_redelivered_row',
  'trap_accepted_within_sla', 'trap_carry_over', 'trap_boundary', 'trap_never_accepted', 'trap_notice_within_sla',
  'trap_notice_exception', 'trap_notice_not_required', 'trap_notice_failed_then_delivered', 'trap_receipt_redelivered',
] as const;

const FAULT_SLOTS = [
  'rc01_version_gap', 'rc01_version_conflict', 'rc01_accepted_without_route', 'rc01_outbox_pending', 'rc01_outbox_claimed',
  'rc01_filled_short', 'rc01_routed_with_fill', 'rc02_missing_internal', 'rc02_missing_venue', 'rc02_duplicate',
  'rc02_qty_mismatch', 'rc02_price_mismatch', 'rc02_unknown_order_never_accepted', 'rc02_overfill', 'rc02_sequence_gap',
  'rc03_unbalanced', 'rc03_without_posting', 'rc03_reversed_only', 'rc03_multiple_postings', 'rc03_amount_mismatch',
  'rc06_undelivered', 'rc06_duplicate_receipt',
] as const;

type Slot = (typeof TRAP_SLOTS)[number] | (typeof FAULT_SLOTS)[number];
// The slots each planning method of DayGenerator handles (slotPlan dispatches).
type AmountSlot = Extract<Slot, 'trap_equal_decimals' | 'trap_half_even_jpy' | 'trap_half_even_gbp' | 'rc03_amount_mismatch' | 'trap_reversed_replaced' | 'trap_redelivered_row'>;
type TimingTrap = Extract<Slot, 'trap_accepted_within_sla' | 'trap_carry_over' | 'trap_boundary' | 'trap_never_accepted'>;
type NoticeSlot = Extract<Slot, 'trap_notice_within_sla' | 'trap_notice_exception' | 'trap_notice_not_required' | 'trap_notice_failed_then_delivered' | 'trap_receipt_redelivered' | 'rc06_undelivered' | 'rc06_duplicate_receipt'>;
type Rc01Fault = Extract<Slot, 'rc01_version_gap' | 'rc01_version_conflict' | 'rc01_accepted_without_route' | 'rc01_outbox_pending' | 'rc01_outbox_claimed' | 'rc01_filled_short' | 'rc01_routed_with_fill'>;
type Rc02MatchFault = Extract<Slot, 'rc02_missing_internal' | 'rc02_missing_venue' | 'rc02_duplicate' | 'rc02_qty_mismatch' | 'rc02_price_mismatch'>;
type Rc02OrderFault = Extract<Slot, 'rc02_unknown_order_never_accepted' | 'rc02_overfill' | 'rc02_sequence_gap'>;
type Rc03Fault = Extract<Slot, 'rc03_unbalanced' | 'rc03_without_posting' | 'rc03_reversed_only' | 'rc03_multiple_postings'>;

const SEC = 1_000_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;

const add = (m: Map<string, bigint>, k: string, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);
const signed = (side: Side, v: bigint) => (side === 'BUY' ? v : -v);
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What the generator needs of a control definition (pipeline/controls/definitions.ts). */
export type GeneratedControl = Pick<ControlDefinition, 'control_id' | 'difference_kinds'>;

/**
 * Generates one day into `opts.out` and returns the expectation (also written as `_expected.json`)
 * for `controls`, the loaded control definitions: the expectation lists those of them this
 * generator models (RC01–RC06) and names the others in `not_modelled`. Throws InternalError when
 * the generator injects a kind a definition does not list.
 */
export async function generateDay(opts: GenerateOptions, controls: readonly GeneratedControl[]): Promise<Expectation> {
  const g = new DayGenerator(opts, controls);
  return g.run();
}

class DayGenerator {
  private readonly faults: boolean;
  private readonly start: number;
  private readonly end: number;
  private readonly watermark: number;
  private readonly width: number;
  private readonly accounts: string[];
  private readonly writers = new Map<string, DatasetWriter>();
  private readonly rng: Prng;

  // Counters.
  private ledgerSeq = 0;
  private readonly venueSeq = { prev: new Map<string, number>(), today: new Map<string, number>(), next: new Map<string, number>() };
  private seqGap: { venue: string; missing: number } | null = null;
  private readonly fileDays: Record<'prev' | 'today' | 'next', string>;

  // Aggregates (bounded by accounts × instruments × currencies).
  private readonly keys = new Map<string, KeyState>();
  private readonly netInWindow = new Map<string, bigint>();
  private readonly balanceKeys = new Set<string>();
  private readonly heldAtStart = new Map<string, bigint>();
  private readonly heldAtEnd = new Map<string, bigint>();
  private readonly stmt = new Map<string, { start: number; end: number; lines: number; linesMinor: bigint; ledgerMinor: bigint }>();
  private readonly custodianEnd = new Map<string, number>();

  // Totals of the independent model.
  private readonly t = {
    accepted: 0,
    classes: new Map<string, number>([['CANCELED', 0], ['EXECUTED', 0], ['PENDING', 0], ['REJECTED', 0]]),
    internalFills: 0, venueFills: 0,
    internalNotional: new Map<string, bigint>(), venueNotional: new Map<string, bigint>(),
    debit: new Map<string, bigint>(), credit: new Map<string, bigint>(), setsInWindow: 0,
    intents: 0, delivered: 0, failed: 0, exceptions: 0,
  };

  private readonly expected: { id: string; description: string; differences: [string, string, string][] }[] = [];
  private readonly traps: { id: string; description: string; refs: string[] }[] = [];

  constructor(private readonly opts: GenerateOptions, private readonly controls: readonly GeneratedControl[]) {
    if (!Number.isInteger(opts.orders) || opts.orders < 1) throw new Error('orders must be a positive integer');
    this.faults = opts.faults ?? true;
    if (this.faults && opts.orders < MIN_ORDERS_WITH_FAULTS) throw new Error(`at least ${MIN_ORDERS_WITH_FAULTS} orders are needed to inject every fault (use no faults for smaller days)`);
    this.start = dateUs(opts.date);
    this.end = this.start + DAY_US;
    this.watermark = this.end + MIN;
    this.width = Math.max(6, String(opts.orders).length);
    this.accounts = Array.from({ length: clientAccountCount(opts.orders) }, (_, i) => clientAccountId(i + 1));
    this.rng = new Prng(opts.seed, 'orders');
    this.fileDays = { prev: dateText(this.start, -1).replace(/-/g, ''), today: dateText(this.start).replace(/-/g, ''), next: dateText(this.start, 1).replace(/-/g, '') };
    for (const b of BANK_ACCOUNTS) {
      this.stmt.set(b.accountId, {
        start: cutoffUs(b.zone, dateText(this.start, -1), b.cutoff), end: cutoffUs(b.zone, opts.date, b.cutoff), lines: 0, linesMinor: 0n, ledgerMinor: 0n,
      });
    }
    for (const i of INSTRUMENTS) this.custodianEnd.set(i.custodian.id, cutoffUs(i.custodian.zone, opts.date, i.custodian.cutoff));
  }

  // ---------------------------------------------------------------- output plumbing

  private w(dataset: string): DatasetWriter {
    let wr = this.writers.get(dataset);
    if (!wr) {
      const spec = DATASETS.find((d) => d.name === dataset)!;
      const format = this.opts.formats?.[dataset] ?? this.opts.format;
      wr = new DatasetWriter(this.opts.out, spec, format, { rowsPerPart: this.opts.rowsPerPart ?? 2_000_000, jsonNumbers: this.opts.jsonNumbers ?? true });
      this.writers.set(dataset, wr);
    }
    return wr;
  }

  private inWindow(t: number): boolean {
    return t >= this.start && t < this.end;
  }

  private fault(id: string, description: string, ...diffs: [string, string, string][]): void {
    if (this.faults) this.expected.push({ id, description, differences: diffs });
  }

  private trap(id: string, description: string, ...refs: string[]): void {
    this.traps.push({ id, description, refs });
  }

  private key(account: string, instrument: Instrument): KeyState {
    const k = `${account}|${instrument.id}`;
    let s = this.keys.get(k);
    if (!s) {
      s = { account, instrument, startQty: 0n, startCost: 0n, hasStart: false, windowQty: 0n, windowCost: 0n, hasWindowFill: false, custodianQty: 0n };
      this.keys.set(k, s);
    }
    return s;
  }

  // ---------------------------------------------------------------- the day

  async run(): Promise<Expectation> {
    mkdirSync(this.opts.out, { recursive: true });
    const existing = readdirSync(this.opts.out).filter((n) => DATASETS.some((d) => d.name === n));
    if (existing.length) throw new Error(`${this.opts.out} already holds dataset folders (${existing.join(', ')}); choose an empty folder`);
    for (const d of DATASETS) this.w(d.name);

    this.positionsAtStart();
    const slots = this.slotIndex();
    for (let i = 1; i <= this.opts.orders; i++) this.order(i, slots.get(i));
    this.extraRecords();
    this.cash();
    this.reservations();
    this.balances();
    this.statements();
    this.custodians();
    this.projection();

    const files: { spec: DatasetSpec; file: WrittenFile }[] = [];
    for (const d of DATASETS) for (const file of this.w(d.name).close()) files.push({ spec: d, file });
    await convertToParquet(this.opts.out, files, join(this.opts.out, '.duckdb-tmp'));
    for (const d of DATASETS) {
      writeFileSync(join(this.opts.out, d.name, '_watermark.json'), `${JSON.stringify({ watermark: isoZ(this.watermark), complete: true })}\n`);
    }
    const expectation = this.expectation(files.map((f) => ({ path: f.file.path, rows: f.file.rows })));
    writeFileSync(join(this.opts.out, '_expected.json'), `${JSON.stringify(expectation, null, 2)}\n`);
    return expectation;
  }

  /** Order index → slot: traps always (when the day is big enough), faults when asked, spread evenly. */
  private slotIndex(): Map<number, Slot> {
    const names: Slot[] = [];
    if (this.opts.orders >= MIN_ORDERS_WITH_FAULTS) names.push(...TRAP_SLOTS);
    if (this.faults) names.push(...FAULT_SLOTS);
    const m = new Map<number, Slot>();
    names.forEach((name, j) => m.set(1 + Math.floor(((2 * j + 1) * this.opts.orders) / (2 * names.length)), name));
    return m;
  }

  // ---------------------------------------------------------------- positions at the window start

  private positionsAtStart(): void {
    const r = new Prng(this.opts.seed, 'positions');
    const w = this.w('positions');
    const write = (asOf: number, account: string, inst: Instrument, qty: bigint, cost: bigint, qtyText?: string) =>
      w.write([isoZ(asOf), account, inst.id, qtyText ?? decText(qty, inst.qtyScale), cost.toString(), inst.currency]);
    for (const account of this.accounts) {
      for (const inst of INSTRUMENTS) {
        if (!r.chance(60)) continue;
        const qty = BigInt(r.int(-inst.qtyHi, 3 * inst.qtyHi));
        if (qty === 0n) continue;
        const cost = notionalMinor(qty, inst.qtyScale, BigInt(r.int(inst.priceLo, inst.priceHi)), inst.priceScale, CURRENCIES[inst.currency]);
        const s = this.key(account, inst);
        s.startQty = qty; s.startCost = cost; s.hasStart = true;
        write(this.start, account, inst, qty, cost);
        // Yesterday's snapshot: noise that must never be used (only positions at exactly the window start count).
        if (r.chance(10)) write(this.start - DAY_US, account, inst, qty + BigInt(r.int(1, 50)), cost + BigInt(r.int(1, 5000)));
      }
    }
    // The hold account: positions that never trade, and a zero key that needs no projection row.
    const hold: [string, bigint, bigint, string?][] = [['GB-VODL', 12_000n, 861_000n], ['US-ACME', 300n, 5_512_500n], ['JP-6758', 0n, 0n, '0.000']];
    for (const [id, qty, cost, text] of hold) {
      const inst = INSTRUMENTS.find((i) => i.id === id)!;
      const s = this.key(HOLD_ACCOUNT, inst);
      s.startQty = qty; s.startCost = cost; s.hasStart = true;
      write(this.start, HOLD_ACCOUNT, inst, qty, cost, text);
    }
    this.trap('zero_authority_key', 'an authority key with zero position and zero cost and no projection row: no PROJECTION_KEY_MISSING', `${HOLD_ACCOUNT}|JP-6758`);
  }

  // ---------------------------------------------------------------- orders

  private randomTime(lo: number, hi: number): number {
    return this.rng.wide(lo, hi - 1);
  }

  /** A time for an order's acceptance whose next 20 minutes map cleanly to every local zone used. */
  private acceptTime(lo: number, hi: number, inst: Instrument): number {
    for (let tries = 0; ; tries++) {
      const t = this.randomTime(lo, hi);
      const zones = [inst.venue.zone, ...Object.values(PROVIDER_ZONES)];
      if (tries > 50 || zones.every((z) => roundTrips(z, t) && roundTrips(z, t + 20 * MIN))) return t;
    }
  }

  private split(total: bigint, parts: number): bigint[] {
    const n = total < BigInt(parts) ? Number(total) : parts;
    if (n <= 1) return [total];
    const cuts = new Set<bigint>();
    while (cuts.size < n - 1) cuts.add(BigInt(this.rng.wide(1, Number(total) - 1)));
    const sorted = [...cuts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const out: bigint[] = [];
    let prev = 0n;
    for (const c of sorted) { out.push(c - prev); prev = c; }
    out.push(total - prev);
    return out;
  }

  private fill(plan: OrderPlan, j: number, qty: bigint, price: bigint, at: number): FillPlan {
    return {
      execId: `EXE-${plan.num}-${j}`, venueFillId: `VF-${plan.num}-${j}`, qty, price, at,
      venue: this.rng.chance(10) ? { qtyText: decText(qty, plan.instrument.qtyScale, plan.instrument.qtyScale + 2), priceText: decText(price, plan.instrument.priceScale, plan.instrument.priceScale + 1) } : {},
      posting: 'normal', fee: this.rng.chance(30) ? 'normal' : 'none', duplicateExecIds: [],
    };
  }

  /**
   * A normal order: acceptance, route, fills, terminal state, one version per event. `force` pins
   * the choices a slot needs.
   */
  private plan(i: number, force: { status?: Status | 'NEVER_ACCEPTED'; instrument?: string; fills?: number; qty?: bigint; acceptedAt?: number; price?: bigint; noticeRequired?: boolean } = {}): OrderPlan {
    const r = this.rng;
    const num = String(i).padStart(this.width, '0');
    const instrument = force.instrument ? INSTRUMENTS.find((x) => x.id === force.instrument)! : r.pick(INSTRUMENTS);
    const account = r.pick(this.accounts);
    const side: Side = r.chance(50) ? 'BUY' : 'SELL';
    let qty = force.qty ?? BigInt(r.int(instrument.qtyLo, instrument.qtyHi));
    const status = force.status ?? r.weighted<Status | 'NEVER_ACCEPTED' | 'CANCELED_PARTIAL'>([
      ['FILLED', 55], ['PARTIALLY_FILLED', 10], ['CANCELED', 5], ['CANCELED_PARTIAL', 5], ['EXPIRED', 5], ['REJECTED', 5], ['ROUTED', 12], ['NEVER_ACCEPTED', 3],
    ]);
    if ((status === 'PARTIALLY_FILLED' || status === 'CANCELED_PARTIAL') && qty < 2n) qty = 2n;
    const t0 = force.acceptedAt ?? this.acceptTime(this.start + MIN, this.end - 15 * MIN, instrument);
    const basePrice = force.price ?? BigInt(r.int(instrument.priceLo, instrument.priceHi));
    const plan: OrderPlan = {
      num, id: `ORD-${num}`, account, instrument, side, qty, acceptedAt: t0, versions: [], fills: [], venueOnly: [],
      outbox: { status: 'SENT' },
      notice: { create: true, required: force.noticeRequired ?? r.chance(95), channel: r.chance(80) ? 'EMAIL' : 'SMS', receipts: [], exception: false },
    };
    if (!plan.notice.required && r.chance(50)) plan.notice.receipts = [];
    else plan.notice.receipts = [{ status: 'DELIVERED', afterUs: r.int(5, 300) * SEC + r.int(0, 999_999) }];
    if (status === 'NEVER_ACCEPTED') {
      plan.acceptedAt = null;
      plan.versions.push({ version: 1, status: 'REJECTED', at: t0, qty });
      plan.notice.create = false;
      return plan;
    }
    const routeAt = t0 + r.int(200_000, 1_500_000);
    plan.versions.push({ version: 1, status: 'ACCEPTED', at: t0, qty });
    if (status === 'ACCEPTED') return plan;
    if (status === 'REJECTED') {
      plan.versions.push({ version: 2, status: 'REJECTED', at: routeAt, qty });
      plan.notice.create = false;
      return plan;
    }
    plan.versions.push({ version: 2, status: 'ROUTED', at: routeAt, qty });
    let filled = 0n;
    if (status === 'FILLED') filled = qty;
    else if (status === 'PARTIALLY_FILLED' || status === 'CANCELED_PARTIAL') filled = BigInt(r.wide(1, Number(qty) - 1));
    const parts = filled === 0n ? [] : this.split(filled, force.fills ?? r.int(1, 3));
    let at = routeAt;
    parts.forEach((q, j) => {
      at += r.int(1, 90) * SEC + r.int(0, 999_999);
      const jitter = BigInt(r.int(-3, 3));
      const price = force.price ?? (basePrice + jitter > 0n ? basePrice + jitter : basePrice);
      plan.fills.push(this.fill(plan, j + 1, q, price, at));
      const last = j === parts.length - 1;
      plan.versions.push({ version: plan.versions.length + 1, status: last && status === 'FILLED' ? 'FILLED' : 'PARTIALLY_FILLED', at, qty });
    });
    if (status === 'CANCELED' || status === 'CANCELED_PARTIAL' || status === 'EXPIRED') {
      plan.versions.push({ version: plan.versions.length + 1, status: status === 'EXPIRED' ? 'EXPIRED' : 'CANCELED', at: at + r.int(5, 120) * SEC, qty });
    }
    if (plan.fills.length === 0) plan.notice.create = false;
    return plan;
  }

  private order(i: number, slot: Slot | undefined): void {
    this.emitOrder(slot === undefined ? this.plan(i) : this.slotPlan(i, slot));
  }

  /** The order of a trap (must not fire) or fault slot, planned by the group of slots it belongs to. */
  private slotPlan(i: number, slot: Slot): OrderPlan {
    const early = () => this.acceptTime(this.start + HOUR, this.end - 4 * HOUR, INSTRUMENTS[0]);
    switch (slot) {
      case 'trap_equal_decimals': case 'trap_half_even_jpy': case 'trap_half_even_gbp':
      case 'rc03_amount_mismatch': case 'trap_reversed_replaced': case 'trap_redelivered_row':
        return this.amountSlot(i, slot, early);
      case 'trap_accepted_within_sla': case 'trap_carry_over': case 'trap_boundary':
      case 'trap_never_accepted':
        return this.timingTrap(i, slot);
      case 'trap_notice_within_sla': case 'trap_notice_exception': case 'trap_notice_not_required':
      case 'trap_notice_failed_then_delivered': case 'trap_receipt_redelivered': case 'rc06_undelivered':
      case 'rc06_duplicate_receipt':
        return this.noticeSlot(i, slot, early);
      case 'rc01_version_gap': case 'rc01_version_conflict': case 'rc01_accepted_without_route':
      case 'rc01_outbox_pending': case 'rc01_outbox_claimed': case 'rc01_filled_short':
      case 'rc01_routed_with_fill':
        return this.rc01Fault(i, slot, early);
      case 'rc02_missing_internal': case 'rc02_missing_venue': case 'rc02_duplicate':
      case 'rc02_qty_mismatch': case 'rc02_price_mismatch':
        return this.rc02MatchFault(i, slot, early);
      case 'rc02_unknown_order_never_accepted': case 'rc02_overfill': case 'rc02_sequence_gap':
        return this.rc02OrderFault(i, slot, early);
      case 'rc03_unbalanced': case 'rc03_without_posting': case 'rc03_reversed_only':
      case 'rc03_multiple_postings':
        return this.rc03Fault(i, slot, early);
    }
  }

  /** Traps and faults of written decimals and posted amounts: equal decimals, HALF_EVEN ties (and the half-up posting RC03 finds), a reversed and replaced posting, a row delivered twice. */
  private amountSlot(i: number, slot: AmountSlot, early: () => number): OrderPlan {
    switch (slot) {
      case 'trap_equal_decimals': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, instrument: 'GB-VODL', acceptedAt: early() });
        const f = p.fills[0];
        f.venue = { qtyText: decText(f.qty, 0, 3), priceText: decText(f.price, 4, 6) };
        this.trap(slot, `venue fill written ${f.venue.qtyText} × ${f.venue.priceText}, execution ${decText(f.qty, 0)} × ${decText(f.price, 4)}: equal decimals, no FILL_QTY_MISMATCH or FILL_PRICE_MISMATCH`, `XLON|${f.venueFillId}`);
        return p;
      }
      case 'trap_half_even_jpy':
      case 'trap_half_even_gbp':
      case 'rc03_amount_mismatch': {
        const inst = slot === 'trap_half_even_gbp' ? INSTRUMENTS.find((x) => x.id === 'GB-BARC')! : INSTRUMENTS.find((x) => x.id === 'JP-7203')!;
        const price = BigInt(this.rng.int(inst.priceLo / 10, inst.priceHi / 10 - 1) * 10 + 5);
        let qty = BigInt(this.rng.int(1, 500) * 2 + 1);
        // A tie whose lower neighbour is even: HALF_EVEN rounds down, HALF_UP would round up.
        if (((qty * price - 5n) / 10n) % 2n === 1n) qty += 2n;
        const p = this.plan(i, { status: 'FILLED', fills: 1, instrument: inst.id, qty, price, acceptedAt: early() });
        const f = p.fills[0];
        const even = notionalMinor(f.qty, inst.qtyScale, f.price, inst.priceScale, CURRENCIES[inst.currency]);
        if (slot === 'rc03_amount_mismatch') {
          f.posting = 'half_up';
          this.fault(slot, `TRADE set of ${f.execId} posts ${even + 1n} ${inst.currency} (rounded half up) for ${decText(f.qty, 0)} × ${decText(f.price, inst.priceScale)}; the HALF_EVEN notional is ${even}`, ['RC03', 'POSTING_AMOUNT_MISMATCH', f.execId]);
        } else {
          this.trap(slot, `${decText(f.qty, 0)} × ${decText(f.price, inst.priceScale)} ${inst.currency} is a rounding tie: HALF_EVEN gives ${even} (HALF_UP would give ${even + 1n}); the ledger posts ${even}: no POSTING_AMOUNT_MISMATCH`, f.execId);
        }
        return p;
      }
      case 'trap_reversed_replaced': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early() });
        p.fills[0].posting = 'reversed_replaced';
        this.trap(slot, 'a TRADE set with a wrong amount, reversed by a REVERSAL set and replaced by a correct one: one unreversed TRADE set, no EXECUTION_MULTIPLE_POSTINGS or POSTING_AMOUNT_MISMATCH', p.fills[0].execId, `PS-T${p.num}-1`, `PS-V${p.num}-1`, `PS-T${p.num}-1R`);
        return p;
      }
      case 'trap_redelivered_row': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early() });
        const v = p.versions[1];
        p.versions.push({ ...v, qtyText: decText(p.qty, p.instrument.qtyScale, p.instrument.qtyScale + 3), part: 'redelivery-00001', extraIngestUs: 3 * HOUR });
        this.trap(slot, `version 2 of ${p.id} delivered again in a second file, 3 h later, with ordered_qty written ${decText(p.qty, p.instrument.qtyScale, p.instrument.qtyScale + 3)}: the same delivery, counted once, no ORDER_VERSION_CONFLICT`, p.id);
        return p;
      }
    }
  }

  /** Traps of time: within the route SLA, carried over from the day before, at the window end, never accepted. */
  private timingTrap(i: number, slot: TimingTrap): OrderPlan {
    switch (slot) {
      case 'trap_accepted_within_sla': {
        const p = this.plan(i, { status: 'ACCEPTED', acceptedAt: this.end - 30 * SEC });
        p.outbox = { status: 'PENDING' };
        this.trap(slot, 'accepted 30 s before the window end, still ACCEPTED and its outbox event PENDING: 90 s old at the as-of, within the 120 s route SLA: no ACCEPTED_WITHOUT_ROUTE or OUTBOX_UNPUBLISHED', p.id);
        return p;
      }
      case 'trap_carry_over': {
        const acc = this.start - 2 * MIN;
        const p = this.plan(i, { status: 'FILLED', fills: 2, acceptedAt: acc });
        const route = acc + 500_000;
        p.versions = [{ version: 1, status: 'ACCEPTED', at: acc, qty: p.qty }, { version: 2, status: 'ROUTED', at: route, qty: p.qty }];
        p.fills[0].at = this.start - MIN + 123_456;
        p.fills[1].at = this.start + 30 * SEC + 654_321;
        p.versions.push({ version: 3, status: 'PARTIALLY_FILLED', at: p.fills[0].at, qty: p.qty }, { version: 4, status: 'FILLED', at: p.fills[1].at, qty: p.qty });
        this.trap(slot, 'accepted the day before and filled across midnight: out of RC01 scope; its in-window execution has an accepted order (no EXECUTION_UNKNOWN_ORDER) and its venue fill numbers continue today\'s sequence', p.id, p.fills[1].execId);
        return p;
      }
      case 'trap_boundary': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: this.end });
        p.fills[0].at = this.end + 20 * SEC;
        p.versions[2].at = p.fills[0].at;
        this.trap(slot, 'accepted exactly at the window end and filled 20 s later: outside every control\'s scope (half-open window)', p.id, p.fills[0].execId);
        return p;
      }
      case 'trap_never_accepted': {
        const p = this.plan(i, { status: 'NEVER_ACCEPTED' });
        this.trap(slot, 'an order rejected before acceptance (empty accepted_at): outside RC01 scope', p.id);
        return p;
      }
    }
  }

  /** Notices and their receipts (RC06): traps that must not fire and the two faults. */
  private noticeSlot(i: number, slot: NoticeSlot, early: () => number): OrderPlan {
    switch (slot) {
      case 'trap_notice_within_sla': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: this.end - 22 * MIN, noticeRequired: true });
        p.fills[0].at = p.versions[1].at + 30 * SEC;
        p.versions[2].at = p.fills[0].at;
        p.notice.receipts = [];
        this.trap(slot, 'a required intent created about 21 minutes before the window end with no receipt yet: within the 3600 s notice SLA, no NOTICE_UNDELIVERED', `INT-${p.num}`);
        return p;
      }
      case 'trap_notice_exception': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early(), noticeRequired: true });
        p.notice.receipts = [{ status: 'FAILED', afterUs: 40 * SEC }];
        p.notice.exception = true;
        this.trap(slot, 'a required intent whose only receipt FAILED, covered by an approved exception: no NOTICE_UNDELIVERED', `INT-${p.num}`);
        return p;
      }
      case 'trap_notice_not_required': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early(), noticeRequired: false });
        p.notice.receipts = [];
        this.trap(slot, 'an intent that is not required, never delivered: no NOTICE_UNDELIVERED', `INT-${p.num}`);
        return p;
      }
      case 'trap_notice_failed_then_delivered': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early(), noticeRequired: true });
        p.notice.receipts = [{ status: 'FAILED', afterUs: 20 * SEC }, { status: 'DELIVERED', afterUs: 200 * SEC }];
        this.trap(slot, 'a FAILED receipt then a DELIVERED one under another receipt_id: delivered once, no NOTICE_DUPLICATE_RECEIPT', `INT-${p.num}`);
        return p;
      }
      case 'trap_receipt_redelivered': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early(), noticeRequired: true });
        p.notice.receipts = [{ status: 'DELIVERED', afterUs: 50 * SEC, redeliver: true }];
        this.trap(slot, 'the same DELIVERED receipt delivered twice (identical rows in two files): one receipt_id, no NOTICE_DUPLICATE_RECEIPT', `INT-${p.num}`, `RCP-${p.num}-1`);
        return p;
      }
      case 'rc06_undelivered': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early(), noticeRequired: true });
        p.notice.receipts = [{ status: 'FAILED', afterUs: 30 * SEC }];
        this.fault(slot, `required intent INT-${p.num} has only a FAILED receipt and no exception`, ['RC06', 'NOTICE_UNDELIVERED', `INT-${p.num}`]);
        return p;
      }
      case 'rc06_duplicate_receipt': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early(), noticeRequired: true });
        p.notice.receipts = [{ status: 'DELIVERED', afterUs: 30 * SEC }, { status: 'DELIVERED', afterUs: 95 * SEC }];
        this.fault(slot, `required intent INT-${p.num} has DELIVERED receipts RCP-${p.num}-1 and RCP-${p.num}-2`, ['RC06', 'NOTICE_DUPLICATE_RECEIPT', `INT-${p.num}`]);
        return p;
      }
    }
  }

  /** RC01 faults: order versions, routing and the outbox, fill state. */
  private rc01Fault(i: number, slot: Rc01Fault, early: () => number): OrderPlan {
    switch (slot) {
      case 'rc01_version_gap': {
        const p = this.plan(i, { status: 'FILLED', fills: 2, acceptedAt: early() });
        p.versions = p.versions.filter((v) => v.version !== 3);
        this.fault(slot, `${p.id} has versions 1, 2, 4: version 3 is missing`, ['RC01', 'ORDER_VERSION_GAP', p.id]);
        return p;
      }
      case 'rc01_version_conflict': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early() });
        p.versions.push({ ...p.versions[1], at: p.versions[1].at + SEC });
        this.fault(slot, `${p.id} version 2 delivered twice with different event_at`, ['RC01', 'ORDER_VERSION_CONFLICT', `${p.id}|2`]);
        return p;
      }
      case 'rc01_accepted_without_route': {
        const p = this.plan(i, { status: 'ACCEPTED', acceptedAt: early() });
        this.fault(slot, `${p.id} is still ACCEPTED hours after acceptance (its outbox event was SENT)`, ['RC01', 'ACCEPTED_WITHOUT_ROUTE', p.id]);
        return p;
      }
      case 'rc01_outbox_pending':
      case 'rc01_outbox_claimed': {
        const p = this.plan(i, { status: 'ROUTED', acceptedAt: early() });
        p.outbox = { status: slot === 'rc01_outbox_pending' ? 'PENDING' : 'CLAIMED' };
        this.fault(slot, `${p.id}'s only outbox event is ${p.outbox.status}, never SENT`, ['RC01', 'OUTBOX_UNPUBLISHED', p.id]);
        return p;
      }
      case 'rc01_filled_short': {
        const p = this.plan(i, { status: 'FILLED', fills: 2, acceptedAt: early(), qty: BigInt(this.rng.int(20, 2000)) });
        const f = p.fills[0].qty > 1n ? p.fills[0] : p.fills[1];
        f.qty -= 1n;
        this.fault(slot, `${p.id} is FILLED but its executions sum to one unit less than ordered_qty`, ['RC01', 'ORDER_FILL_STATE_MISMATCH', p.id]);
        return p;
      }
      case 'rc01_routed_with_fill': {
        const p = this.plan(i, { status: 'PARTIALLY_FILLED', fills: 1, acceptedAt: early() });
        p.versions = p.versions.slice(0, 2);
        this.fault(slot, `${p.id} has an execution but its current status is still ROUTED`, ['RC01', 'ORDER_FILL_STATE_MISMATCH', p.id]);
        return p;
      }
    }
  }

  /** RC02 faults of matching venue fills with executions: one side missing, booked twice, quantity or price differing. */
  private rc02MatchFault(i: number, slot: Rc02MatchFault, early: () => number): OrderPlan {
    switch (slot) {
      case 'rc02_missing_internal': {
        const qty = BigInt(this.rng.int(10, 500)) * 4n;
        const p = this.plan(i, { status: 'CANCELED', acceptedAt: early(), qty });
        const at = p.versions[1].at + 10 * SEC;
        p.fills = [this.fill(p, 1, qty / 4n, BigInt(this.rng.int(p.instrument.priceLo, p.instrument.priceHi)), at)];
        const extra = this.fill(p, 2, qty / 4n, p.fills[0].price, at + 20 * SEC);
        extra.venue = {};
        p.venueOnly = [extra];
        p.versions = [p.versions[0], p.versions[1], { version: 3, status: 'PARTIALLY_FILLED', at, qty }, { version: 4, status: 'CANCELED', at: at + 60 * SEC, qty }];
        p.notice.create = true;
        this.fault(slot, `the venue reports a second fill of ${p.id} (CANCELED) that the internal execution system never booked`, ['RC02', 'FILL_MISSING_INTERNAL', `${p.instrument.venue.id}|${extra.venueFillId}`]);
        return p;
      }
      case 'rc02_missing_venue': {
        const p = this.plan(i, { status: 'FILLED', fills: 2, acceptedAt: early(), qty: BigInt(this.rng.int(20, 2000)) });
        p.fills[1].venue = { omit: true };
        this.fault(slot, `execution ${p.fills[1].execId} has no venue fill`, ['RC02', 'FILL_MISSING_VENUE', `${p.instrument.venue.id}|${p.fills[1].venueFillId}`]);
        return p;
      }
      case 'rc02_duplicate': {
        const qty = BigInt(this.rng.int(10, 500)) * 4n;
        const p = this.plan(i, { status: 'CANCELED', acceptedAt: early(), qty });
        const at = p.versions[1].at + 10 * SEC;
        p.fills = [this.fill(p, 1, qty / 4n, BigInt(this.rng.int(p.instrument.priceLo, p.instrument.priceHi)), at)];
        p.fills[0].duplicateExecIds = [`EXE-${p.num}-1B`];
        p.versions = [p.versions[0], p.versions[1], { version: 3, status: 'PARTIALLY_FILLED', at, qty }, { version: 4, status: 'CANCELED', at: at + 60 * SEC, qty }];
        p.notice.create = true;
        this.fault(slot, `one venue fill booked twice internally as ${p.fills[0].execId} and EXE-${p.num}-1B (both posted; the order was CANCELED, so no fill-state difference)`, ['RC02', 'EXECUTION_DUPLICATE', `${p.instrument.venue.id}|${p.fills[0].venueFillId}`]);
        return p;
      }
      case 'rc02_qty_mismatch': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early() });
        const f = p.fills[0];
        f.venue = { qty: f.qty + 1n };
        this.fault(slot, `venue fill ${f.venueFillId} says ${decText(f.qty + 1n, p.instrument.qtyScale)}, execution ${decText(f.qty, p.instrument.qtyScale)}`, ['RC02', 'FILL_QTY_MISMATCH', `${p.instrument.venue.id}|${f.venueFillId}`]);
        return p;
      }
      case 'rc02_price_mismatch': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early() });
        const f = p.fills[0];
        f.venue = { price: f.price + 1n };
        this.fault(slot, `venue fill ${f.venueFillId} price ${decText(f.price + 1n, p.instrument.priceScale)}, execution ${decText(f.price, p.instrument.priceScale)}`, ['RC02', 'FILL_PRICE_MISMATCH', `${p.instrument.venue.id}|${f.venueFillId}`]);
        return p;
      }
    }
  }

  /** RC02 faults of an order and its venue sequence: an execution of an order never accepted, an overfill, a gap in the venue sequence. */
  private rc02OrderFault(i: number, slot: Rc02OrderFault, early: () => number): OrderPlan {
    switch (slot) {
      case 'rc02_unknown_order_never_accepted': {
        const p = this.plan(i, { status: 'NEVER_ACCEPTED', acceptedAt: early() });
        p.fills = [this.fill(p, 1, p.qty, BigInt(this.rng.int(p.instrument.priceLo, p.instrument.priceHi)), p.versions[0].at + 5 * SEC)];
        this.fault(slot, `execution ${p.fills[0].execId} belongs to ${p.id}, which was never accepted (empty accepted_at)`, ['RC02', 'EXECUTION_UNKNOWN_ORDER', p.fills[0].execId]);
        return p;
      }
      case 'rc02_overfill': {
        const k = BigInt(this.rng.int(2, 200));
        const p = this.plan(i, { status: 'CANCELED', acceptedAt: early(), qty: 10n * k });
        const t = p.versions[1].at;
        const price = BigInt(this.rng.int(p.instrument.priceLo, p.instrument.priceHi));
        p.fills = [this.fill(p, 1, 4n * k, price, t + 10 * SEC), this.fill(p, 2, 3n * k, price, t + 40 * SEC)];
        p.versions = [p.versions[0], p.versions[1],
          { version: 3, status: 'PARTIALLY_FILLED', at: t + 10 * SEC, qty: 10n * k }, { version: 4, status: 'PARTIALLY_FILLED', at: t + 40 * SEC, qty: 10n * k },
          { version: 5, status: 'CANCELED', at: t + 90 * SEC, qty: 5n * k }];
        p.notice.create = true;
        this.fault(slot, `${p.id} was amended down to ${decText(5n * k, p.instrument.qtyScale)} and canceled after fills of ${decText(7n * k, p.instrument.qtyScale)} (CANCELED, so no fill-state difference)`, ['RC02', 'ORDER_OVERFILL', p.id]);
        return p;
      }
      case 'rc02_sequence_gap': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, instrument: 'GB-VODL', acceptedAt: early() });
        p.fills[0].venue = { seqGapBefore: true };
        return p; // recorded when the gap is known (end of the day)
      }
    }
  }

  /** RC03 faults of postings: unbalanced, missing, reversed only, posted twice (the half-up amount is in amountSlot). */
  private rc03Fault(i: number, slot: Rc03Fault, early: () => number): OrderPlan {
    switch (slot) {
      case 'rc03_unbalanced': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early() });
        p.fills[0].fee = 'unbalanced';
        this.fault(slot, `fee set PS-F${p.num}-1 debits 45 minor units more than it credits`, ['RC03', 'POSTING_SET_UNBALANCED', `PS-F${p.num}-1|${p.instrument.currency}`]);
        return p;
      }
      case 'rc03_without_posting': {
        const p = this.plan(i, { status: 'FILLED', fills: 2, acceptedAt: early(), qty: BigInt(this.rng.int(20, 2000)) });
        p.fills[1].posting = 'none';
        p.fills[1].fee = 'none';
        this.fault(slot, `execution ${p.fills[1].execId} was never posted`, ['RC03', 'EXECUTION_WITHOUT_POSTING', p.fills[1].execId]);
        return p;
      }
      case 'rc03_reversed_only': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early() });
        p.fills[0].posting = 'reversed_only';
        this.fault(slot, `the TRADE set of ${p.fills[0].execId} was reversed and never replaced`, ['RC03', 'EXECUTION_WITHOUT_POSTING', p.fills[0].execId]);
        return p;
      }
      case 'rc03_multiple_postings': {
        const p = this.plan(i, { status: 'FILLED', fills: 1, acceptedAt: early() });
        p.fills[0].posting = 'double';
        this.fault(slot, `execution ${p.fills[0].execId} posted twice (PS-T${p.num}-1 and PS-T${p.num}-1D)`, ['RC03', 'EXECUTION_MULTIPLE_POSTINGS', p.fills[0].execId]);
        return p;
      }
    }
  }

  // ---------------------------------------------------------------- writing one order

  /** Writes an order's rows and everything that follows from it; `orderRows` false writes only its executions and their consequences. */
  private emitOrder(p: OrderPlan, orderRows = true): void {
    const r = this.rng;
    const inst = p.instrument;
    const exp = CURRENCIES[inst.currency];
    const acceptedText = p.acceptedAt === null ? null : isoZ(p.acceptedAt);

    // RC01 model: scope by acceptance time; current state = highest version.
    if (p.acceptedAt !== null && this.inWindow(p.acceptedAt)) {
      this.t.accepted += 1;
      const current = p.versions.reduce((a, b) => (b.version >= a.version ? b : a));
      const cls = current.status === 'FILLED' || current.status === 'PARTIALLY_FILLED' ? 'EXECUTED' : current.status === 'ACCEPTED' || current.status === 'ROUTED' ? 'PENDING'
        : current.status === 'REJECTED' ? 'REJECTED' : 'CANCELED';
      this.t.classes.set(cls, this.t.classes.get(cls)! + 1);
    }
    for (const v of orderRows ? p.versions : []) {
      const ingested = v.at + 2 * SEC + r.int(0, 999_999) + (v.extraIngestUs ?? 0);
      this.w('orders').write([acceptedText, p.id, String(v.version), `C${p.num}`, p.account, inst.id, p.side, v.qtyText ?? decText(v.qty, inst.qtyScale), v.status, isoZ(v.at), isoZ(ingested)], v.part);
    }

    // Outbox: OrderAccepted (or OrderRejected), then OrderFilled once filled.
    if (p.outbox && orderRows) {
      const firstAt = p.versions[0].at;
      const sent = p.outbox.status === 'SENT';
      this.w('outbox_events').write([isoZ(firstAt), `EV-${p.num}-1`, p.id, p.acceptedAt === null ? 'OrderRejected' : 'OrderAccepted', p.outbox.status, sent ? isoZ(firstAt + 450_000) : null]);
      if (sent && p.fills.length > 0) {
        const at = p.fills[p.fills.length - 1].at + 300_000;
        this.w('outbox_events').write([isoZ(at), `EV-${p.num}-2`, p.id, 'OrderFilled', 'SENT', isoZ(at + 400_000)]);
      }
    }

    // Executions, venue fills, postings, positions.
    const ks = this.key(p.account, inst);
    for (const f of p.fills) {
      const notional = notionalMinor(f.qty, inst.qtyScale, f.price, inst.priceScale, exp);
      for (const execId of [f.execId, ...f.duplicateExecIds]) {
        const seq = execId === f.execId ? Number(f.execId.split('-').pop()) : p.fills.length + 1;
        this.w('executions').write([isoZ(f.at), execId, p.id, p.account, inst.venue.id, f.venueFillId, inst.id, p.side, decText(f.qty, inst.qtyScale), decText(f.price, inst.priceScale), inst.currency, String(seq), isoZ(f.at + 2 * SEC + r.int(0, 999_999))]);
        if (this.inWindow(f.at)) {
          this.t.internalFills += 1;
          add(this.t.internalNotional, inst.currency, notional);
          ks.windowQty += signed(p.side, f.qty);
          ks.windowCost += signed(p.side, notional);
          ks.hasWindowFill = true;
        }
        if (f.at >= this.start && f.at < this.custodianEnd.get(inst.custodian.id)!) ks.custodianQty += signed(p.side, f.qty);
        this.postTrade(p, f, execId === f.execId ? f.posting : 'normal', execId, notional, execId === f.execId ? '' : 'B');
        if (execId === f.execId) this.postFee(p, f, notional);
      }
      if (!f.venue.omit) this.venueFill(p, f);
    }
    for (const f of p.venueOnly) this.venueFill(p, f);

    // Notification intent and receipts.
    if (p.notice.create && p.fills.length > 0) this.notice(p);
  }

  private venueFill(p: OrderPlan, f: FillPlan): void {
    const inst = p.instrument;
    const venue = inst.venue;
    const which = f.at < this.start ? 'prev' : f.at >= this.end ? 'next' : 'today';
    const counter = this.venueSeq[which];
    let seq = (counter.get(venue.id) ?? 0) + 1;
    if (f.venue.seqGapBefore && which === 'today' && this.faults && seq > 1) {
      this.seqGap = { venue: venue.id, missing: seq };
      seq += 1;
    }
    counter.set(venue.id, seq);
    const qty = f.venue.qty ?? f.qty;
    const price = f.venue.price ?? f.price;
    const fileDay = this.fileDays[which];
    this.w('venue_fills').write([
      localText(venue.zone, f.at), venue.zone, venue.id, f.venueFillId, p.id, inst.id, p.side,
      f.venue.qtyText ?? decText(qty, inst.qtyScale), f.venue.priceText ?? decText(price, inst.priceScale), inst.currency, String(seq), `${venue.id}-${fileDay}`,
    ]);
    if (which === 'today') {
      this.t.venueFills += 1;
      add(this.t.venueNotional, inst.currency, notionalMinor(qty, inst.qtyScale, price, inst.priceScale, CURRENCIES[inst.currency]));
    }
  }

  /** Writes one posting set: legs `[account, direction, amount]`, all at `at`. */
  private postingSet(id: string, at: number, currency: string, kind: string, execId: string | null, reverses: string | null, legs: [string, 'DEBIT' | 'CREDIT', bigint][], legKinds?: string[]): void {
    const inWin = this.inWindow(at);
    if (inWin) this.t.setsInWindow += 1;
    legs.forEach(([account, dir, amount], n) => {
      this.ledgerSeq += 1;
      this.w('ledger_postings').write([isoZ(at), id, String(n + 1), account, currency, dir, amount.toString(), legKinds?.[n] ?? kind, execId, reverses, String(this.ledgerSeq), isoZ(at + SEC + this.rng.int(0, 999_999))]);
      const k = `${account}|${currency}`;
      this.balanceKeys.add(k);
      if (inWin) {
        add(this.netInWindow, k, dir === 'CREDIT' ? amount : -amount);
        add(dir === 'DEBIT' ? this.t.debit : this.t.credit, currency, amount);
      }
      const s = this.stmt.get(account);
      const bank = BANK_ACCOUNTS.find((b) => b.accountId === account);
      if (s && bank && bank.currency === currency && at >= s.start && at < s.end) s.ledgerMinor += dir === 'DEBIT' ? amount : -amount;
    });
  }

  private tradeLegs(p: OrderPlan, amount: bigint, reverse = false): [string, 'DEBIT' | 'CREDIT', bigint][] {
    const clr = `CLR-${p.instrument.currency}`;
    const buy = (p.side === 'BUY') !== reverse;
    return buy ? [[p.account, 'DEBIT', amount], [clr, 'CREDIT', amount]] : [[clr, 'DEBIT', amount], [p.account, 'CREDIT', amount]];
  }

  private postTrade(p: OrderPlan, f: FillPlan, mode: PostingMode, execId: string, notional: bigint, suffix: string): void {
    const ccy = p.instrument.currency;
    const j = f.execId.split('-').pop();
    const id = `PS-T${p.num}-${j}${suffix}`;
    const later = f.at + 10 * MIN;
    switch (mode) {
      case 'none': return;
      case 'normal': this.postingSet(id, f.at, ccy, 'TRADE', execId, null, this.tradeLegs(p, notional)); return;
      case 'half_up': {
        const up = notionalMinor(f.qty, p.instrument.qtyScale, f.price, p.instrument.priceScale, CURRENCIES[ccy], true);
        this.postingSet(id, f.at, ccy, 'TRADE', execId, null, this.tradeLegs(p, up));
        return;
      }
      case 'double':
        this.postingSet(id, f.at, ccy, 'TRADE', execId, null, this.tradeLegs(p, notional));
        this.postingSet(`${id}D`, f.at + 5 * MIN, ccy, 'TRADE', execId, null, this.tradeLegs(p, notional));
        return;
      case 'reversed_only':
      case 'reversed_replaced': {
        const wrong = mode === 'reversed_replaced' ? notional + 100n : notional;
        this.postingSet(id, f.at, ccy, 'TRADE', execId, null, this.tradeLegs(p, wrong));
        this.postingSet(`PS-V${p.num}-${j}`, later, ccy, 'REVERSAL', execId, id, this.tradeLegs(p, wrong, true));
        if (mode === 'reversed_replaced') this.postingSet(`${id}R`, later, ccy, 'TRADE', execId, null, this.tradeLegs(p, notional));
        return;
      }
    }
  }

  private postFee(p: OrderPlan, f: FillPlan, notional: bigint): void {
    if (f.fee === 'none') return;
    const ccy = p.instrument.currency;
    const fee = (notional < 0n ? -notional : notional) / 1000n + (f.fee === 'unbalanced' ? 50n : 1n);
    const credit = f.fee === 'unbalanced' ? fee - 45n : fee;
    const j = f.execId.split('-').pop();
    this.postingSet(`PS-F${p.num}-${j}`, f.at, ccy, 'FEE', f.execId, null, [[p.account, 'DEBIT', fee], [`FEES-${ccy}`, 'CREDIT', credit]]);
  }

  private notice(p: OrderPlan): void {
    const n = p.notice;
    const created = p.fills[0].at + SEC + this.rng.int(0, 999_999);
    const intentId = `INT-${p.num}`;
    this.w('notification_intents').write([isoZ(created), intentId, p.id, 'fill-v3', n.channel, String(n.required), isoZ(created + DAY_US)]);
    const zone = PROVIDER_ZONES[n.channel];
    n.receipts.forEach((rc, k) => {
      const at = created + rc.afterUs;
      const row: CellText[] = [localText(zone, at), zone, `RCP-${p.num}-${k + 1}`, intentId, n.channel, rc.status];
      this.w('notification_receipts').write(row);
      if (rc.redeliver) this.w('notification_receipts').write(row, 'redelivery-00001');
    });
    if (n.exception) {
      this.w('notification_exceptions').write([isoZ(created + 30 * MIN), intentId, 'ops.lead', 'customer asked by phone, "no e-mail please"']);
    }
    if (n.required && this.inWindow(created)) {
      this.t.intents += 1;
      const delivered = n.receipts.some((x) => x.status === 'DELIVERED');
      if (delivered) this.t.delivered += 1;
      else if (n.receipts.length > 0) this.t.failed += 1;
      if (n.exception) this.t.exceptions += 1;
    }
  }

  // ---------------------------------------------------------------- records that belong to no order

  private extraRecords(): void {
    if (!this.faults) return;
    // An execution (venue-matched and posted) for an order that exists nowhere.
    const inst = INSTRUMENTS[0];
    const p: OrderPlan = {
      num: 'GHOST', id: 'ORD-GHOST-1', account: this.accounts[0], instrument: inst, side: 'BUY', qty: 10n, acceptedAt: null, versions: [], venueOnly: [],
      fills: [], outbox: null, notice: { create: false, required: false, channel: 'EMAIL', receipts: [], exception: false },
    };
    p.fills.push({ execId: 'EXE-GHOST-1', venueFillId: 'VF-GHOST-1', qty: 10n, price: 18_000n, at: this.start + 11 * HOUR + 123_457, venue: {}, posting: 'normal', fee: 'none', duplicateExecIds: [] });
    this.emitOrder(p, false);
    this.fault('rc02_unknown_order_absent', 'execution EXE-GHOST-1 names ORD-GHOST-1, which is not in the orders extract', ['RC02', 'EXECUTION_UNKNOWN_ORDER', 'EXE-GHOST-1']);
    // A receipt for an intent that does not exist.
    const at = this.start + 10 * HOUR + 777;
    this.w('notification_receipts').write([localText(PROVIDER_ZONES.EMAIL, at), PROVIDER_ZONES.EMAIL, 'RCP-GHOST-1', 'INT-GHOST-1', 'EMAIL', 'DELIVERED']);
    this.fault('rc06_receipt_unknown_intent', 'receipt RCP-GHOST-1 names INT-GHOST-1, which is not in the intents extract', ['RC06', 'NOTICE_RECEIPT_UNKNOWN_INTENT', 'RCP-GHOST-1']);
    if (this.seqGap) {
      const max = this.venueSeq.today.get(this.seqGap.venue) ?? 0;
      if (this.seqGap.missing < max) this.fault('rc02_sequence_gap', `${this.seqGap.venue} venue_seq ${this.seqGap.missing} was skipped`, ['RC02', 'VENUE_SEQUENCE_GAP', `${this.seqGap.venue}|${this.seqGap.missing}`]);
    }
  }

  // ---------------------------------------------------------------- cash, bank statements

  private cash(): void {
    const r = new Prng(this.opts.seed, 'cash');
    const count = Math.max(25, Math.round(this.opts.orders / 20));
    const lines = this.w('bank_statement_lines');
    const lineIds = new Map<string, number>();
    const emit = (c: string, bank: BankAccount, account: string, amount: bigint, deposit: boolean, at: number, fault?: 'omit' | 'short' | 'unreferenced') => {
      const id = `PS-C${c}`;
      const legs: [string, 'DEBIT' | 'CREDIT', bigint][] = deposit ? [[bank.accountId, 'DEBIT', amount], [account, 'CREDIT', amount]] : [[bank.accountId, 'CREDIT', amount], [account, 'DEBIT', amount]];
      this.postingSet(id, at, bank.currency, 'CASH', null, null, legs);
      const s = this.stmt.get(bank.accountId)!;
      if (at < s.start || at >= s.end || fault === 'omit') return;
      const n = (lineIds.get(bank.accountId) ?? 0) + 1;
      lineIds.set(bank.accountId, n);
      const lineId = `L${String(n).padStart(5, '0')}`;
      const lineAmount = (deposit ? amount : -amount) - (fault === 'short' ? 250n : 0n);
      const localDate = localText(bank.zone, at).slice(0, 10);
      lines.write([this.statementId(bank, this.opts.date), lineId, lineAmount.toString(), localDate, fault === 'unreferenced' ? null : id]);
      s.lines += 1;
      s.linesMinor += lineAmount;
    };
    const afterCutoff: string[] = [];
    const nb = BANK_ACCOUNTS.length;
    for (let c = 0; c < count; c++) {
      // The first three rounds give every statement lines (faults sit on the first line of some);
      // the fourth round posts cash after each cutoff, inside the window: tomorrow's statement.
      const round = Math.floor(c / nb);
      const bank = round < 4 ? BANK_ACCOUNTS[c % nb] : r.pick(BANK_ACCOUNTS);
      const s = this.stmt.get(bank.accountId)!;
      let at: number;
      if (round < 3) at = r.wide(Math.max(s.start, s.end - 20 * HOUR), s.end - 1);
      else if (round === 3 && s.end < this.end) { at = r.wide(s.end, this.end - 1); afterCutoff.push(`PS-C${String(c).padStart(5, '0')}`); }
      else at = r.wide(s.start, Math.max(s.end, this.end) - 1);
      const amount = BigInt(r.int(1_000, 5_000_000));
      const deposit = r.chance(65);
      let fault: 'omit' | 'short' | 'unreferenced' | undefined;
      const cid = String(c).padStart(5, '0');
      const stmtId = this.statementId(bank, this.opts.date);
      if (this.faults && c === 0) {
        fault = 'omit';
        this.fault('rc04_line_missing', `the ${bank.bankId} statement has no line for cash set PS-C${cid}`, ['RC04', 'LEDGER_CASH_UNMATCHED', `PS-C${cid}`], ['RC04', 'BANK_CASH_MISMATCH', stmtId]);
      } else if (this.faults && c === 3) {
        fault = 'short';
        this.fault('rc04_line_short', `the ${bank.bankId} statement's first line is 250 minor units short of cash set PS-C${cid} (a bank charge netted)`, ['RC04', 'BANK_LINE_UNMATCHED', `${stmtId}|L00001`], ['RC04', 'BANK_CASH_MISMATCH', stmtId]);
      } else if (this.faults && c === 4) {
        fault = 'unreferenced';
        this.fault('rc04_line_unreferenced', `the ${bank.bankId} statement's first line carries no reference; cash set PS-C${cid} is therefore unmatched`, ['RC04', 'BANK_LINE_UNMATCHED', `${stmtId}|L00001`], ['RC04', 'LEDGER_CASH_UNMATCHED', `PS-C${cid}`]);
      }
      emit(cid, bank, r.pick(this.accounts), amount, deposit, at, fault);
    }
    // The treasury sweep: an amount beyond 2^53 minor units, exact end to end.
    const citi = BANK_ACCOUNTS.find((b) => b.bankId === 'CITI')!;
    emit('TREASURY', citi, TREASURY_ACCOUNT, 9_007_199_254_740_993n, true, this.start + 9 * HOUR + 1);
    this.trap('cash_after_cutoff', 'cash posted on a bank account after its statement cutoff (inside the window) belongs to the next statement: no LEDGER_CASH_UNMATCHED', ...afterCutoff);
    this.trap('amount_beyond_2_53', 'a treasury deposit of 9007199254740993 minor units (2^53 + 1) stays exact in the ledger, the bank line and every total', 'PS-CTREASURY');
  }

  private statementId(bank: BankAccount, date: string): string {
    return `ST-${bank.bankId}-${date}`;
  }

  private statements(): void {
    const r = new Prng(this.opts.seed, 'statements');
    const w = this.w('bank_statements');
    const d = this.opts.date;
    for (const bank of BANK_ACCOUNTS) {
      const s = this.stmt.get(bank.accountId)!;
      const opening = BigInt(r.int(100_000, 9_999_999)) * 1000n;
      let closing = opening + s.linesMinor;
      const row = (date: string, seq: number, open: bigint, close: bigint, complete: boolean) =>
        w.write([date, bank.zone, bank.cutoff, this.statementId(bank, date), bank.bankId, bank.accountId, bank.currency, String(seq), open.toString(), close.toString(), String(complete), `F-${bank.bankId}-${date.replace(/-/g, '')}`]);
      if (this.faults && bank.bankId === 'BARC') {
        closing += 1n;
        this.fault('rc04_statement_rollforward', `${this.statementId(bank, d)} closing balance is one minor unit above opening + Σ lines`, ['RC04', 'STATEMENT_ROLLFORWARD_MISMATCH', this.statementId(bank, d)]);
      }
      if (this.faults && bank.bankId === 'CITI') {
        row(dateText(this.start, -2), 99, opening, opening, true);
        this.fault('rc04_statement_gap', `${bank.bankId} statement 100 (business day ${dateText(this.start, -1)}) is missing from the extract`, ['RC04', 'STATEMENT_SEQUENCE_GAP', `${bank.bankId}|${bank.accountId}|100`]);
      } else {
        row(dateText(this.start, -1), 100, opening, opening, true);
      }
      row(d, 101, opening, closing, true);
      row(dateText(this.start, 1), 102, closing, closing, false);
    }
    this.trap('statement_out_of_scope', 'yesterday\'s statements and tomorrow\'s incomplete statement (complete=false) lie outside RC04 scope: no difference and RC04 stays ready', ...BANK_ACCOUNTS.map((b) => this.statementId(b, dateText(this.start, 1))));
  }

  // ---------------------------------------------------------------- reservations and balances

  private reservations(): void {
    const r = new Prng(this.opts.seed, 'reservations');
    const w = this.w('reservations');
    const count = Math.max(12, Math.round(this.opts.orders / 25));
    for (let n = 0; n < count; n++) {
      const account = r.pick(this.accounts);
      const ccy = r.pick(CURRENCY_CODES);
      const amount = BigInt(r.int(100, 50_000));
      const id = `RES-${String(n).padStart(6, '0')}`;
      let versions: [number, string][];
      if (n === 0) {
        versions = [[this.start + 3 * HOUR, 'HELD'], [this.end, 'RELEASED']];
        this.trap('reservation_released_at_end', `${id} is released exactly at the window end: still HELD at the end (state at t uses updated_at < t)`, id);
      } else if (n === 1) {
        versions = [[this.end, 'HELD']];
        this.trap('reservation_held_at_end', `${id} is first held exactly at the window end: not HELD at the end`, id);
      } else {
        const t1 = r.wide(this.start - 12 * HOUR, this.end - HOUR - 1);
        const outcome = r.weighted([['HELD', 40], ['RELEASED', 30], ['CONSUMED', 20], ['LATER', 10]] as const);
        versions = [[t1, 'HELD']];
        if (outcome === 'RELEASED' || outcome === 'CONSUMED') versions.push([r.wide(t1 + SEC, this.end - 1), outcome]);
        if (outcome === 'LATER') versions.push([r.wide(this.end + 1, this.watermark - 1), 'RELEASED']);
      }
      versions.forEach(([t, status], v) => w.write([isoZ(t), id, account, ccy, amount.toString(), status, String(v + 1)]));
      const stateAt = (t: number) => versions.filter(([u]) => u < t).pop()?.[1];
      const k = `${account}|${ccy}`;
      this.balanceKeys.add(k);
      if (stateAt(this.start) === 'HELD') add(this.heldAtStart, k, amount);
      if (stateAt(this.end) === 'HELD') add(this.heldAtEnd, k, amount);
    }
  }

  private balances(): void {
    const r = new Prng(this.opts.seed, 'balances');
    const w = this.w('account_balances');
    for (const a of this.accounts) for (const c of CURRENCY_CODES) this.balanceKeys.add(`${a}|${c}`);
    const keys = [...this.balanceKeys].sort(byText);
    const clientKeys = keys.filter((k) => k.startsWith('ACC-0'));
    const pick = (frac: number, ccy: string) => {
      const candidates = clientKeys.filter((k) => k.endsWith(`|${ccy}`));
      return candidates[Math.floor(candidates.length * frac)];
    };
    const rollKey = this.faults ? pick(0.2, 'EUR') : null;
    const reservedKey = this.faults ? pick(0.5, 'GBP') : null;
    const availableKey = this.faults ? pick(0.8, 'JPY') : null;
    for (const k of keys) {
      const [account, ccy] = k.split('|');
      const open = account === TREASURY_ACCOUNT ? 98_765_432_109_876_543_210_987_654_321n : BigInt(r.int(1_000, 9_999_999)) * BigInt(r.int(1, 1000));
      const heldStart = this.heldAtStart.get(k) ?? 0n;
      w.write([isoZ(this.start), account, ccy, open.toString(), heldStart.toString(), (open - heldStart).toString()]);
      let close = open + (this.netInWindow.get(k) ?? 0n);
      let reserved = this.heldAtEnd.get(k) ?? 0n;
      let available = close - reserved;
      if (k === rollKey) { close += 1000n; available += 1000n; }
      if (k === reservedKey) { reserved += 500n; available -= 500n; }
      if (k === availableKey) available += 1n;
      w.write([isoZ(this.end), account, ccy, close.toString(), reserved.toString(), available.toString()]);
    }
    if (rollKey) this.fault('rc03_balance_rollforward', `the closing snapshot of ${rollKey} is 1000 minor units above opening + net postings`, ['RC03', 'BALANCE_ROLLFORWARD_MISMATCH', rollKey]);
    if (reservedKey) this.fault('rc03_reserved', `the closing snapshot of ${reservedKey} reserves 500 minor units more than its HELD reservations`, ['RC03', 'RESERVATION_MISMATCH', reservedKey]);
    if (availableKey) this.fault('rc03_available', `the closing snapshot of ${availableKey} has available one minor unit above balance − reserved`, ['RC03', 'RESERVATION_MISMATCH', availableKey]);
  }

  // ---------------------------------------------------------------- custodian, projection

  private authorityKeys(): string[] {
    return [...this.keys.entries()].filter(([, s]) => s.hasStart || s.hasWindowFill).map(([k]) => k).sort(byText);
  }

  private custodians(): void {
    const r = new Prng(this.opts.seed, 'custodians');
    const w = this.w('custodian_positions');
    const keys = this.authorityKeys();
    const tradable = keys.filter((k) => k.startsWith('ACC-0'));
    const faultKey = this.faults ? tradable[Math.floor(tradable.length / 3)] : null;
    for (const k of keys) {
      const s = this.keys.get(k)!;
      const c = s.instrument.custodian;
      let qty = s.startQty + s.custodianQty;
      if (k === faultKey) {
        qty += 10n * 10n ** BigInt(s.instrument.qtyScale);
        this.fault('rc04_custodian', `${c.id} reports ${k} 10 units above positions at the start + fills to its cutoff`, ['RC04', 'CUSTODIAN_POSITION_MISMATCH', `${c.id}|${k}|${this.opts.date}`]);
      }
      w.write([this.opts.date, c.zone, c.cutoff, c.id, s.account, s.instrument.id, decText(qty, s.instrument.qtyScale), '41', 'true']);
      if (r.chance(10)) w.write([dateText(this.start, -1), c.zone, c.cutoff, c.id, s.account, s.instrument.id, decText(s.startQty + BigInt(r.int(1, 99)), s.instrument.qtyScale), '40', 'true']);
    }
  }

  private projection(): void {
    const r = new Prng(this.opts.seed, 'projection');
    const w = this.w('portfolio_projection');
    const day = this.opts.date.replace(/-/g, '');
    const latest = `BUILD-${day}-02`;
    const older = `BUILD-${day}-01`;
    const keys = this.authorityKeys();
    const nonZero = keys.filter((k) => k.startsWith('ACC-0') && (this.keys.get(k)!.startQty + this.keys.get(k)!.windowQty) !== 0n);
    const at = (f: number) => nonZero[Math.floor(nonZero.length * f)];
    const [posKey, costKey, missingKey] = this.faults ? [at(0.25), at(0.5), at(0.75)] : [null, null, null];
    const staleKey = `${HOLD_ACCOUNT}|GB-VODL`;
    const asOf = this.end + 30 * SEC;
    let latestEarliest = Number.MAX_SAFE_INTEGER;
    const row = (t: number, build: string, account: string, inst: Instrument, qty: bigint, cost: bigint, version: number, qtyText?: string) => {
      if (build === latest) latestEarliest = Math.min(latestEarliest, t);
      w.write([isoZ(t), build, account, inst.id, qtyText ?? decText(qty, inst.qtyScale), cost.toString(), inst.currency, String(version)]);
    };
    for (const k of keys) {
      const s = this.keys.get(k)!;
      let qty = s.startQty + s.windowQty;
      let cost = s.startCost + s.windowCost;
      if (k === `${HOLD_ACCOUNT}|JP-6758`) continue; // zero authority key: no row needed
      if (k === missingKey) {
        this.fault('rc05_key_missing', `the projection has no row for ${k}`, ['RC05', 'PROJECTION_KEY_MISSING', k]);
        continue;
      }
      if (k === posKey) {
        qty += 10n ** BigInt(s.instrument.qtyScale);
        this.fault('rc05_position', `the projection's position of ${k} is one unit above the authority (cost agrees)`, ['RC05', 'PROJECTION_POSITION_MISMATCH', k]);
      }
      if (k === costKey) {
        cost += 1n;
        this.fault('rc05_cost', `the projection's cost of ${k} is one minor unit above the authority (position agrees)`, ['RC05', 'PROJECTION_COST_MISMATCH', k]);
      }
      // An earlier version within the latest build with stale figures (the highest version wins).
      if (r.chance(10)) row(asOf - 10 * SEC, latest, s.account, s.instrument, qty - 1n, cost - 7n, 1);
      const stale = this.faults && k === staleKey;
      row(stale ? this.end - 10 * MIN : asOf, latest, s.account, s.instrument, qty, cost, 2);
      // The previous build: other figures, never compared.
      if (r.chance(20)) row(this.start + 12 * HOUR, older, s.account, s.instrument, qty + BigInt(r.int(1, 9)), cost + BigInt(r.int(1, 999)), 1);
    }
    const barc = INSTRUMENTS.find((i) => i.id === 'GB-BARC')!;
    const sony = INSTRUMENTS.find((i) => i.id === 'JP-6758')!;
    row(asOf, latest, CLOSED_ACCOUNT, sony, 0n, 0n, 2, '0.0');
    this.trap('zero_projection_row', `a projection row of zero position and zero cost for ${CLOSED_ACCOUNT}|JP-6758, which the authority lacks: no PROJECTION_KEY_EXTRA`, `${CLOSED_ACCOUNT}|JP-6758`);
    this.trap('projection_versions', `rows of the older build ${older} and lower projection_versions in ${latest} are never compared`, older);
    if (this.faults) {
      row(asOf, latest, CLOSED_ACCOUNT, barc, 150n, 27_750n, 2);
      this.fault('rc05_key_extra', `the projection still carries ${CLOSED_ACCOUNT}|GB-BARC (150 units), a key the authority does not have`, ['RC05', 'PROJECTION_KEY_EXTRA', `${CLOSED_ACCOUNT}|GB-BARC`]);
      this.fault('rc05_stale', `the row for ${staleKey} in ${latest} is as of ${isoZ(this.end - 10 * MIN)}, 11 minutes before the as-of`, ['RC05', 'PROJECTION_STALE', latest]);
    }
    // Freshness (CONTRACT §4 RC05): as-of (the smallest watermark, the same for every dataset here) − the build's earliest as_of.
    this.freshness = this.watermark - latestEarliest;
  }

  private freshness = 0;

  // ---------------------------------------------------------------- expectation

  /**
   * The (kind, key) pairs the injected faults must cause, per defined control. A fault's
   * difference of a control with no definition is no run's business and is left out; a kind the
   * definition does not list is the generator's bug.
   */
  private expectedDifferences(): Map<string, [string, string][]> {
    const defs = new Map(this.controls.map((c) => [c.control_id, c]));
    const diffs = new Map<string, [string, string][]>(this.controls.map((c) => [c.control_id, []]));
    for (const f of this.expected) {
      for (const [c, kind, key] of f.differences) {
        const def = defs.get(c);
        if (!def) continue;
        if (!def.difference_kinds.includes(kind)) throw new InternalError(`generator fault ${f.id} expects ${c} ${kind}, a kind the definition of ${c} does not list`);
        diffs.get(c)!.push([kind, key]);
      }
    }
    return diffs;
  }

  private expectation(files: { path: string; rows: number }[]): Expectation {
    const diffs = this.expectedDifferences();
    const sortPairs = (a: [string, string], b: [string, string]) => byText(`${a[0]}\u0000${a[1]}`, `${b[0]}\u0000${b[1]}`);
    const obj = (m: Map<string, bigint | number>) => Object.fromEntries([...m.entries()].filter(([, v]) => v !== 0n).sort(([a], [b]) => byText(a, b)).map(([k, v]) => [k, v.toString()]));
    const bankCash = new Map<string, bigint>();
    const ledgerCash = new Map<string, bigint>();
    for (const b of BANK_ACCOUNTS) {
      const s = this.stmt.get(b.accountId)!;
      bankCash.set(`${b.accountId}|${b.currency}`, s.linesMinor);
      ledgerCash.set(`${b.accountId}|${b.currency}`, s.ledgerMinor);
    }
    const exact = (m: Map<string, bigint>) => Object.fromEntries([...m.entries()].sort(([a], [b]) => byText(a, b)).map(([k, v]) => [k, v.toString()]));
    const totals: Record<string, Record<string, TotalValue>> = {
      RC01: { accepted_count: String(this.t.accepted), class_count: Object.fromEntries([...this.t.classes.entries()].sort(([a], [b]) => byText(a, b)).map(([k, v]) => [k, String(v)])) },
      RC02: {
        internal_fill_count: String(this.t.internalFills), venue_fill_count: String(this.t.venueFills),
        internal_notional_minor_by_currency: obj(this.t.internalNotional), venue_notional_minor_by_currency: obj(this.t.venueNotional),
      },
      RC03: { debit_minor_by_currency: obj(this.t.debit), credit_minor_by_currency: obj(this.t.credit), posting_set_count: String(this.t.setsInWindow) },
      RC04: { bank_statement_cash_minor: exact(bankCash), ledger_cash_minor: exact(ledgerCash), statement_count: String(BANK_ACCOUNTS.length) },
      RC05: { freshness_age_s: String(this.freshness / SEC) },
      RC06: { intent_count: String(this.t.intents), delivered_count: String(this.t.delivered), failed_count: String(this.t.failed), exception_count: String(this.t.exceptions) },
    };
    const controls: Expectation['controls'] = {};
    for (const { control_id: c } of this.controls) {
      if (!totals[c]) continue;
      const d = diffs.get(c)!.sort(sortPairs);
      controls[c] = { status: d.length ? 'BREAKS' : 'CLEAN', differences: d, totals: totals[c] };
    }
    const notModelled = this.controls.map((c) => c.control_id).filter((c) => !totals[c]);
    return {
      generator: { name: 'reckon generate', version: 1, orders: this.opts.orders, seed: this.opts.seed, date: this.opts.date, faults: this.faults },
      window: { start: isoZ(this.start), end: isoZ(this.end) },
      exit_code: runOutcome(Object.entries(controls).map(([control_id, c]) => ({ control_id, status: c.status }))).exit_code,
      controls,
      ...(notModelled.length ? { not_modelled: notModelled } : {}),
      faults: this.expected,
      traps: this.traps,
      files: files.sort((a, b) => byText(a.path, b.path)),
    };
  }
}
