/**
 * Break output tables (CONTRACT §5–§6) written to Parquet through the real writeOutputs and DuckDB,
 * read back with their types and exact values; and the write-once event log under a race in one
 * process (the second append of a version is a ConcurrencyError, exit 6).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckonIn, scratchDir } from './helpers/cli.js';
import { fileDuck } from './helpers/duckdb.js';
import { FAULT, WINDOW, rc06Sources, signers } from './fixtures/breaks.js';
import { payloadOf } from '../pipeline/breaks/break-objects.js';
import { breakId } from '../pipeline/breaks/break-id.js';
import { BREAK_OUTPUT_TABLES, breakOutputRows } from '../pipeline/outputs/break-tables.js';
import { BreakStore } from '../pipeline/breaks/break-store.js';
import { defaultConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { ConcurrencyError } from '../pipeline/core/errors.js';
import { writeOutputs } from '../pipeline/outputs/outputs.js';
import { openStore } from '../pipeline/store/open-store.js';

const ID = breakId(FAULT.control_id, FAULT.kind, FAULT.key);

describe('break output tables', () => {
  let tmp: ReturnType<typeof scratchDir>;
  let store: string;
  const duck = fileDuck();

  beforeAll(async () => {
    tmp = scratchDir('reckon-breaks-out-');
    store = join(tmp.dir, 'store');
    const src = rc06Sources(tmp.dir);
    const people = signers(tmp.dir);
    const cfg = ['--store', store, '--config', people.config];
    expect((await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--quiet', ...cfg])).code).toBe(1);
    const ok = async (args: string[]) => { const r = await reckonIn([...args, ...cfg]); expect(r.code, r.stderr).toBe(0); };
    await ok(['breaks', 'advance', ID, '--to', 'TRIAGED', '--expected-version', '1', '--key', people.keys.tom.key, '--owner', 'olivia', '--classification', 'MISSING', '--note', 'line one\nline "two"']);
    await ok(['breaks', 'advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--key', people.keys.olivia.key, '--approver', 'amy']);
    await ok(['breaks', 'approve', ID, '--version', '3', '--key', people.keys.amy.key]);
  });
  afterAll(() => tmp?.cleanup());

  it('writes breaks and break_events with typed columns and exact text beside them', async () => {
    const rows = await breakOutputRows(await openStore(store), { runId: 'run-test', config: defaultConfig().config, controls: await loadControls() });
    expect(rows.breaks).toHaveLength(1);
    expect(rows.break_events).toHaveLength(3);
    for (const [table, cols] of Object.entries(BREAK_OUTPUT_TABLES)) for (const r of rows[table as keyof typeof rows]) expect(Object.keys(r)).toEqual(cols.map((c) => c.name));

    const objects = await writeOutputs(duck.conn, join(tmp.dir, 'staging'), '2026-11-02', 'run-test', rows, BREAK_OUTPUT_TABLES);
    expect(objects.map((o) => [o.table, o.key, o.rows])).toEqual([
      ['breaks', 'outputs/breaks/window_date=2026-11-02/run=run-test/part-00000.parquet', 1],
      ['break_events', 'outputs/break_events/window_date=2026-11-02/run=run-test/part-00000.parquet', 3],
    ]);
    const path = (t: string) => objects.find((o) => o.table === t)!.localPath;

    const types = async (t: string) => Object.fromEntries((await (await duck.conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path(t)}')`)).getRowObjectsJson()).map((r) => [r.column_name, r.column_type]));
    const bt = await types('breaks');
    expect(bt).toMatchObject({ version: 'INTEGER', owner_assigned: 'BOOLEAN', age_s: 'DECIMAL(38,6)', sla_s: 'BIGINT', sla_breached: 'BOOLEAN', first_record_time_text: 'VARCHAR' });
    expect(bt.first_record_time).toMatch(/^TIMESTAMP/);
    expect(Object.values(bt).some((ty) => /FLOAT|DOUBLE|HUGEINT/.test(String(ty)))).toBe(false);

    const [b] = (await duck.conn.runAndReadAll(`SELECT break_id, state, version, owner, owner_assigned::VARCHAR AS owner_assigned, classification, age_s::VARCHAR AS age_s, age_s_text, sla_s::VARCHAR AS sla_s,
      sla_breached::VARCHAR AS sla_breached, strftime(first_record_time, '%Y-%m-%dT%H:%M:%S.%g') AS frt_ms, first_record_time_text, as_of_text,
      strftime(window_start, '%Y-%m-%dT%H:%M:%S') AS ws, observation_count::VARCHAR AS n FROM read_parquet('${path('breaks')}')`)).getRowObjectsJson();
    expect(b).toEqual({
      break_id: ID, state: 'CONTAINED', version: 3, owner: 'olivia', owner_assigned: 'true', classification: 'MISSING',
      age_s: '50699.999999', age_s_text: '50699.999999', sla_s: '3600', sla_breached: 'true',
      frt_ms: '2026-11-02T10:00:00.000', first_record_time_text: '2026-11-02T10:00:00.000001Z', as_of_text: '2026-11-03T00:05:00Z',
      ws: '2026-11-02T00:00:00', n: '1',
    });

    const ev = (await duck.conn.runAndReadAll(`SELECT version, from_state, to_state, actor, owner, approver, note, event_at_text, epoch_ms(event_at)::VARCHAR AS at_ms, evidence_json, event_run_id
      FROM read_parquet('${path('break_events')}') ORDER BY version`)).getRowObjectsJson();
    expect(ev.map((e) => [e.version, e.from_state, e.to_state, e.actor, e.owner, e.approver])).toEqual([
      [1, null, 'OPEN', 'reconciler', null, null], [2, 'OPEN', 'TRIAGED', 'tom', 'olivia', null], [3, 'TRIAGED', 'CONTAINED', 'olivia', null, 'amy'],
    ]);
    // The run's own OPEN event: its proving manifest from the binding.
    expect(String(ev[0].evidence_json)).toMatch(/"manifest_sha256":"[0-9a-f]{64}"/);
    expect(ev[1].note).toBe('line one\nline "two"');
    expect(JSON.parse(String(ev[1].evidence_json))).toEqual({ classification: 'MISSING', note: 'line one\nline "two"', owner: 'olivia' });
    expect(String(ev[0].event_run_id)).toMatch(/^run-/);
    for (const e of ev) expect(String(e.at_ms)).toBe(String(Date.parse(String(e.event_at_text))));
  });
});

describe('write-once event log', () => {
  let tmp: ReturnType<typeof scratchDir>;
  beforeAll(() => { tmp = scratchDir('reckon-breaks-log-'); });
  afterAll(() => tmp?.cleanup());

  it('lets exactly one of many concurrent appends of a version land', async () => {
    const bs = new BreakStore(await openStore(tmp.dir));
    const event = (actor: string) => ({
      payload: payloadOf({
        break_id: ID, version: 1, expected_version: 0, previous_event_sha256: null, control_id: 'RC06', kind: FAULT.kind, key: FAULT.key,
        from_state: null, to_state: 'OPEN' as const, actor, at: '2026-11-03T00:10:00.000Z', evidence: {}, proof: 'unsigned',
      }),
      signatures: [],
    });
    const results = await Promise.allSettled(['a', 'b', 'c', 'd', 'e', 'f'].map((a) => bs.putEvent(ID, 1, event(a))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConcurrencyError);
    const rec = (await bs.read(ID))!;
    expect(rec.version).toBe(1);
    expect(rec.events).toHaveLength(1);
  });
});
