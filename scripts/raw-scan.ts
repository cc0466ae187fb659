/**
 * The benchmark's floor (issue 5): DuckDB's own scan of a generated day — per dataset, the row
 * count and the exact sum of every decimal, amount and int column — with the same DuckDB
 * settings as a run. With `values`, the scan also reads every other value once (the length of
 * each text, the largest of each timestamp, date and flag): the least any run that checks every
 * value must read. Usage: node dist/scripts/raw-scan.js DIR csv|parquet [values]
 */
import { readdirSync, symlinkSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { DUCKDB_MEMORY_LIMIT, DUCKDB_THREADS } from '../pipeline/load/engine.js';

const [dir, format, mode] = process.argv.slice(2);
const everyValue = mode === 'values';
const scratch = mkdtempSync(join(tmpdir(), 'reckon-scan-'));
const db = await DuckDBInstance.create(':memory:', { threads: String(DUCKDB_THREADS), memory_limit: DUCKDB_MEMORY_LIMIT, temp_directory: join(scratch, 'tmp') });
const conn = await db.connect();
const out: Record<string, string[]> = {};
let n = 0;
for (const d of DATASETS) {
  let files: string[];
  try { files = readdirSync(join(dir, d.name)).filter((f) => f.endsWith(`.${format}`) && !f.startsWith('_')); } catch { continue; }
  if (!files.length) continue;
  // Safe names: DuckDB treats file names as globs.
  const links = files.map((f) => { const l = join(scratch, `f${++n}.${format}`); symlinkSync(join(dir, d.name, f), l); return `'${l}'`; });
  const numeric = d.columns.filter((c) => c.kind === 'decimal' || c.kind === 'amount_minor' || c.kind === 'int');
  const src = format === 'parquet' ? `read_parquet([${links.join(', ')}])` : `read_csv([${links.join(', ')}], all_varchar = true, header = true)`;
  const wide = (c: { kind: string }) => (c.kind === 'int' ? 'HUGEINT' : c.kind === 'amount_minor' ? 'DECIMAL(38,0)' : 'DECIMAL(38,18)');
  // CSV text parses into a narrow type (BIGINT, DECIMAL(18,9)) a hundred times faster than into a
  // 128-bit DECIMAL; the wide cast is only the fallback for values the narrow one cannot hold, so
  // the sums stay exact and the floor is DuckDB at its best, not at its slowest.
  const narrow = (c: { kind: string }) => (c.kind === 'decimal' ? 'DECIMAL(18,9)' : 'BIGINT');
  const sums = numeric.map((c) => {
    const col = `"${c.name}"`;
    return format === 'parquet'
      ? `sum(${col}::${wide(c)})::VARCHAR`
      : `sum(coalesce(try_cast(${col} AS ${narrow(c)})::${wide(c)}, ${col}::${wide(c)}))::VARCHAR`;
  });
  // Every other column read once: text by its length; timestamps, dates and flags by their
  // largest value (in a CSV file every column is text).
  const others = everyValue
    ? d.columns.filter((c) => !numeric.includes(c)).map((c) => {
      const text = format === 'csv' || !['timestamp', 'date', 'bool'].includes(c.kind);
      return text ? `sum(length("${c.name}"))::VARCHAR` : `max("${c.name}")::VARCHAR`;
    })
    : [];
  const r = await conn.runAndReadAll(`SELECT count(*)::VARCHAR${[...sums, ...others].map((s) => `, ${s}`).join('')} FROM ${src}`);
  out[d.name] = (r.getRowsJson()[0] as string[]).map(String);
}
rmSync(scratch, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify(out)}\n`);
