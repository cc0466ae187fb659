/**
 * `reckon athena query` and runAthenaQuery against recorded Athena responses. Athena cannot run
 * here, so a loopback HTTP server (the test double, at the SDK's network boundary) replays
 * responses in Athena's JSON 1.1 wire format, shaped as the service documents them: the real SDK
 * serializes, signs, sends and deserializes every call. Athena itself is verified only in AWS.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AthenaClient } from '@aws-sdk/client-athena';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AthenaQueryError, runAthenaQuery } from '../pipeline/athena/query.js';
import { exitCodeOf } from '../pipeline/core/outcome.js';
import { reckonAsync } from './helpers/cli.js';

type Json = Record<string, unknown>;

const COLUMNS = [
  { name: 'run_id', type: 'varchar' }, { name: 'control_id', type: 'varchar' }, { name: 'value_decimal', type: 'decimal' }, { name: 'as_of', type: 'timestamp' },
];
const columnInfo = COLUMNS.map((c) => ({
  CatalogName: 'hive', SchemaName: '', TableName: '', Name: c.name, Label: c.name, Type: c.type,
  Precision: c.type === 'decimal' ? 38 : c.type === 'timestamp' ? 3 : 2147483647, Scale: c.type === 'decimal' ? 18 : 0, Nullable: 'UNKNOWN', CaseSensitive: c.type === 'varchar',
}));
const row = (...v: (string | null)[]) => ({ Data: v.map((x) => (x === null ? {} : { VarCharValue: x })) });

/** Recorded scenario per SQL text: the states GetQueryExecution reports in turn, then result pages. */
const SCENARIOS: Record<string, { states: string[]; reason?: string; pages?: Json[] }> = {
  'SELECT run_id, control_id, value_decimal, as_of FROM recon_prod.control_totals': {
    states: ['QUEUED', 'RUNNING', 'RUNNING', 'SUCCEEDED'],
    pages: [
      { UpdateCount: 0, ResultSet: { Rows: [row('run_id', 'control_id', 'value_decimal', 'as_of'), row('run-20261103t020000z-1a2b3c4d', 'RC01', '12345678901234567890.123456789012345678', '2026-11-03 00:05:00.000')], ResultSetMetadata: { ColumnInfo: columnInfo } }, NextToken: 'page-2' },
      { UpdateCount: 0, ResultSet: { Rows: [row('run-20261103t020000z-1a2b3c4d', 'RC02', null, '2026-11-03 00:05:00.000')], ResultSetMetadata: { ColumnInfo: columnInfo } } },
    ],
  },
  'SELECT nope FROM recon_prod.runs': {
    states: ['QUEUED', 'FAILED'],
    reason: "COLUMN_NOT_FOUND: line 1:8: Column 'nope' cannot be resolved or requester is not authorized to access requested resources",
  },
  'SELECT slow FROM recon_prod.runs': { states: ['RUNNING'] },
};

let server: Server;
let endpoint: string;
const calls: { target: string; body: Json }[] = [];
const executions = new Map<string, { sql: string; polls: number; database?: string; workgroup: string }>();

function answer(target: string, body: Json): Json {
  if (target === 'StartQueryExecution') {
    const id = `0a1b2c3d-0000-4000-8000-${String(executions.size + 1).padStart(12, '0')}`;
    executions.set(id, { sql: body.QueryString as string, polls: 0, workgroup: body.WorkGroup as string, database: (body.QueryExecutionContext as Json | undefined)?.Database as string | undefined });
    return { QueryExecutionId: id };
  }
  const id = body.QueryExecutionId as string;
  const ex = executions.get(id)!;
  const sc = SCENARIOS[ex.sql];
  if (target === 'GetQueryExecution') {
    const state = sc.states[Math.min(ex.polls++, sc.states.length - 1)];
    return {
      QueryExecution: {
        QueryExecutionId: id, Query: ex.sql, StatementType: 'DML',
        ResultConfiguration: { OutputLocation: `s3://reckon-athena-results/${id}.csv` },
        QueryExecutionContext: ex.database ? { Database: ex.database, Catalog: 'awsdatacatalog' } : {},
        Status: {
          State: state, SubmissionDateTime: 1793671200.123,
          ...(state === 'FAILED' ? { StateChangeReason: sc.reason, AthenaError: { ErrorCategory: 2, ErrorType: 1006, Retryable: false, ErrorMessage: sc.reason } } : {}),
          ...(state === 'SUCCEEDED' || state === 'FAILED' ? { CompletionDateTime: 1793671201.456 } : {}),
        },
        Statistics: { EngineExecutionTimeInMillis: 812, DataScannedInBytes: 10485, TotalExecutionTimeInMillis: 1033, QueryQueueTimeInMillis: 120 },
        WorkGroup: ex.workgroup,
        EngineVersion: { SelectedEngineVersion: 'AUTO', EffectiveEngineVersion: 'Athena engine version 3' },
      },
    };
  }
  if (target === 'GetQueryResults') return sc.pages![body.NextToken === 'page-2' ? 1 : 0];
  if (target === 'StopQueryExecution') return {};
  throw new Error(`unexpected ${target}`);
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (d) => { raw += String(d); });
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '').replace('AmazonAthena.', '');
      const body = JSON.parse(raw || '{}') as Json;
      calls.push({ target, body });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': `req-${calls.length}` });
      res.end(JSON.stringify(answer(target, body)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => { await new Promise((r) => server.close(r)); });

const client = () => new AthenaClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'TEST', secretAccessKey: 'TEST' } });

