/** Command-line parsing helpers: node:util parseArgs with every problem as a ConfigError (exit 2). */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../core/errors.js';

/** Parses `argv` with the given options; unknown options, missing values and empty values (`--sources ""`) are ConfigErrors. */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new ConfigError(withSuggestion(e as Error & { code?: string }, Object.keys(options)));
  }
  // An empty value is never meant (an unset shell variable): `--sources ""` must not mean the current folder.
  for (const [name, v] of Object.entries(parsed.values)) {
    if (v === '' || (Array.isArray(v) && v.includes(''))) throw new ConfigError(`--${name} is empty; give it a value (an unset shell variable?)`);
  }
  return parsed;
}

/** parseArgs's message, for an unknown `--option` with the closest known one (`Unknown option '--source': did you mean --sources?`). */
function withSuggestion(e: Error & { code?: string }, names: readonly string[]): string {
  const given = e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '--([^'=]+)'/.exec(e.message)?.[1] : undefined;
  const near = given === undefined ? undefined : closest(given, names.filter((n) => n !== 'help'));
  return near === undefined ? e.message : `Unknown option '--${given}': did you mean --${near}?`;
}

/**
 * The candidate nearest to `word` (case ignored): one that starts with it (at least 3 characters
 * typed; the shortest such), else the smallest Levenshtein distance if it is at most 2 or a third
 * of the word's length (the first of a tie, in the candidates' order); undefined when none is near.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  const prefixed = w.length >= 3 ? candidates.filter((c) => c.toLowerCase().startsWith(w)).sort((a, b) => a.length - b.length)[0] : undefined;
  if (prefixed !== undefined) return prefixed;
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (!best || d < best.d) best = { c, d };
  }
  return best && best.d <= Math.max(2, Math.floor(w.length / 3)) ? best.c : undefined;
}

/** Levenshtein distance (insert, delete, substitute: 1 each), one row at a time. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    row = next;
  }
  return row[b.length];
}
