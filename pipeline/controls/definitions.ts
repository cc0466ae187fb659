/**
 * Control definitions (CONTRACT §3–§4). A control is data plus SQL: `controls/rcNN/control.json`
 * (id, datasets read, difference kinds, SLA, owner, contact, paging route and runbook — also
 * per difference kind — and params) and `sql/rcNN/*.sql`. Every control
 * runs the same way, so adding RC07 is a new pair of folders:
 *   prepare.sql     (optional) statements creating temp tables/views named `rcNN_…` (dropped after the control)
 *   totals.sql      rows (name, dim, value): exact control totals as text
 *   differences.sql rows (kind, key, detail, record_time_us): zero rows means clean. It may hold
 *                   several queries (one per kind, say): the rows of every query are the
 *                   differences, so no single statement has to hold every kind's joins at once
 *   records.sql     (optional) rows (kind, key, side, dataset, source, record_key): the records
 *                   behind each difference, joined from `control_differences` (records.ts)
 *   readiness.sql   (optional) rows (reason): extra readiness conditions beyond watermarks
 *   assertions.sql  (optional) rows (message): internal invariants; any row stops the run (exit 70)
 * Loading parses and validates each definition, reads its SQL, and runs the table check
 * (table-check.ts): SQL that reads a dataset its definition does not declare is refused here,
 * before any run.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { z } from '../core/zod.js';
import { sha256Hex } from '../core/digest.js';
import { InternalError, invariant } from '../core/errors.js';
import { REPO_ROOT, repoPath } from '../core/paths.js';
import { DATASETS } from '../contract/datasets.js';
import { loadCommonSql } from './common-sql.js';
import { CONTROL_DIFFERENCES_TABLE } from './records.js';
import { SqlNames } from './parse-tree.js';
import { controlTableProblems } from './table-check.js';

/**
 * A runbook an operator follows for a break (the RBK rows of the reference document, copied into
 * the definitions: the product never reads the reference at run time): its id, title, where it is
 * written down (a repository path or a URL) and the one step to take first.
 */
export const RunbookSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/),
  title: z.string().min(1),
  link: z.string().min(1),
  first_step: z.string().min(1),
}).strict();
export type Runbook = Readonly<z.infer<typeof RunbookSchema>>;

/** Route names: what the configuration's `alerts.routes` are keyed by. */
export const ROUTE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Who acts on a break and how: any of these may be set per difference kind (`by_kind`). */
export const OwnershipFields = {
  /** The owning team's id (what triage's --owner and `breaks list --owner` name). */
  owner: z.string().min(1),
  /** The team's name for people. */
  owner_name: z.string().min(1),
  /** How to reach the team (a channel, a rota, an address). */
  contact: z.string().min(1),
  /** The paging route alerts go to: a name the configuration's `alerts.routes` defines. */
  route: z.string().regex(ROUTE_NAME),
  runbook: RunbookSchema,
} as const;

const ControlDefinitionSchema = z.object({
  control_id: z.string().regex(/^RC[0-9]{2}$/),
  name: z.string().min(1),
  reads: z.array(z.string()).min(1),
  difference_kinds: z.array(z.string().regex(/^[A-Z_]+$/)).min(1),
  sla_s: z.number().int().nonnegative(),
  sla_s_by_kind: z.record(z.string(), z.number().int().nonnegative()).default({}),
  ...OwnershipFields,
  by_kind: z.record(z.string(), z.object(OwnershipFields).partial().strict()).default({}),
  params: z.record(z.string(), z.union([z.number(), z.string()])).default({}),
  description: z.string().optional(),
}).strict();

/** The SQL files of a control, in the order evaluation runs them. */
export const SQL_PARTS = ['prepare', 'totals', 'differences', 'records', 'readiness', 'assertions'] as const;

/** One of a control's SQL files. */
export type SqlPart = (typeof SQL_PARTS)[number];

/** A file as the manifest records it: repository-relative path (absolute outside it) and SHA-256. */
export interface FileDigest {
  readonly path: string;
  readonly sha256: string;
}

/** A parsed, frozen control definition plus its SQL texts, their paths and SHA-256. */
export type ControlDefinition = Readonly<z.infer<typeof ControlDefinitionSchema>> & {
  readonly sql: Readonly<Record<SqlPart, string | undefined>>;
  /** Path of each SQL file present, as shown in messages and the manifest. */
  readonly sqlPaths: Readonly<Partial<Record<SqlPart, string>>>;
  readonly sqlFiles: readonly FileDigest[];
  /** Its control.json. */
  readonly definitionFile: FileDigest;
};

