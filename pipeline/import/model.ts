/**
 * Shapes shared by the provider-file importers (CONTRACT §8): what a parser reads out of one
 * provider file (statements with balances and lines, or venue fills), the format's own control
 * totals declared and recomputed, and the findings kept as evidence. Parsers are pure: they take
 * the file's bytes and return these shapes; the orchestrator (`import.ts`) maps accounts, checks
 * across statements and writes the contract datasets.
 *
 * Money is `bigint` minor units everywhere (ISO 4217 exponent from `currencyTable()`); amounts
 * also keep the text the file wrote, so a reader of the report can see exactly what was read.
 */

/** The formats `reckon import` reads. `mt940` also reads MT950 (the same tags without :86:). */
export const IMPORT_FORMATS = ['camt053', 'mt940', 'bai2', 'fix'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** One provider file as read from disk: bytes, SHA-256 (hex) and the `file_id` written for it. */
export interface ProviderFile {
  readonly path: string;
  readonly name: string;
  readonly bytes: Buffer;
  readonly sha256: string;
  /** `sha256:<hex>`: the contract's `file_id` of every row that comes from this file. */
  readonly fileId: string;
}

/**
 * A control total the format carries (or a relation it implies, such as opening + lines =
 * closing), with the value the file declares and the value recomputed from its records.
 * `declared`/`recomputed` are exact integer texts in `unit` (minor units of a currency, a count,
 * bytes); `not_checked` says why a declared total could not be recomputed.
 */
export interface ControlCheck {
  readonly check: string;
  readonly scope: string;
  readonly unit: string;
  readonly declared: string;
  readonly recomputed: string;
  readonly status: 'ok' | 'mismatch' | 'not_checked';
  readonly detail?: string;
  readonly line?: number;
}

/** A structural finding that is evidence but not a control total: an unwritten statement, a missing page, a duplicate. */
export interface Finding {
  readonly check: string;
  readonly scope: string;
  readonly detail: string;
  readonly line?: number;
}

/** A balance as the file states it: signed minor units (credit +, debit −) and the text it was read from. */
export interface ParsedBalance {
  /** The format's balance code: OPBD, CLBD, PRCD… (camt), 60F, 62M… (MT940), 010, 015… (BAI2). */
  readonly code: string;
  readonly amountMinor: bigint;
  readonly currency: string;
  /** Exactly as written in the file (e.g. `18.150`, `C100318EUR380115,`). */
  readonly text: string;
  /** `YYYY-MM-DD`, or null when the format gives no date. */
  readonly date: string | null;
  /** For camt balances with a date-time, the text as written. */
  readonly dateTime?: string;
  readonly line?: number;
}

/**
 * Where a page belongs (camt.053 pagination, MT940 `:28C:` page numbers): pages with one `key`
 * form one statement. `openingFinal`/`closingFinal` say whether the page opens with the
 * statement's first balance (OPBD/PRCD, :60F:) and closes with its final one (CLBD, :62F:).
 */
export interface PageInfo {
  readonly key: string;
  readonly number: number | null;
  /** The format's own last-page flag (camt LastPgInd), or null when the format has none. */
  readonly last: boolean | null;
  readonly openingFinal: boolean;
  readonly closingFinal: boolean;
  readonly label: string;
}

/** One statement line: signed minor units in the bank's view (+ money into our account, CONTRACT §2). */
export interface ParsedLine {
  readonly amountMinor: bigint;
  readonly currency: string;
  /** `YYYY-MM-DD`. */
  readonly valueDate: string;
  /** The reference the line carries for us (posting set it settles), or null. Not yet checked against the id rule. */
  readonly reference: string | null;
  readonly line?: number;
  /** Format-specific facts kept for the report (mark, type code, bank reference). */
  readonly meta?: Readonly<Record<string, string>>;
}

/**
 * A statement (one account, one currency, one business date) as read from a provider file, before
 * account mapping. `unwritable` lists why it cannot become a `bank_statements` row (no account,
 * no closing balance, mixed currencies); such a statement stays in the report as evidence.
 */
export interface ParsedStatement {
  readonly format: ImportFormat;
  /** Index of the provider file within the command (its rows go to that file's CSV). */
  readonly fileIndex: number;
  /** The statement id as the contract will carry it, before validation. */
  statementId: string | null;
  /** The account as the file names it (IBAN, :25: text, BAI2 account number). */
  providerAccount: string | null;
  /** The bank's identifier as the file gives it (servicer BIC, SWIFT sender, BAI2 originator), or null. */
  bankIdFromFile: string | null;
  currency: string | null;
  opening: ParsedBalance | null;
  closing: ParsedBalance | null;
  /** `YYYY-MM-DD` in the statement's own calendar (the closing balance date), or null. */
  businessDate: string | null;
  /** The statement's own sequence number, or null when the file carries none. */
  seq: bigint | null;
  /** Where `seq` came from (`ElctrncSeqNb`, `:28C: statement number`, …). */
  seqSource: string;
  lines: ParsedLine[];
  /** False when pages are missing or the format marks the statement interim. */
  complete: boolean;
  readonly incompleteReasons: string[];
  readonly unwritable: string[];
  /** Format-specific detail for the report (all balances, pages, period, group header). */
  readonly extra: Record<string, unknown>;
  /** Set for formats with pages (camt.053, MT940); pages are joined into statements by pages.ts. */
  readonly page?: PageInfo;
}

/** One venue fill read from a FIX session log, in the columns of CONTRACT §2 `venue_fills`. */
export interface ParsedFill {
  readonly venueTimeLocal: string;
  readonly venueTimezone: string;
  readonly senderCompId: string;
  readonly venueFillId: string;
  readonly orderId: string;
  readonly instrumentId: string;
  readonly side: 'BUY' | 'SELL';
  readonly fillQty: string;
  readonly price: string;
  readonly priceCurrency: string;
  /** 1, 2, … in the order of the fills of one venue in one session log (not MsgSeqNum). */
  venueSeq: number;
  readonly msgSeqNum: string;
  readonly line: number;
}

/** What parsing one provider file gives: its records, checks, findings and notes. */
export interface ParseResult {
  readonly formatVersion: string;
  readonly statements: ParsedStatement[];
  readonly fills: ParsedFill[];
  readonly checks: ControlCheck[];
  readonly findings: Finding[];
  readonly notes: string[];
  /** Counts for the report (messages, records, entries skipped and why). */
  readonly counts: Record<string, number>;
}

/** An empty result to fill in. */
export function emptyResult(formatVersion: string): ParseResult {
  return { formatVersion, statements: [], fills: [], checks: [], findings: [], notes: [], counts: {} };
}

/** Builds a check whose status follows from declared = recomputed. */
export function tieCheck(check: string, scope: string, unit: string, declared: bigint, recomputed: bigint, extra: { detail?: string; line?: number } = {}): ControlCheck {
  const status = declared === recomputed ? 'ok' : 'mismatch';
  const diff = recomputed - declared;
  const detail = status === 'mismatch' ? [`recomputed − declared = ${diff}`, extra.detail].filter(Boolean).join('; ') : extra.detail;
  return { check, scope, unit, declared: declared.toString(), recomputed: recomputed.toString(), status, ...(detail ? { detail } : {}), ...(extra.line !== undefined ? { line: extra.line } : {}) };
}
