/**
 * Joins statement pages into statements (camt.053 `StmtPgntn`/`MsgPgntn`, MT940 `:28C:` page
 * numbers), across every file of one import command, and checks what pages imply:
 *
 * - each page rolls forward (opening + lines = closing) when a statement has several pages;
 * - consecutive pages chain (the closing balance of page k is the opening balance of page k+1);
 * - the statement rolls forward from its first page's opening to its last page's closing.
 *
 * A statement is complete only when its pages are 1…n without a gap, its first page opens with
 * the first balance (OPBD/PRCD, :60F:) and its last page closes with the final one (CLBD,
 * :62F:, and camt's LastPgInd is true where given). A page number seen twice keeps the first
 * page; the repeat is reported and not written.
 */
import { currencyExponent } from './amounts.js';
import { tieCheck, type ControlCheck, type Finding, type ParsedStatement } from './model.js';

/** What joining gives: statements (single-page ones unchanged) and per-file checks and findings. */
export interface JoinResult {
  readonly statements: ParsedStatement[];
  /** Checks and findings keyed by the index of the file they belong to. */
  readonly checks: Map<number, ControlCheck[]>;
  readonly findings: Map<number, Finding[]>;
}

function push<T>(m: Map<number, T[]>, k: number, v: T): void {
  const a = m.get(k);
  if (a) a.push(v);
  else m.set(k, [v]);
}

/** The statement id a joined statement carries (CONTRACT §2 `statement_id`). */
function statementIdOf(st: ParsedStatement): string | null {
  if (st.format === 'mt940') {
    const no = (st.extra.statement_no as string | null) ?? null;
    if (st.providerAccount === null || no === null || st.businessDate === null) return null;
    return `${st.providerAccount}/${no}/${st.businessDate}`;
  }
  return st.statementId;
}

/** Joins pages by key in first-appearance order; statements without page info pass through. */
export function joinPages(pages: readonly ParsedStatement[]): JoinResult {
  const checks = new Map<number, ControlCheck[]>();
  const findings = new Map<number, Finding[]>();
  const groups = new Map<string, ParsedStatement[]>();
  const order: (string | ParsedStatement)[] = [];
  for (const p of pages) {
    if (!p.page) { order.push(p); continue; }
    const g = groups.get(p.page.key);
    if (g) g.push(p);
    else { groups.set(p.page.key, [p]); order.push(p.page.key); }
  }
  const statements: ParsedStatement[] = [];
  for (const item of order) {
    if (typeof item !== 'string') { statements.push(item); continue; }
    statements.push(joinGroup(groups.get(item)!, checks, findings));
  }
  return { statements, checks, findings };
}

function joinGroup(group: ParsedStatement[], checks: Map<number, ControlCheck[]>, findings: Map<number, Finding[]>): ParsedStatement {
  const fmt = group[0].format;
  const pages = distinctPages(group, findings);
  const first = pages[0];
  const last = pages[pages.length - 1];
  const incomplete = incompleteReasons(pages);
  const unwritable = [...new Set(pages.flatMap((p) => p.unwritable))];
  const currencies = new Set(pages.map((p) => p.currency).filter((c): c is string => c !== null));
  if (currencies.size > 1) unwritable.push(`pages in several currencies: ${[...currencies].join(', ')}`);
  const merged: ParsedStatement = {
    ...first,
    statementId: first.statementId,
    bankIdFromFile: pages.map((p) => p.bankIdFromFile).find((b) => b !== null) ?? null,
    opening: first.opening,
    closing: last.closing,
    businessDate: last.businessDate,
    lines: pages.flatMap((p) => p.lines),
    complete: incomplete.length === 0,
    incompleteReasons: incomplete,
    unwritable,
    extra: {
      ...first.extra,
      pages: pages.map((p) => ({ page: p.page!.number, label: p.page!.label, file_index: p.fileIndex, lines: p.lines.length, extra: p.extra })),
    },
    page: first.page,
  };
  merged.statementId = statementIdOf(merged);
  const scope = `statement ${merged.statementId}`;
  const label = fmt === 'camt053' ? 'camt053' : 'mt940';
  if (pages.length > 1) pageChecks(pages, scope, label, checks);
  if (merged.opening && merged.closing && merged.opening.currency === merged.closing.currency && currencies.size <= 1) {
    const sum = merged.lines.reduce((s, l) => s + l.amountMinor, 0n);
    push(checks, last.fileIndex, tieCheck(`${label}.statement_rollforward`, scope, unitOf(merged.opening.currency), merged.closing.amountMinor, merged.opening.amountMinor + sum, {
      detail: `${merged.opening.code} ${merged.opening.amountMinor} + ${merged.lines.length} line(s) ${sum} against ${merged.closing.code} ${merged.closing.amountMinor}`, line: merged.closing.line,
    }));
  }
  return merged;
}

