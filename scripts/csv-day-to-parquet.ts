/**
 * Benchmark helper: converts a generated CSV day into the same day in Parquet (exact types, as
 * `reckon generate --format parquet` writes them) using every core, for sizes where the
 * generator's single-threaded, byte-reproducible conversion takes too long.
 * Usage: node dist/scripts/csv-day-to-parquet.js CSV_DAY_DIR PARQUET_DAY_DIR
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { csvToParquetSelect } from '../pipeline/generate/writers.js';

const [src, dst] = process.argv.slice(2);
const SAFE = /^[A-Za-z0-9_\-/.]+$/;
const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '4GB', temp_directory: join(dst, '.tmp') });
const conn = await db.connect();
await conn.run(`SET TimeZone = 'UTC'`);
for (const name of readdirSync(src)) if (name.startsWith('_')) copyFileSync(join(src, name), join(dst, name));
for (const spec of DATASETS) {
  const dir = join(src, spec.name);
  if (!existsSync(dir)) continue;
  mkdirSync(join(dst, spec.name), { recursive: true });
  for (const f of readdirSync(dir)) {
    if (f.startsWith('_')) { copyFileSync(join(dir, f), join(dst, spec.name, f)); continue; }
    if (!f.endsWith('.csv')) continue;
    const from = join(dir, f);
    const to = join(dst, spec.name, f.replace(/\.csv$/, '.parquet'));
    if (!SAFE.test(from) || !SAFE.test(to)) throw new Error(`unsafe path ${from}`);
    const { cols, select } = csvToParquetSelect(spec);
    await conn.run(`COPY (SELECT ${select} FROM read_csv('${from}', header = true, auto_detect = false, delim = ',', quote = '"', escape = '"', columns = {${cols}}, max_line_size = 1048576)) TO '${to}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
    process.stderr.write(`${to}\n`);
  }
}
