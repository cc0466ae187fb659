/**
 * Issue 4 through the real CLI (pipeline/cli/main.ts in this process, reckonHere: what a run
 * reports and publishes is under test, not its process): hostile file names are read
 * as data, a quarantined record makes every control that reads its dataset INCOMPLETE (others
 * stay CLEAN) with exit 3, the manifest and the quarantine Parquet output hold the entry, and
 * stderr carries one human-readable line per entry (capped, with where the full list is).
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reckonHere, scratchDir } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';
import { READERS, WINDOW, csvLine, csvText, validDay, writeDay } from './fixtures/hostile.js';

const tmp = scratchDir('reckon-hostile-cli-');
afterAll(() => tmp.cleanup());
let n = 0;

async function run(sources: string) {
  const store = join(tmp.dir, `store-${++n}`);
  const r = await reckonHere(['run', '--window', WINDOW, '--sources', sources, '--store', store, '--json']);
  const manifest = r.json ? JSON.parse(readFileSync(r.json.manifest.path, 'utf8')) : undefined;
  return { ...r, store, manifest };
}

const statuses = (json: any) => Object.fromEntries(json.controls.map((c: any) => [c.control_id, c.status]));
const quarantineLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('reckon: quarantined '));

describe('reckon run on hostile input', () => {
  it(`reads a file named a'; DROP TABLE x; --.csv as data (and a Parquet file named like it)`, async () => {
    const sources = join(tmp.dir, `src-${++n}`);
    const day = validDay(3);
    writeDay(sources, day);
    const csvName = `a'; DROP TABLE x; --.csv`;
    renameSync(join(sources, 'orders/part-0001.csv'), join(sources, 'orders', csvName));
    // positions as Parquet under a hostile name, made by DuckDB under a safe name first.
    rmSync(join(sources, 'positions/part-0001.csv'));
    const made = join(tmp.dir, 'made.parquet');
    await withDuck((conn) => conn.run(`COPY (SELECT TIMESTAMPTZ '2026-11-02 00:00:00+00' AS as_of, 'ACC-1' AS account_id, 'US-ACME' AS instrument_id, 0::DECIMAL(20,4) AS quantity, 0::BIGINT AS cost_minor, 'USD' AS cost_currency) TO '${made}' (FORMAT parquet)`));
    const pqName = `b'); COPY x TO 'pwned.csv'; --.parquet`;
    renameSync(made, join(sources, 'positions', pqName));

    const r = await run(sources);
    expect(r.stderr).not.toContain('reckon: quarantined');
    expect(r.code).toBe(0);
    expect(statuses(r.json)).toEqual({ RC01: 'CLEAN', RC02: 'CLEAN', RC03: 'CLEAN', RC04: 'CLEAN', RC05: 'CLEAN', RC06: 'CLEAN' });
    const orders = r.manifest.sources.datasets.orders;
    expect(orders.objects.map((o: any) => [o.path, o.rows, o.quarantined])).toEqual([[`orders/${csvName}`, 9, 0]]);
    expect(orders.records_loaded).toBe(9);
    expect(r.manifest.sources.datasets.positions.objects.map((o: any) => [o.path, o.rows])).toEqual([[`positions/${pqName}`, 1]]);
    expect(r.json.controls.find((c: any) => c.control_id === 'RC01').totals).toMatchObject({ accepted_count: '3' });
  });

  it('one bad value: its readers INCOMPLETE, the others CLEAN, exit 3, one stderr line, manifest and output entry', async () => {
    const sources = join(tmp.dir, `src-${++n}`);
    const day = validDay(3);
    day.ledger_postings.rows[2][day.ledger_postings.header.indexOf('amount_minor')] = '12.5';
    writeDay(sources, day);
    const r = await run(sources);
    expect(r.code).toBe(3);
    expect(statuses(r.json)).toEqual({ RC01: 'CLEAN', RC02: 'CLEAN', RC03: 'INCOMPLETE', RC04: 'INCOMPLETE', RC05: 'CLEAN', RC06: 'CLEAN' });
    expect(READERS.ledger_postings).toEqual(['RC03', 'RC04']);
    expect(quarantineLines(r.stderr)).toEqual([
      `reckon: quarantined ledger_postings/part-0001.csv row 3 (line 4) column amount_minor: amount_fractional: amount_minor: '12.5' is not an integer amount in minor units (-?[0-9]+, never fractional)`,
    ]);
    expect(r.stderr).toMatch(/reckon: 1 quarantine entry in all; full list: the manifest .* and the quarantine output outputs\/quarantine\/window_date=2026-11-02\/run=.*\/part-00000\.parquet/);
    expect(r.manifest.quarantine.count).toBe(1);
    expect(r.manifest.quarantine.entries).toEqual([{
      dataset: 'ledger_postings', file: 'ledger_postings/part-0001.csv', row: 3, line: 4, column: 'amount_minor', rule: 'amount_fractional',
      message: expect.any(String), raw: csvLine(day.ledger_postings.rows[2]),
    }]);
    expect(r.manifest.sources.datasets.ledger_postings).toMatchObject({ records_read: 6, records_loaded: 5, quarantined: 1 });
    const out = r.manifest.outputs.find((o: any) => o.table === 'quarantine');
    const rows = await withDuck(async (conn) => (await conn.runAndReadAll(`SELECT dataset, file, "row"::VARCHAR, "column", rule, raw FROM read_parquet('${join(r.store, out.key)}')`)).getRows());
    expect(rows).toEqual([['ledger_postings', 'ledger_postings/part-0001.csv', '3', 'amount_minor', 'amount_fractional', csvLine(day.ledger_postings.rows[2])]]);
  });

  it('caps stderr at 50 entry lines, then counts the rest; a file name with a newline stays one line', async () => {
    const sources = join(tmp.dir, `src-${++n}`);
    const day = validDay(2);
    writeDay(sources, day);
    const bad = Array.from({ length: 59 }, (_, k) => ['2026-11-02T10:00:00Z', `INT-X${k}`, 'ORD-1', 'fill-v1', 'EMAIL', 'yes', '2026-11-03T10:00:00Z']);
    writeFileSync(join(sources, 'notification_intents', 'bad\nname.csv'), csvText({ header: day.notification_intents.header, rows: bad }));
    writeFileSync(join(sources, 'notification_intents', 'empty.csv'), '');
    const r = await run(sources);
    expect(r.code).toBe(3);
    expect(statuses(r.json)).toMatchObject({ RC06: 'INCOMPLETE', RC01: 'CLEAN' });
    const lines = quarantineLines(r.stderr);
    expect(lines).toHaveLength(50);
    expect(lines[0]).toBe(`reckon: quarantined notification_intents/bad\\x0aname.csv row 1 (line 2) column required: bool_form: required: 'yes' is not true or false`);
    expect(r.stderr).toContain('reckon: ... and 10 more quarantine entries not shown\n');
    expect(r.stderr).toMatch(/reckon: 60 quarantine entries in all; full list: the manifest /);
    expect(r.manifest.quarantine.entries.at(-1)).toMatchObject({ file: 'notification_intents/empty.csv', row: null, rule: 'empty_file' });
    expect(r.manifest.sources.datasets.notification_intents).toMatchObject({ quarantined: 60, records_loaded: 2 });
  });

  it('a dataset path that is a file: its readers INCOMPLETE, never an empty dataset, never a crash', async () => {
    const sources = join(tmp.dir, `src-${++n}`);
    writeDay(sources, validDay(2));
    rmSync(join(sources, 'outbox_events'), { recursive: true });
    writeFileSync(join(sources, 'outbox_events'), 'a file where a folder should be');
    mkdirSync(join(sources, 'notification_exceptions'), { recursive: true });
    const r = await run(sources);
    expect(r.code).toBe(3);
    expect(statuses(r.json)).toEqual({ RC01: 'INCOMPLETE', RC02: 'CLEAN', RC03: 'CLEAN', RC04: 'CLEAN', RC05: 'CLEAN', RC06: 'CLEAN' });
    expect(quarantineLines(r.stderr)).toEqual([`reckon: quarantined outbox_events whole file: dataset_unreadable: outbox_events exists but is not a readable folder: ENOTDIR: not a directory, scandir '${join(sources, 'outbox_events')}'`]);
  });
});