/** Where loadControls reads definitions from. sql/common always comes from the repository. */
export interface ControlRoots {
  /** Folder holding `rcNN/control.json` (default: the repository's `controls/`). */
  readonly controlsDir?: string;
  /** Folder holding `rcNN/*.sql` (default: the repository's `sql/`). */
  readonly sqlDir?: string;
}

/** A path as messages and the manifest show it: relative to the repository when inside it. */
export function shownPath(abs: string): string {
  const rel = relative(REPO_ROOT, abs);
  return rel.startsWith('..') || isAbsolute(rel) ? abs : rel;
}

/**
 * Loads every control under `roots.controlsDir` (folders `rcNN`), sorted by id, with its SQL from
 * `roots.sqlDir`, and checks the tables its SQL reads against its definition and sql/common.
 * Throws InternalError (exit 70) on a bad definition, and on SQL that reads an undeclared dataset
 * or anything else the table check refuses, listing every problem (control, file, statement, name).
 */
export async function loadControls(roots: ControlRoots = {}): Promise<ControlDefinition[]> {
  const controlsDir = roots.controlsDir ?? repoPath('controls');
  const sqlDir = roots.sqlDir ?? repoPath('sql');
  const defs = readdirSync(controlsDir).filter((f) => /^rc[0-9]{2}$/.test(f)).sort().map((folder) => readControl(controlsDir, sqlDir, folder));
  const parser = new SqlNames();
  try {
    const common = await loadCommonSql(parser);
    const problems: string[] = [];
    for (const def of defs) {
      // records.sql may read the control's differences, which the pipeline provides (records.ts).
      const files = SQL_PARTS.filter((p) => def.sql[p] !== undefined).map((p) => ({
        path: def.sqlPaths[p]!, text: def.sql[p]!, ...(p === 'records' ? { provided: [CONTROL_DIFFERENCES_TABLE] } : {}),
      }));
      problems.push(...await controlTableProblems(parser, { control_id: def.control_id, reads: def.reads, definitionPath: def.definitionFile.path, files }, common));
    }
    if (problems.length) throw new InternalError(`control SQL refused by the table check (a control reads only the datasets its definition declares):\n  ${problems.join('\n  ')}`);
  } finally {
    parser.close();
  }
  return defs;
}

/** Reads and validates one control's definition and SQL files. Throws InternalError. */
function readControl(controlsDir: string, sqlDir: string, folder: string): ControlDefinition {
  const file = join(controlsDir, folder, 'control.json');
  const bytes = readFileSync(file);
  const parsed = ControlDefinitionSchema.safeParse(JSON.parse(bytes.toString('utf8')));
  if (!parsed.success) throw new InternalError(`${shownPath(file)}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const def = parsed.data;
  const known = new Set(DATASETS.map((d) => d.name));
  invariant(def.control_id.toLowerCase() === folder, `${shownPath(file)}: control_id ${def.control_id} does not match its folder`);
  for (const d of def.reads) invariant(known.has(d), `${shownPath(file)}: reads unknown dataset ${d}`);
  for (const p of ['window_start', 'window_end', 'as_of']) invariant(!(p in def.params), `${shownPath(file)}: parameter ${p} is reserved for the pipeline`);
  for (const k of Object.keys(def.by_kind)) invariant(def.difference_kinds.includes(k), `${shownPath(file)}: by_kind names ${k}, not a difference kind of ${def.control_id}`);
  const sql: Partial<Record<SqlPart, string>> = {};
  const sqlPaths: Partial<Record<SqlPart, string>> = {};
  const sqlFiles: FileDigest[] = [];
  for (const part of SQL_PARTS) {
    const path = join(sqlDir, folder, `${part}.sql`);
    if (!existsSync(path)) continue;
    sql[part] = readFileSync(path, 'utf8');
    sqlPaths[part] = shownPath(path);
    sqlFiles.push({ path: shownPath(path), sha256: sha256Hex(sql[part]) });
  }
  invariant(sql.totals && sql.differences, `${folder}: totals.sql and differences.sql are required`);
  return Object.freeze({
    ...def, sql: Object.freeze(sql) as ControlDefinition['sql'], sqlPaths: Object.freeze(sqlPaths), sqlFiles,
    definitionFile: { path: shownPath(file), sha256: sha256Hex(bytes) },
  });
}
