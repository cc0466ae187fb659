/**
 * The datasets of CONTRACT §2 as data: column names, value kinds (§1), whether empty is allowed,
 * enum values and per-record sign/range rules. The loader validates every record against this
 * table and the DuckDB tables are created from it; nothing here is type-sniffed.
 */

/** Value kinds of CONTRACT §1 (plus `enum` and `text`, which are strings with a rule). */
export type ColumnKind = 'timestamp' | 'local_timestamp' | 'timezone' | 'date' | 'cutoff' | 'int' | 'decimal' | 'amount_minor' | 'currency' | 'id' | 'enum' | 'text' | 'bool';

/** A per-record range rule on a numeric column. */
export type RangeRule = 'positive' | 'at_least_one';

export interface ColumnSpec {
  readonly name: string;
  readonly kind: ColumnKind;
  /** Empty (absent, null or '') is allowed. Required columns that are empty quarantine the record. */
  readonly optional?: boolean;
  readonly values?: readonly string[];
  readonly range?: RangeRule;
  /** For `local_timestamp`: the companion `*_timezone` column, and the derived UTC column name. */
  readonly zoneColumn?: string;
  readonly utcColumn?: string;
}

export interface DatasetSpec {
  readonly name: string;
  /** The window column (first in CONTRACT §2's table); for local times, its derived UTC column. */
  readonly windowColumn?: string;
  readonly columns: readonly ColumnSpec[];
  /** Column whose maximum is the derived watermark when `_watermark.json` is absent (§2). */
  readonly derivedWatermarkColumn?: string;
  /** Column ignored when judging two records to be the same delivery (§2). */
  readonly deliveryColumn?: string;
  /** Derived columns computed at load (notional, mapped statement interval). */
  readonly derived?: 'notional' | 'statement_interval';
}

const ts = (name: string, extra: Partial<ColumnSpec> = {}): ColumnSpec => ({ name, kind: 'timestamp', ...extra });
const id = (name: string, extra: Partial<ColumnSpec> = {}): ColumnSpec => ({ name, kind: 'id', ...extra });
const SIDE = ['BUY', 'SELL'] as const;

