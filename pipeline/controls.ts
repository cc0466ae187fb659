/**
 * Control definitions and their evaluation (CONTRACT §3–§4). A control is data plus SQL:
 * `controls/rcNN/control.json` (id, datasets read, difference kinds, SLA, owner, params) and
 * `sql/rcNN/*.sql`. Every control runs the same way, so adding RC07 is a new pair of folders:
 *   prepare.sql     (optional) statements creating temp tables/views prefixed with the control id
 *   totals.sql      rows (name, dim, value): exact control totals as text
 *   differences.sql rows (kind, key, detail, record_time): zero rows means clean
 *   readiness.sql   (optional) rows (reason): extra readiness conditions beyond watermarks
 *   assertions.sql  (optional) rows (message): internal invariants; any row stops the run (exit 70)
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { z } from 'zod';
import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError, InternalError, invariant } from './errors.js';
import { repoPath } from './paths.js';
import { DATASETS } from './datasets.js';

const ControlDefinitionSchema = z.object({
  control_id: z.string().regex(/^RC[0-9]{2}$/),
  name: z.string().min(1),
  reads: z.array(z.string()).min(1),
  difference_kinds: z.array(z.string().regex(/^[A-Z_]+$/)).min(1),
  sla_s: z.number().int().nonnegative(),
  sla_s_by_kind: z.record(z.string(), z.number().int().nonnegative()).default({}),
  owner: z.string().min(1),
  params: z.record(z.string(), z.union([z.number(), z.string()])).default({}),
  description: z.string().optional(),
}).strict();

/** A parsed, frozen control definition plus its SQL texts and their SHA-256. */
export type ControlDefinition = Readonly<z.infer<typeof ControlDefinitionSchema>> & {
  readonly sql: Readonly<Record<'prepare' | 'totals' | 'differences' | 'readiness' | 'assertions', string | undefined>>;
  readonly sqlFiles: readonly { path: string; sha256: string }[];
};

const SQL_PARTS = ['prepare', 'totals', 'differences', 'readiness', 'assertions'] as const;
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/** Loads every control under `controls/`, sorted by id. Throws InternalError on a bad definition. */
export function loadControls(): ControlDefinition[] {
  const dir = repoPath('controls');
  const known = new Set(DATASETS.map((d) => d.name));
  const out: ControlDefinition[] = [];
  for (const folder of readdirSync(dir).filter((f) => /^rc[0-9]{2}$/.test(f)).sort()) {
    const file = repoPath(`controls/${folder}/control.json`);
    const parsed = ControlDefinitionSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (!parsed.success) throw new InternalError(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const def = parsed.data;
    invariant(def.control_id.toLowerCase() === folder, `${file}: control_id ${def.control_id} does not match its folder`);
    for (const d of def.reads) invariant(known.has(d), `${file}: reads unknown dataset ${d}`);
    for (const p of ['window_start', 'window_end', 'as_of']) invariant(!(p in def.params), `${file}: parameter ${p} is reserved for the pipeline`);
    const sql: Record<string, string | undefined> = {};
    const sqlFiles: { path: string; sha256: string }[] = [];
    for (const part of SQL_PARTS) {
      const rel = `sql/${folder}/${part}.sql`;
      if (!existsSync(repoPath(rel))) continue;
      const text = readFileSync(repoPath(rel), 'utf8');
      sql[part] = text;
      sqlFiles.push({ path: rel, sha256: sha256(text) });
    }
    invariant(sql.totals && sql.differences, `${folder}: totals.sql and differences.sql are required`);
    out.push(Object.freeze({ ...def, sql: Object.freeze(sql) as ControlDefinition['sql'], sqlFiles }));
  }
  return out;
}

/** The shared SQL run once after loading (macros, then views), with SHA-256 of each file. */
export function commonSql(): { path: string; text: string; sha256: string }[] {
  return ['sql/common/macros.sql', 'sql/common/views.sql'].map((path) => {
    const text = readFileSync(repoPath(path), 'utf8');
    return { path, text, sha256: sha256(text) };
  });
}

/** Runs every statement of a SQL script in order. */
export async function runScript(conn: DuckDBConnection, sql: string): Promise<void> {
  const stmts = await conn.extractStatements(sql);
  for (let i = 0; i < stmts.count; i++) {
    const p = await stmts.prepare(i);
    await p.run();
  }
}

/** Runs a script whose last statement is a query, returning its rows as JSON-able objects (all text). */
export async function queryScript(conn: DuckDBConnection, sql: string): Promise<Record<string, string | null>[]> {
  const stmts = await conn.extractStatements(sql);
  invariant(stmts.count >= 1, 'empty SQL');
  for (let i = 0; i < stmts.count - 1; i++) await (await stmts.prepare(i)).run();
  const reader = await (await stmts.prepare(stmts.count - 1)).runAndReadAll();
  return reader.getRowObjectsJson().map((o) => {
    const r: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(o)) r[k] = v === null ? null : String(v);
    return r;
  });
}

