/**
 * A per-statement profile of a run (issue 20): loaded before the CLI with `--import`, it wraps
 * DuckDB's connection and prepared-statement calls so that every statement's wall and process CPU
 * time (user + system, DuckDB's threads included) is recorded, and at exit writes them to
 * RECKON_STATEMENT_PROFILE (default `statement-profile.tsv`), most expensive first, one line a
 * statement: cpu_ms, wall_ms, then the statement's first 200 characters on one line. A script
 * passed to `run` / `runAndReadAll` in one call is run statement by statement instead, so each is
 * timed on its own (DuckDB runs them in the same order either way; results are the same).
 * Only for measuring: the product never loads this file.
 * Usage: node --import ./dist/scripts/statement-profile.js bin/reckon.js run …
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import type * as DuckDB from '@duckdb/node-api';

const api = createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDB;
const out = process.env.RECKON_STATEMENT_PROFILE ?? 'statement-profile.tsv';
const entries: { cpu: number; wall: number; text: string }[] = [];
const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 200);

let depth = 0;

/** Runs `f`, recording its wall and CPU time under `text` (a call inside a timed call is not counted twice). */
async function timed<T>(text: string, f: () => Promise<T>): Promise<T> {
  if (depth > 0) return f();
  depth += 1;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  try {
    return await f();
  } finally {
    const c = process.cpuUsage(c0);
    depth -= 1;
    entries.push({ cpu: (c.user + c.system) / 1000, wall: performance.now() - t0, text: oneLine(text) });
  }
}

type Any = (...a: unknown[]) => Promise<unknown>;
const conn = api.DuckDBConnection.prototype as unknown as Record<string, Any>;
const extracted = api.DuckDBExtractedStatements.prototype as unknown as Record<string, Any>;
const prepared = api.DuckDBPreparedStatement.prototype as unknown as Record<string, Any>;
const texts = new WeakMap<object, string[]>();
const origExtract = conn.extractStatements!;
const origPrepareAt = extracted.prepare!;

// A crude split at semicolons ending a line: only to name a prepared statement in the profile.
conn.extractStatements = async function (this: object, sql: unknown) {
  const x = (await origExtract.call(this, sql)) as object;
  texts.set(x, String(sql).split(/;\s*\n/));
  return x;
};
extracted.prepare = async function (this: object, i: unknown) {
  const p = (await origPrepareAt.call(this, i)) as object;
  texts.set(p, [texts.get(this)?.[Number(i)] ?? '?']);
  return p;
};
for (const m of ['run', 'runAndReadAll'] as const) {
  const orig = prepared[m]!;
  prepared[m] = function (this: object, ...a: unknown[]) { return timed(texts.get(this)?.[0] ?? '?', () => orig.apply(this, a)); };
  const origConn = conn[m]!;
  // A whole script in one call: run each of its statements through a prepared statement (timed above).
  conn[m] = async function (this: DuckDB.DuckDBConnection, ...a: unknown[]) {
    if (a.length !== 1) return origConn.apply(this, a);
    const x = await this.extractStatements(String(a[0]));
    let last: unknown;
    for (let i = 0; i < x.count; i++) {
      const p = await x.prepare(i);
      try {
        last = await (p as unknown as Record<string, Any>)[m]!.call(p);
      } finally {
        p.destroySync();
      }
    }
    return last;
  };
}

process.on('exit', () => {
  entries.sort((a, b) => b.cpu - a.cpu);
  const total = entries.reduce((s, e) => s + e.cpu, 0);
  const lines = entries.map((e) => `${e.cpu.toFixed(1)}\t${e.wall.toFixed(1)}\t${e.text}`);
  writeFileSync(out, `# ${entries.length} statements, ${total.toFixed(0)} ms CPU\ncpu_ms\twall_ms\tstatement\n${lines.join('\n')}\n`);
});
