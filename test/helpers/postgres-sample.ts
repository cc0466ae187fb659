/**
 * Puts a source location (e.g. the bundled sample day, whose files are CSV, JSON Lines and
 * Parquet) into PostgreSQL tables for the database-source tests (issue 21): the records the
 * loader's readers see go into typed tables of the same names (scripts/pg-datasets.ts), and each
 * dataset's `_watermark.json` into `projection_checkpoint`.
 */
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type pg from 'pg';
import { DATASETS, datasetSpec } from '../../pipeline/contract/datasets.js';
import { listDatasetFolder } from '../../pipeline/sources/files.js';
import { readCsv, readJsonl, readParquet, type ReadEvent } from '../../pipeline/sources/readers.js';
import { copyRows, createCheckpointTable, createDatasetTable, recordCheckpoint } from '../../scripts/pg-datasets.js';

export { checkpointQuery, copyRows, createDatasetTable, PG_TYPE } from '../../scripts/pg-datasets.js';

/** The records of one dataset folder, as the loader's readers give them (text fields). */
async function folderRecords(root: string, dataset: string, scratch: string): Promise<Map<string, string | null>[]> {
  const folder = await listDatasetFolder(root, dataset);
  const spec = datasetSpec(dataset);
  const out: Map<string, string | null>[] = [];
  let db: DuckDBInstance | undefined;
  for (const f of folder.files) {
    let events: AsyncGenerator<ReadEvent>;
    if (f.format === 'parquet') {
      db ??= await DuckDBInstance.create(':memory:');
      await mkdir(scratch, { recursive: true });
      const link = join(scratch, `${dataset}-${out.length}.parquet`);
      await symlink(f.realPath!, link);
      events = readParquet(await db.connect(), link, spec.columns);
    } else events = f.format === 'jsonl' ? readJsonl(f, spec.columns) : readCsv(f);
    for await (const ev of events) {
      if (ev.type === 'record') out.push(new Map(ev.fields));
      else if (ev.type === 'record_error' || ev.type === 'file_error') throw new Error(`${f.relPath}: ${ev.rule}`);
    }
  }
  db?.closeSync();
  return out;
}

/**
 * Loads every dataset of the source location `root` (or `opts.datasets`) into tables of the same
 * names and their watermarks into `projection_checkpoint`. Returns the row count per dataset.
 */
export async function loadSourcesIntoPostgres(client: pg.Client, root: string, scratch: string, opts: { datasets?: readonly string[] } = {}): Promise<Record<string, number>> {
  await createCheckpointTable(client);
  const counts: Record<string, number> = {};
  for (const spec of DATASETS) {
    if (opts.datasets && !opts.datasets.includes(spec.name)) continue;
    await createDatasetTable(client, spec.name);
    const records = await folderRecords(root, spec.name, join(scratch, 'links'));
    const cols = spec.columns.map((c) => c.name);
    await copyRows(client, spec.name, cols, records.map((r) => cols.map((c) => r.get(c) ?? null)));
    counts[spec.name] = records.length;
    const wm = await readFile(join(root, spec.name, '_watermark.json'), 'utf8').then((t) => JSON.parse(t) as { watermark: string; complete?: boolean }, () => undefined);
    if (wm) await recordCheckpoint(client, spec.name, wm.watermark, wm.complete ?? null);
  }
  return counts;
}