/** Every dataset of CONTRACT §2, by name. */
export const DATASETS: readonly DatasetSpec[] = [
  {
    name: 'orders', windowColumn: 'accepted_at', derivedWatermarkColumn: 'ingested_at', deliveryColumn: 'ingested_at',
    columns: [
      ts('accepted_at', { optional: true }), id('order_id'), { name: 'order_version', kind: 'int', range: 'at_least_one' },
      id('client_order_id'), id('account_id'), id('instrument_id'), { name: 'side', kind: 'enum', values: SIDE },
      { name: 'ordered_qty', kind: 'decimal', range: 'positive' },
      { name: 'status', kind: 'enum', values: ['ACCEPTED', 'ROUTED', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED', 'EXPIRED', 'REJECTED'] },
      ts('event_at'), ts('ingested_at'),
    ],
  },
  {
    name: 'outbox_events', windowColumn: 'created_at',
    columns: [
      ts('created_at'), id('event_id'), id('aggregate_id'), id('event_type'),
      { name: 'publish_status', kind: 'enum', values: ['PENDING', 'CLAIMED', 'SENT'] }, ts('published_at', { optional: true }),
    ],
  },
  {
    name: 'executions', windowColumn: 'executed_at', derivedWatermarkColumn: 'ingested_at', deliveryColumn: 'ingested_at', derived: 'notional',
    columns: [
      ts('executed_at'), id('execution_id'), id('order_id'), id('account_id'), id('venue_id'), id('venue_fill_id'), id('instrument_id'),
      { name: 'side', kind: 'enum', values: SIDE }, { name: 'fill_qty', kind: 'decimal', range: 'positive' },
      { name: 'price', kind: 'decimal', range: 'positive' }, { name: 'price_currency', kind: 'currency' },
      { name: 'execution_seq', kind: 'int' }, ts('ingested_at'),
    ],
  },
  {
    name: 'venue_fills', windowColumn: 'venue_time_utc', derived: 'notional',
    columns: [
      { name: 'venue_time_local', kind: 'local_timestamp', zoneColumn: 'venue_timezone', utcColumn: 'venue_time_utc' },
      { name: 'venue_timezone', kind: 'timezone' }, id('venue_id'), id('venue_fill_id'), id('order_id'), id('instrument_id'),
      { name: 'side', kind: 'enum', values: SIDE }, { name: 'fill_qty', kind: 'decimal' }, { name: 'price', kind: 'decimal' },
      { name: 'price_currency', kind: 'currency' }, { name: 'venue_seq', kind: 'int' }, id('file_id'),
    ],
  },
  {
    name: 'ledger_postings', windowColumn: 'effective_at', derivedWatermarkColumn: 'posted_at',
    columns: [
      ts('effective_at'), id('posting_set_id'), { name: 'leg', kind: 'int' }, id('account_id'), { name: 'currency', kind: 'currency' },
      { name: 'direction', kind: 'enum', values: ['DEBIT', 'CREDIT'] }, { name: 'amount_minor', kind: 'amount_minor', range: 'positive' },
      { name: 'kind', kind: 'enum', values: ['TRADE', 'FEE', 'CASH', 'CORRECTION', 'REVERSAL'] },
      id('execution_id', { optional: true }), id('reverses_posting_set_id', { optional: true }), { name: 'ledger_seq', kind: 'int' }, ts('posted_at'),
    ],
  },
  {
    name: 'account_balances', windowColumn: 'as_of',
    columns: [
      ts('as_of'), id('account_id'), { name: 'currency', kind: 'currency' }, { name: 'balance_minor', kind: 'amount_minor' },
      { name: 'reserved_minor', kind: 'amount_minor' }, { name: 'available_minor', kind: 'amount_minor' },
    ],
  },
  {
    name: 'reservations', windowColumn: 'updated_at',
    columns: [
      ts('updated_at'), id('reservation_id'), id('account_id'), { name: 'currency', kind: 'currency' }, { name: 'amount_minor', kind: 'amount_minor' },
      { name: 'status', kind: 'enum', values: ['HELD', 'RELEASED', 'CONSUMED'] }, { name: 'version', kind: 'int' },
    ],
  },
  {
    name: 'positions', windowColumn: 'as_of',
    columns: [
      ts('as_of'), id('account_id'), id('instrument_id'), { name: 'quantity', kind: 'decimal' }, { name: 'cost_minor', kind: 'amount_minor' },
      { name: 'cost_currency', kind: 'currency' },
    ],
  },
  {
    name: 'bank_statements', windowColumn: 'period_end_utc', derived: 'statement_interval',
    columns: [
      { name: 'business_date', kind: 'date' }, { name: 'timezone', kind: 'timezone' }, { name: 'cutoff_local', kind: 'cutoff' },
      id('statement_id'), id('bank_id'), id('account_id'), { name: 'currency', kind: 'currency' }, { name: 'statement_seq', kind: 'int' },
      { name: 'opening_balance_minor', kind: 'amount_minor' }, { name: 'closing_balance_minor', kind: 'amount_minor' },
      { name: 'complete', kind: 'bool' }, id('file_id'),
    ],
  },
  {
    name: 'bank_statement_lines',
    columns: [
      id('statement_id'), id('line_id'), { name: 'amount_minor', kind: 'amount_minor' }, { name: 'value_date', kind: 'date' },
      id('reference', { optional: true }),
    ],
  },
  {
    name: 'custodian_positions', windowColumn: 'period_end_utc', derived: 'statement_interval',
    columns: [
      { name: 'business_date', kind: 'date' }, { name: 'timezone', kind: 'timezone' }, { name: 'cutoff_local', kind: 'cutoff' },
      id('custodian_id'), id('account_id'), id('instrument_id'), { name: 'quantity', kind: 'decimal' }, { name: 'statement_seq', kind: 'int' },
      { name: 'complete', kind: 'bool' },
    ],
  },
  {
    name: 'portfolio_projection', windowColumn: 'as_of',
    columns: [
      ts('as_of'), id('build_id'), id('account_id'), id('instrument_id'), { name: 'position_qty', kind: 'decimal' },
      { name: 'cost_minor', kind: 'amount_minor' }, { name: 'cost_currency', kind: 'currency' }, { name: 'projection_version', kind: 'int' },
    ],
  },
  {
    name: 'notification_intents', windowColumn: 'created_at',
    columns: [
      ts('created_at'), id('intent_id'), id('authority_ref'), id('template_version'), id('channel'), { name: 'required', kind: 'bool' }, ts('expires_at'),
    ],
  },
  {
    name: 'notification_receipts', windowColumn: 'provider_time_utc',
    columns: [
      { name: 'provider_time_local', kind: 'local_timestamp', zoneColumn: 'provider_timezone', utcColumn: 'provider_time_utc' },
      { name: 'provider_timezone', kind: 'timezone' }, id('receipt_id'), id('intent_id'), id('channel'),
      { name: 'status', kind: 'enum', values: ['DELIVERED', 'FAILED', 'BOUNCED'] },
    ],
  },
  {
    name: 'notification_exceptions', windowColumn: 'approved_at',
    columns: [ts('approved_at'), id('intent_id'), id('approved_by'), { name: 'reason', kind: 'text' }],
  },
];

/** Looks a dataset up by name; throws on an unknown name (a programming error). */
export function datasetSpec(name: string): DatasetSpec {
  const d = DATASETS.find((x) => x.name === name);
  if (!d) throw new Error(`unknown dataset ${name}`);
  return d;
}

/** DuckDB column type for each value kind (exact types only: DECIMAL(38,18), DECIMAL(38,0), TIMESTAMP UTC). */
export const SQL_TYPE: Record<ColumnKind, string> = {
  timestamp: 'TIMESTAMP', local_timestamp: 'TIMESTAMP', timezone: 'VARCHAR', date: 'DATE', cutoff: 'VARCHAR', int: 'BIGINT',
  decimal: 'DECIMAL(38,18)', amount_minor: 'DECIMAL(38,0)', currency: 'VARCHAR', id: 'VARCHAR', enum: 'VARCHAR', text: 'VARCHAR', bool: 'BOOLEAN',
};

/** Derived columns appended after a dataset's own columns, with their DuckDB types. */
export function derivedColumns(spec: DatasetSpec): { name: string; type: string }[] {
  const out: { name: string; type: string }[] = [];
  for (const c of spec.columns) if (c.kind === 'local_timestamp' && c.utcColumn) out.push({ name: c.utcColumn, type: 'TIMESTAMP' });
  if (spec.derived === 'notional') out.push({ name: 'notional_minor', type: 'DECIMAL(38,0)' });
  if (spec.derived === 'statement_interval') out.push({ name: 'period_start_utc', type: 'TIMESTAMP' }, { name: 'period_end_utc', type: 'TIMESTAMP' });
  return out;
}