const unitOf = (ccy: string) => `${ccy} minor units (exponent ${currencyExponent(ccy, { file: '' })})`;

/** Order by page number (pages without a number keep their order); drop repeated page numbers. */
function distinctPages(group: ParsedStatement[], findings: Map<number, Finding[]>): ParsedStatement[] {
  const fmt = group[0].format;
  const sorted = [...group].sort((a, b) => (a.page!.number ?? 0) - (b.page!.number ?? 0));
  const pages: ParsedStatement[] = [];
  for (const p of sorted) {
    const dup = pages.find((q) => q.page!.number === p.page!.number);
    if (dup) {
      push(findings, p.fileIndex, {
        check: `${fmt}.duplicate_page`, scope: `statement ${statementIdOf(dup) ?? p.page!.key}`,
        detail: `${p.page!.label} repeats page ${p.page!.number ?? '(unnumbered)'} of ${dup.page!.label}; the first is kept, this one is not written`,
      });
      continue;
    }
    pages.push(p);
  }
  return pages;
}

/** Why the joined statement is not complete: the pages' own reasons, a gap in 1…n, a last page not marked last, intermediate first or last balances. */
function incompleteReasons(pages: ParsedStatement[]): string[] {
  const first = pages[0];
  const last = pages[pages.length - 1];
  const incomplete: string[] = [...pages.flatMap((p) => p.incompleteReasons)];
  const numbers = pages.map((p) => p.page!.number);
  if (numbers.some((n) => n !== null)) {
    const max = Math.max(...numbers.map((n) => n ?? 0));
    const missing: number[] = [];
    for (let n = 1; n <= max; n++) if (!numbers.includes(n)) missing.push(n);
    if (missing.length) incomplete.push(`page(s) ${missing.join(', ')} not received`);
    if (last.page!.last === false) incomplete.push(`page ${last.page!.number} is not marked as the last page`);
    const early = pages.find((p) => p !== last && p.page!.last === true);
    if (early) incomplete.push(`page ${early.page!.number} is marked last but page ${last.page!.number} follows`);
  }
  if (!first.page!.openingFinal && first.opening) incomplete.push(`the first page received opens with an intermediate balance (${first.opening.code})`);
  if (!last.page!.closingFinal && last.closing) incomplete.push(`the last page received closes with an intermediate balance (${last.closing.code})`);
  return incomplete;
}

/** A multi-page statement: each page rolls forward, and consecutive pages chain (closing of k = opening of k+1). */
function pageChecks(pages: ParsedStatement[], scope: string, label: string, checks: Map<number, ControlCheck[]>): void {
  for (const p of pages) {
    if (!p.opening || !p.closing || p.opening.currency !== p.closing.currency) continue;
    const sum = p.lines.reduce((s, l) => s + l.amountMinor, 0n);
    push(checks, p.fileIndex, tieCheck(`${label}.page_rollforward`, `${scope} ${p.page!.label} (page ${p.page!.number ?? '-'})`, unitOf(p.opening.currency), p.closing.amountMinor, p.opening.amountMinor + sum, {
      detail: `${p.opening.code} ${p.opening.amountMinor} + lines ${sum} against ${p.closing.code} ${p.closing.amountMinor}`, line: p.closing.line,
    }));
  }
  for (let i = 1; i < pages.length; i++) {
    const a = pages[i - 1], b = pages[i];
    if (a.page!.number === null || b.page!.number !== a.page!.number + 1 || !a.closing || !b.opening || a.closing.currency !== b.opening.currency) continue;
    push(checks, b.fileIndex, tieCheck(`${label}.page_chain`, `${scope} page ${a.page!.number} → ${b.page!.number}`, unitOf(b.opening.currency), b.opening.amountMinor, a.closing.amountMinor, {
      detail: `opening ${b.opening.code} of page ${b.page!.number} against closing ${a.closing.code} of page ${a.page!.number}`, line: b.opening.line,
    }));
  }
}
