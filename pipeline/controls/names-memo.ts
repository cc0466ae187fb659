/**
 * The table check's parse-tree names, kept between runs (issue 20: computed once per build). The
 * names of a statement depend on its text, on the code that plans and walks it (parse-tree.ts,
 * sql-scripts.ts) and on the DuckDB that serializes it, nothing else, and the control SQL changes
 * only with the checkout. So a run need not open a second DuckDB to parse every control's SQL
 * again: it finds each statement's names in the memo by the SHA-256 of its text, under a key made
 * of the SHA-256 of that code and DuckDB's package version. A statement the memo lacks (edited SQL,
 * a control folder of one's own, another DuckDB) is parsed as before and added; an entry of any
 * other shape is not trusted and parsed again. The memo is written by the build
 * (scripts/write-fingerprints.ts) and refreshed, best effort, by whichever process parses something
 * new; one that cannot be read or written only costs the parsing. Like the code fingerprint's memo
 * beside it, it is part of the build: an entry is the output of the same check on the same text.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { sha256Hex } from '../core/digest.js';

/** Where the build keeps the names (beside the code fingerprint's memo; not part of the code it fingerprints). */
export const NAMES_MEMO = 'dist/sql-names.json';

/** Parser keys kept in one memo (the built code's and, say, the test runner's sources'). */
const KEYS_KEPT = 3;
/** Statements kept per key: the repository's controls and sql/common hold about 110. */
const ENTRIES_KEPT = 4096;

/** What the memo keeps of a statement: its names (parse-tree.ts StatementNames), or why it cannot be checked. */
export type MemoNames =
  | { readonly tables: readonly string[]; readonly ctes: readonly string[]; readonly tableFunctions: readonly string[]; readonly functions: readonly string[]; readonly creates?: unknown }
  | { readonly unreadable: string };

type Entries = Record<string, MemoNames>;

/** The parser key: SHA-256 over this stage's planning and walking code and DuckDB's package version. */
function parserKey(): string {
  const ext = fileURLToPath(import.meta.url).endsWith('.ts') ? '.ts' : '.js';
  const code = ['parse-tree', 'sql-scripts'].map((m) => readFileSync(fileURLToPath(new URL(`./${m}${ext}`, import.meta.url)), 'utf8'));
  const duck = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@duckdb/node-bindings/package.json'), 'utf8')) as { version: string };
  return sha256Hex(JSON.stringify([...code, duck.version]));
}

/** True for a value of the shape the memo keeps. */
function wellFormed(v: unknown): v is MemoNames {
  if (!v || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  if (typeof o.unreadable === 'string') return true;
  const strings = (a: unknown) => Array.isArray(a) && a.every((x) => typeof x === 'string');
  const c = o.creates as Record<string, unknown> | null | undefined;
  const creates = c === undefined || (typeof c === 'object' && c !== null && ['TABLE', 'VIEW', 'MACRO', 'VARIABLE'].includes(c.type as string)
    && typeof c.name === 'string' && typeof c.temporary === 'boolean' && typeof c.tableMacro === 'boolean');
  return creates && strings(o.tables) && strings(o.ctes) && strings(o.tableFunctions) && strings(o.functions);
}

/** One memo file as this process sees it: read once, then added to as statements are parsed. */
export class NamesMemo {
  private readonly key: string;
  private parsers: Record<string, Entries> = {};
  private readonly entries: Entries;

  constructor(private readonly path: string) {
    let key = '';
    try {
      key = parserKey();
      const doc = JSON.parse(readFileSync(path, 'utf8')) as { parsers?: unknown };
      if (doc.parsers && typeof doc.parsers === 'object') this.parsers = doc.parsers as Record<string, Entries>;
    } catch { /* no memo yet, or none to read: parse */ }
    this.key = key;
    const mine = key ? this.parsers[key] : undefined;
    this.entries = mine && typeof mine === 'object' ? mine : {};
  }

  /** The kept names of a statement text, or undefined when there are none to trust. */
  recall(text: string): MemoNames | undefined {
    const v = this.entries[sha256Hex(text)];
    return wellFormed(v) ? v : undefined;
  }

  /** Adds the names of freshly parsed statements and writes the memo (temp file and rename; failures ignored). */
  remember(fresh: ReadonlyMap<string, MemoNames>): void {
    if (fresh.size === 0) return;
    for (const [text, names] of fresh) this.entries[sha256Hex(text)] = names;
    const hashes = Object.keys(this.entries);
    for (const h of hashes.slice(0, Math.max(0, hashes.length - ENTRIES_KEPT))) delete this.entries[h];
    if (!this.key) return;
    // This parser's entries go last, so the oldest other keys are the ones dropped.
    const others = Object.entries(this.parsers).filter(([k]) => k !== this.key).slice(-(KEYS_KEPT - 1));
    this.parsers = Object.fromEntries([...others, [this.key, this.entries]]);
    const tmp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify({ note: 'reckon table-check names by statement SHA-256 (controls/names-memo.ts); safe to delete', parsers: this.parsers }));
      renameSync(tmp, this.path);
    } catch {
      // A read-only install: the next process parses again.
      try { unlinkSync(tmp); } catch { /* never written */ }
    }
  }
}

const OPEN = new Map<string, NamesMemo>();

/** The memo at `path`, shared by every parser of this process (so a process parses a statement once). */
export function namesMemoAt(path: string): NamesMemo {
  let m = OPEN.get(path);
  if (!m) OPEN.set(path, (m = new NamesMemo(path)));
  return m;
}