describe('runAthenaQuery', () => {
  it('starts in the workgroup, polls with growing full-jitter delays, and reads every page of rows as text', async () => {
    const delays: number[] = [];
    const r = await runAthenaQuery('SELECT run_id, control_id, value_decimal, as_of FROM recon_prod.control_totals', {
      workgroup: 'reckon', outputLocation: 's3://reckon-athena-results/', database: 'recon_prod', client: client(),
      sleep: async (ms) => { delays.push(ms); }, random: () => 0.5,
    });
    const start = calls.filter((c) => c.target === 'StartQueryExecution').at(-1)!.body;
    expect(start).toMatchObject({ QueryString: 'SELECT run_id, control_id, value_decimal, as_of FROM recon_prod.control_totals', WorkGroup: 'reckon', ResultConfiguration: { OutputLocation: 's3://reckon-athena-results/' }, QueryExecutionContext: { Database: 'recon_prod' } });
    expect(delays).toEqual([100, 200, 400]);
    expect(r.columns).toEqual(COLUMNS);
    expect(r.rows).toEqual([
      ['run-20261103t020000z-1a2b3c4d', 'RC01', '12345678901234567890.123456789012345678', '2026-11-03 00:05:00.000'],
      ['run-20261103t020000z-1a2b3c4d', 'RC02', null, '2026-11-03 00:05:00.000'],
    ]);
    expect(r.statistics).toEqual({ data_scanned_bytes: 10485, engine_execution_ms: 812 });
  });

  it('reports a failed query with Athena’s reason (exit 2)', async () => {
    const err = await runAthenaQuery('SELECT nope FROM recon_prod.runs', { workgroup: 'reckon', client: client(), sleep: async () => undefined }).catch((e) => e);
    expect(err).toBeInstanceOf(AthenaQueryError);
    expect(err.state).toBe('FAILED');
    expect(exitCodeOf(err)).toBe(2);
    expect(err.message).toMatch(/^Athena query 0a1b2c3d-[0-9a-f-]+ FAILED: COLUMN_NOT_FOUND: line 1:8: Column 'nope' cannot be resolved/);
  });

  it('stops a query still running at the deadline (exit 70)', async () => {
    let clock = 0;
    const delays: number[] = [];
    const err = await runAthenaQuery('SELECT slow FROM recon_prod.runs', {
      workgroup: 'reckon', client: client(), deadlineMs: 10_000, pollInitialMs: 200, pollMaxMs: 2_000,
      now: () => clock, sleep: async (ms) => { delays.push(ms); clock += ms; }, random: () => 0.999,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(AthenaQueryError);
    expect(err.state).toBe('DEADLINE');
    expect(exitCodeOf(err)).toBe(70);
    expect(delays).toEqual([199, 399, 799, 1598, 1998, 1998, 1998]);
    const stop = calls.filter((c) => c.target === 'StopQueryExecution');
    expect(stop.map((c) => c.body.QueryExecutionId)).toEqual([err.queryExecutionId]);
  });
});

describe('reckon athena query', () => {
  function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const child = reckonAsync(args, { env: { AWS_ENDPOINT_URL_ATHENA: endpoint, AWS_ACCESS_KEY_ID: 'TEST', AWS_SECRET_ACCESS_KEY: 'TEST', AWS_REGION: 'us-east-1' } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => { stdout += String(d); });
    child.stderr!.on('data', (d) => { stderr += String(d); });
    return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
  }

  it('prints rows as JSON objects of column → text', async () => {
    const r = await run(['athena', 'query', 'SELECT run_id, control_id, value_decimal, as_of FROM recon_prod.control_totals', '--workgroup', 'reckon', '--output', 's3://reckon-athena-results/', '--database', 'recon_prod', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.query_execution_id).toMatch(/^0a1b2c3d-/);
    expect(doc.rows).toEqual([
      { run_id: 'run-20261103t020000z-1a2b3c4d', control_id: 'RC01', value_decimal: '12345678901234567890.123456789012345678', as_of: '2026-11-03 00:05:00.000' },
      { run_id: 'run-20261103t020000z-1a2b3c4d', control_id: 'RC02', value_decimal: null, as_of: '2026-11-03 00:05:00.000' },
    ]);
  });

  it('prints a tab-separated table without --json, and exits 2 for a failed query or bad usage', async () => {
    const r = await run(['athena', 'query', 'SELECT run_id, control_id, value_decimal, as_of FROM recon_prod.control_totals', '--workgroup', 'reckon']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('run_id\tcontrol_id\tvalue_decimal\tas_of\nrun-20261103t020000z-1a2b3c4d\tRC01\t12345678901234567890.123456789012345678\t2026-11-03 00:05:00.000\nrun-20261103t020000z-1a2b3c4d\tRC02\tNULL\t2026-11-03 00:05:00.000\n');
    const failed = await run(['athena', 'query', 'SELECT nope FROM recon_prod.runs', '--workgroup', 'reckon']);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain("COLUMN_NOT_FOUND: line 1:8: Column 'nope' cannot be resolved");
    const usage = await run(['athena', 'query', 'SELECT 1']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('needs --workgroup');
  });
});
