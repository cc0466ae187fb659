/**
 * `manifest verify` recomputes a run's results digest from its Parquet outputs (issue 18): the
 * `runs`, `control_totals`, `differences` and `quarantine` objects the manifest lists are read back
 * with DuckDB, in the order they were written, rebuilt into what the digest covers and digested by
 * the run's own function (results-digest.ts). A digest that differs from the manifest's says the
 * outputs and the manifest do not tell the same results. A keyed total with no key has no row, so
 * its name is taken from the manifest; a large total is its key count and listing digest as the
 * manifest records (the listing itself is the control_totals rows, checked by their SHA-256).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { duckdb } from '../core/duckdb.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';
import { literal } from '../core/sql-text.js';
import type { ObjectStore } from '../store/object-store.js';
import { resultsDigestOf, type DigestedQuarantine, type DigestedResult } from './results-digest.js';

type Row = Record<string, string | number | null>;
const DIGEST_TABLES = ['runs', 'control_totals', 'differences', 'quarantine'] as const;

/**
 * The results digest of `doc`'s outputs, read from `store` (published, or still staged after a
 * crash). Undefined when the run lists no `runs` output (a manifest from before outputs). Throws
 * Error naming the object that cannot be read.
 */
export async function recomputeResultsDigest(store: ObjectStore, doc: ManifestV1): Promise<string | undefined> {
  if (!doc.outputs.some((o) => o.table === 'runs')) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'reckon-verify-'));
  const instance = await duckdb().DuckDBInstance.create(':memory:', { threads: '1', preserve_insertion_order: 'true' });
  const conn = await instance.connect();
  try {
    const rows: Record<string, Row[]> = {};
    for (const table of DIGEST_TABLES) {
      rows[table] = [];
      for (const [i, o] of doc.outputs.filter((x) => x.table === table).entries()) {
        const body = (await store.get(o.key)) ?? (await store.get(`_staging/${doc.run_id}/${o.key}`));
        if (!body) throw new Error(`output ${o.key} is missing`);
        const file = join(dir, `${table}-${i}.parquet`);
        await writeFile(file, body);
        const read = await conn.runAndReadAll(`SELECT * FROM read_parquet(${literal(file)}, hive_partitioning = false)`);
        rows[table].push(...(read.getRowObjectsJson() as Row[]));
      }
    }
    return resultsDigestOf(doc.window, resultsOf(doc, rows), { quarantine: rows.quarantine.map(quarantineOf) });
  } finally {
    conn.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function resultsOf(doc: ManifestV1, rows: Record<string, Row[]>): DigestedResult[] {
  return rows.runs.map((run) => {
    const id = String(run.control_id);
    const recorded = doc.results.find((r) => r.control_id === id);
    const large = recorded?.large_totals;
    const totals: Record<string, string | Record<string, string>> = {};
    for (const [name, v] of Object.entries(recorded?.totals ?? {})) if (typeof v !== 'string' && Object.keys(v).length === 0) totals[name] = {};
    for (const t of rows.control_totals.filter((x) => x.control_id === id)) {
      const name = String(t.total_name);
      if (large?.[name]) continue;
      if (t.dim === null) totals[name] = String(t.value_text);
      else {
        const keyed = (totals[name] ??= {});
        if (typeof keyed === 'string') totals[name] = { [String(t.dim)]: String(t.value_text) };
        else keyed[String(t.dim)] = String(t.value_text);
      }
    }
    return {
      control_id: id, status: String(run.status) as DigestedResult['status'], as_of: text(run.as_of_text), totals, ...(large ? { large_totals: large } : {}),
      differences: rows.differences.filter((d) => d.control_id === id).map((d) => ({ kind: String(d.kind), key: String(d.key), detail: String(d.detail), record_time: text(d.record_time_text) })),
    };
  });
}

function quarantineOf(q: Row): DigestedQuarantine {
  return { dataset: String(q.dataset), file: String(q.file), row: q.row === null ? null : Number(q.row), column: text(q.column), rule: String(q.rule) };
}
