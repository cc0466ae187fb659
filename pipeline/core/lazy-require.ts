/**
 * A CommonJS package loaded with `require` on first use, not imported at start: a run that never
 * needs it never loads it, and a CommonJS package required (not imported from ES modules) skips
 * Node's lexing of every module for named exports (core/duckdb.ts measures it). Types come from
 * `import type` as usual.
 */
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/** A function returning package `name` (required on the first call, then kept). */
export function lazyRequire<T>(name: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= requireHere(name) as T);
}
