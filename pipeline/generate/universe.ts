/**
 * The synthetic firm behind a generated day: instruments and the venues that trade them, client,
 * clearing, fee and bank accounts, banks with their statement time zones and cutoffs, custodians,
 * notification providers. Fixed reference data, so that ids are stable across sizes and seeds;
 * only the number of client accounts grows with the number of orders.
 */

/** A trading venue and the IANA zone its drop copy writes local times in. */
export interface Venue { readonly id: string; readonly zone: string }

/** A custodian reporting trade-date positions at a local cutoff (CONTRACT §2 custodian_positions). */
export interface Custodian { readonly id: string; readonly zone: string; readonly cutoff: string }

/** An instrument: its one trading currency, venue, custodian and decimal scales of quantity and price. */
export interface Instrument {
  readonly id: string;
  readonly currency: string;
  readonly venue: Venue;
  readonly custodian: Custodian;
  /** Quantity is an integer count of 10^-qtyScale units. */
  readonly qtyScale: number;
  /** Price is an integer count of 10^-priceScale currency units (ticks). */
  readonly priceScale: number;
  /** Price range in ticks. */
  readonly priceLo: number;
  readonly priceHi: number;
  /** Order size range in quantity units (10^-qtyScale). */
  readonly qtyLo: number;
  readonly qtyHi: number;
}

/** A bank account of ours and the statement it produces (CONTRACT §2 bank_statements). */
export interface BankAccount {
  readonly bankId: string;
  readonly accountId: string;
  readonly currency: string;
  readonly zone: string;
  readonly cutoff: string;
}

export const VENUES = {
  XNYS: { id: 'XNYS', zone: 'America/New_York' },
  XNAS: { id: 'XNAS', zone: 'America/New_York' },
  XLON: { id: 'XLON', zone: 'Europe/London' },
  XTKS: { id: 'XTKS', zone: 'Asia/Tokyo' },
  XETR: { id: 'XETR', zone: 'Europe/Berlin' },
} as const satisfies Record<string, Venue>;

export const CUSTODIANS = {
  US: { id: 'CUST-US', zone: 'America/New_York', cutoff: '17:00' },
  UK: { id: 'CUST-UK', zone: 'Europe/London', cutoff: '18:00' },
  JP: { id: 'CUST-JP', zone: 'Asia/Tokyo', cutoff: '15:00' },
  EU: { id: 'CUST-EU', zone: 'Europe/Berlin', cutoff: '18:00:00' },
} as const satisfies Record<string, Custodian>;

/** Instruments, in a fixed order (ids are stable). */
export const INSTRUMENTS: readonly Instrument[] = [
  { id: 'US-ACME', currency: 'USD', venue: VENUES.XNYS, custodian: CUSTODIANS.US, qtyScale: 0, priceScale: 2, priceLo: 15_000, priceHi: 22_000, qtyLo: 1, qtyHi: 2_000 },
  { id: 'US-BOLT', currency: 'USD', venue: VENUES.XNAS, custodian: CUSTODIANS.US, qtyScale: 0, priceScale: 4, priceLo: 80_000, priceHi: 150_000, qtyLo: 10, qtyHi: 5_000 },
  { id: 'GB-VODL', currency: 'GBP', venue: VENUES.XLON, custodian: CUSTODIANS.UK, qtyScale: 0, priceScale: 4, priceLo: 6_500, priceHi: 7_800, qtyLo: 100, qtyHi: 20_000 },
  { id: 'GB-BARC', currency: 'GBP', venue: VENUES.XLON, custodian: CUSTODIANS.UK, qtyScale: 0, priceScale: 3, priceLo: 1_700, priceHi: 2_100, qtyLo: 10, qtyHi: 5_000 },
  { id: 'JP-7203', currency: 'JPY', venue: VENUES.XTKS, custodian: CUSTODIANS.JP, qtyScale: 0, priceScale: 1, priceLo: 27_000, priceHi: 30_000, qtyLo: 1, qtyHi: 2_000 },
  { id: 'JP-6758', currency: 'JPY', venue: VENUES.XTKS, custodian: CUSTODIANS.JP, qtyScale: 0, priceScale: 1, priceLo: 20_000, priceHi: 24_000, qtyLo: 1, qtyHi: 2_000 },
  { id: 'DE-SAPG', currency: 'EUR', venue: VENUES.XETR, custodian: CUSTODIANS.EU, qtyScale: 0, priceScale: 2, priceLo: 18_000, priceHi: 24_000, qtyLo: 1, qtyHi: 1_000 },
  { id: 'LU-FUND', currency: 'EUR', venue: VENUES.XETR, custodian: CUSTODIANS.EU, qtyScale: 3, priceScale: 4, priceLo: 950_000, priceHi: 1_100_000, qtyLo: 1, qtyHi: 500_000 },
];

/** Currencies traded, with their ISO 4217 minor-unit exponents (CONTRACT §1). */
export const CURRENCIES: Readonly<Record<string, number>> = { USD: 2, GBP: 2, JPY: 0, EUR: 2 };
export const CURRENCY_CODES = Object.keys(CURRENCIES);

/** Our bank accounts: one statement per account and business day. Two USD accounts at two banks. */
export const BANK_ACCOUNTS: readonly BankAccount[] = [
  { bankId: 'JPMC', accountId: 'BANK-USD', currency: 'USD', zone: 'America/New_York', cutoff: '17:00' },
  { bankId: 'CITI', accountId: 'BANK-USD2', currency: 'USD', zone: 'America/New_York', cutoff: '18:00:30' },
  { bankId: 'BARC', accountId: 'BANK-GBP', currency: 'GBP', zone: 'Europe/London', cutoff: '17:30' },
  { bankId: 'DEUT', accountId: 'BANK-EUR', currency: 'EUR', zone: 'Europe/Berlin', cutoff: '18:00' },
  { bankId: 'MUFG', accountId: 'BANK-JPY', currency: 'JPY', zone: 'Asia/Tokyo', cutoff: '15:00' },
];

/** Notification providers by channel: the zone their receipts' local times are written in. */
export const PROVIDER_ZONES: Readonly<Record<string, string>> = { EMAIL: 'America/Los_Angeles', SMS: 'Europe/Dublin' };

/** A client account that holds positions at the start but never trades (freshness and zero-row cases). */
export const HOLD_ACCOUNT = 'ACC-HOLD';
/** A closed account: absent from the authority; the projection may still carry rows for it. */
export const CLOSED_ACCOUNT = 'ACC-CLOSED';
/** A treasury account with balances beyond 2^53 minor units. */
export const TREASURY_ACCOUNT = 'ACC-TREASURY';

/** Number of regular client accounts for a day of `orders` orders: one per 100 orders, 6 to 10 000. */
export function clientAccountCount(orders: number): number {
  return Math.max(6, Math.min(10_000, Math.ceil(orders / 100)));
}

/** Id of regular client account `i` (1-based). */
export function clientAccountId(i: number): string {
  return `ACC-${String(i).padStart(6, '0')}`;
}