/** A difference as the control's SQL reports it (CONTRACT §4). `record_time_us`: µs since epoch, UTC. */
export interface RawDifference {
  readonly kind: string;
  readonly key: string;
  readonly detail: string;
  readonly record_time_us: string | null;
}

/** Raw evaluation of one control: totals object, differences sorted by (kind, key), readiness reasons. */
export interface ControlEvaluation {
  readonly totals: Record<string, string | Record<string, string>>;
  readonly differences: RawDifference[];
  readonly readiness: string[];
}

/**
 * Evaluates one control against the loaded tables. Session variables (window, as-of, params) must
 * be set by the caller. Throws InternalError when an assertion row appears, when a kind outside the
 * definition is emitted, or when one (kind, key) is listed twice.
 */
export async function evaluateControl(conn: DuckDBConnection, def: ControlDefinition): Promise<ControlEvaluation> {
  try {
    return await evaluate(conn, def);
  } catch (e) {
    // A sum beyond DECIMAL(38) (e.g. two amounts of 38 digits each) cannot be totalled exactly.
    // That is a property of the input, not a bug: say so and stop with exit 3, never 70.
    const msg = (e as Error).message ?? '';
    if (/Overflow|out of range/i.test(msg) && !(e instanceof InternalError)) {
      throw new InputError(`${def.control_id}: a control total or comparison exceeds 38 digits and cannot be computed exactly (${msg.split('\n')[0]}); the input holds amounts or quantities too large to total`, undefined, undefined, undefined, undefined, 'total_overflow');
    }
    throw e;
  }
}

async function evaluate(conn: DuckDBConnection, def: ControlDefinition): Promise<ControlEvaluation> {
  if (def.sql.prepare) await runScript(conn, def.sql.prepare);
  const totals: Record<string, string | Record<string, string>> = {};
  for (const r of await queryScript(conn, def.sql.totals!)) {
    const name = r.name!;
    if (r.dim === null || r.dim === undefined) totals[name] = r.value ?? '0';
    else {
      const obj = (totals[name] ??= {}) as Record<string, string>;
      invariant(typeof obj === 'object', `${def.control_id}: total ${name} is both scalar and keyed`);
      obj[r.dim] = r.value ?? '0';
    }
  }
  const differences = (await queryScript(conn, def.sql.differences!)).map((r) => ({
    kind: r.kind!, key: r.key!, detail: r.detail ?? '', record_time_us: r.record_time_us ?? null,
  }));
  differences.sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const kinds = new Set(def.difference_kinds);
  for (const d of differences) {
    invariant(kinds.has(d.kind), `${def.control_id} emitted kind ${d.kind} outside its definition`);
    invariant(d.key !== null && d.key !== '', `${def.control_id} emitted ${d.kind} with an empty key`);
  }
  // One difference per (kind, key): records that conflict with each other (two snapshot rows of one
  // account at one instant, say) can make a query find the same key twice; their findings merge.
  const merged: RawDifference[] = [];
  for (const d of differences) {
    const last = merged[merged.length - 1];
    if (last && last.kind === d.kind && last.key === d.key) {
      merged[merged.length - 1] = {
        ...last,
        detail: last.detail === d.detail ? last.detail : `${last.detail}; ${d.detail}`,
        record_time_us: last.record_time_us === null ? d.record_time_us : d.record_time_us === null ? last.record_time_us : (BigInt(d.record_time_us) < BigInt(last.record_time_us) ? d.record_time_us : last.record_time_us),
      };
    } else merged.push(d);
  }
  const readiness = def.sql.readiness ? (await queryScript(conn, def.sql.readiness)).map((r) => r.reason ?? 'not ready') : [];
  if (def.sql.assertions) {
    const broken = await queryScript(conn, def.sql.assertions);
    if (broken.length) throw new InternalError(`${def.control_id} invariant broken: ${broken.map((b) => b.message).join('; ')}`);
  }
  return { totals, differences: merged, readiness };
}
