/**
 * Runs one Athena query (`reckon athena query`) through @aws-sdk/client-athena: StartQueryExecution
 * in a workgroup (with an output location and database when given), GetQueryExecution polled with
 * exponential backoff and full jitter until the query ends or the deadline passes (then the query
 * is stopped), and GetQueryResults page by page. Values come back as Athena's text; nothing is
 * converted to a JS number. Credentials and region come from the SDK's default chain and
 * environment (AWS_ENDPOINT_URL_ATHENA is honoured by the SDK itself).
 */
import {
  AthenaClient, GetQueryExecutionCommand, GetQueryResultsCommand, StartQueryExecutionCommand, StopQueryExecutionCommand,
  type GetQueryExecutionCommandOutput,
} from '@aws-sdk/client-athena';
import { AthenaQueryError } from '../core/errors.js';

/** A query that failed, was cancelled or ran out of time (core/errors.ts). FAILED/CANCELLED → exit 2; deadline → exit 70. */
export { AthenaQueryError };

/** How to run the query. */
export interface AthenaQueryOptions {
  readonly workgroup: string;
  /** `s3://…/` for results; optional when the workgroup enforces its own. */
  readonly outputLocation?: string;
  readonly database?: string;
  /** Give up (and stop the query) after this many milliseconds (default 300 000). */
  readonly deadlineMs?: number;
  /** First poll delay and its cap, ms (defaults 200 and 5 000). */
  readonly pollInitialMs?: number;
  readonly pollMaxMs?: number;
  readonly client?: AthenaClient;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
  readonly random?: () => number;
}

/** A finished query: its id, columns (name and Athena type), rows as text (null for SQL NULL) and statistics. */
export interface AthenaQueryResult {
  readonly queryExecutionId: string;
  readonly state: 'SUCCEEDED';
  readonly columns: readonly { readonly name: string; readonly type: string }[];
  readonly rows: readonly (readonly (string | null)[])[];
  readonly statistics: { readonly data_scanned_bytes: number | null; readonly engine_execution_ms: number | null };
}

/**
 * Runs `sql` and returns its rows. Throws AthenaQueryError when the query fails, is cancelled or
 * outlives the deadline (the query is then stopped), and the SDK's error when a call fails.
 */
export async function runAthenaQuery(sql: string, opts: AthenaQueryOptions): Promise<AthenaQueryResult> {
  const client = opts.client ?? new AthenaClient({});
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = opts.now ?? Date.now;
  const random = opts.random ?? Math.random;
  const deadline = now() + (opts.deadlineMs ?? 300_000);
  const started = await client.send(new StartQueryExecutionCommand({
    QueryString: sql,
    WorkGroup: opts.workgroup,
    ...(opts.outputLocation ? { ResultConfiguration: { OutputLocation: opts.outputLocation } } : {}),
    ...(opts.database ? { QueryExecutionContext: { Database: opts.database } } : {}),
  }));
  const id = started.QueryExecutionId!;
  let exec: GetQueryExecutionCommandOutput;
  for (let attempt = 0; ; attempt++) {
    exec = await client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
    const state = exec.QueryExecution?.Status?.State;
    if (state === 'SUCCEEDED') break;
    if (state === 'FAILED' || state === 'CANCELLED') {
      const reason = exec.QueryExecution?.Status?.StateChangeReason ?? exec.QueryExecution?.Status?.AthenaError?.ErrorMessage ?? 'no reason given';
      throw new AthenaQueryError(`Athena query ${id} ${state}: ${reason}`, id, state);
    }
    const ceiling = Math.min(opts.pollMaxMs ?? 5_000, (opts.pollInitialMs ?? 200) * 2 ** Math.min(attempt, 20));
    // Full jitter, but never a busy loop: at least a tenth of the ceiling.
    const delay = Math.max(Math.floor(ceiling / 10), Math.floor(random() * ceiling));
    if (now() + delay > deadline) {
      await client.send(new StopQueryExecutionCommand({ QueryExecutionId: id })).catch(() => undefined);
      throw new AthenaQueryError(`Athena query ${id} was still ${state ?? 'unknown'} at the deadline (${opts.deadlineMs ?? 300_000} ms); it was stopped`, id, 'DEADLINE');
    }
    await sleep(delay);
  }

  const columns: { name: string; type: string }[] = [];
  const rows: (string | null)[][] = [];
  let token: string | undefined;
  let first = true;
  do {
    const page = await client.send(new GetQueryResultsCommand({ QueryExecutionId: id, NextToken: token }));
    if (first) {
      for (const c of page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? []) columns.push({ name: c.Name ?? c.Label ?? '', type: c.Type ?? '' });
    }
    const pageRows = (page.ResultSet?.Rows ?? []).map((r) => (r.Data ?? []).map((d) => (d.VarCharValue === undefined ? null : d.VarCharValue)));
    // For SELECT (DML) results, Athena's first row repeats the column names.
    if (first && exec.QueryExecution?.StatementType === 'DML' && pageRows.length && pageRows[0].every((v, i) => v === columns[i]?.name)) pageRows.shift();
    rows.push(...pageRows);
    first = false;
    token = page.NextToken;
  } while (token);
  const stats = exec.QueryExecution?.Statistics;
  return {
    queryExecutionId: id, state: 'SUCCEEDED', columns, rows,
    statistics: { data_scanned_bytes: stats?.DataScannedInBytes ?? null, engine_execution_ms: stats?.EngineExecutionTimeInMillis ?? null },
  };
}
