/**
 * `reckon athena ddl|query` (docs/s3-athena.md).
 *
 *   reckon athena ddl --store s3://bucket/prefix [--database reckon] [--since YYYY-MM-DD] [--json]
 *   reckon athena query "SQL" --workgroup W [--output s3://…/] [--database D] [--timeout-s 300] [--json]
 *
 * `ddl` prints the CREATE DATABASE, CREATE EXTERNAL TABLE and CREATE VIEW statements for every
 * output table of the store (the tables this build writes, plus any other table found under
 * `outputs/`). `query` runs one statement in Athena and prints its rows: tab-separated with a
 * header, or with `--json` one object `{query_execution_id, columns, rows}` where each row is an
 * object of column → text (null for NULL). Usage errors exit 2.
 */
import { ConfigError, ReckonError } from '../core/errors.js';
import { athenaDdl, ddlScript } from '../athena/ddl.js';
import { parse } from './args.js';
import { printJson, type CliIo } from './io.js';
import type { CommandContext } from './command.js';

const DDL_USAGE = 'reckon athena ddl --store s3://bucket/prefix [--database reckon] [--since YYYY-MM-DD] [--json]';
const QUERY_USAGE = 'reckon athena query "SQL" --workgroup W [--output s3://bucket/results/] [--database D] [--timeout-s 300] [--json]';
const USAGE = `usage:\n  ${DDL_USAGE}\n  ${QUERY_USAGE}`;

/** The usage of `reckon athena …`: the subcommand's, or both. */
export function usage(argv: string[]): string {
  return argv[0] === 'ddl' ? `usage: ${DDL_USAGE}` : argv[0] === 'query' ? `usage: ${QUERY_USAGE}` : USAGE;
}

/** Runs `reckon athena` with `argv` (after the subcommand). Returns the exit code. */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'help') { io.stdout(`${USAGE}\n`); return 0; }
  try {
    if (sub === 'ddl') return await ddl(rest, io);
    if (sub === 'query') return await query(rest, io);
  } catch (e) {
    if (e instanceof ReckonError) throw e;
    throw new ConfigError(`reckon athena ${sub}: ${(e as Error).message} (check AWS_REGION, credentials and the endpoint)`);
  }
  throw new ConfigError(`reckon athena needs ddl or query\n${USAGE}`);
}

async function ddl(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    store: { type: 'string' }, database: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean' },
  }, true);
  if (positionals.length) throw new ConfigError(`unexpected argument ${positionals[0]}\n${USAGE}`);
  if (!values.store?.startsWith('s3://')) throw new ConfigError(`reckon athena ddl needs --store s3://bucket/prefix (Athena reads S3)\n${USAGE}`);
  const { openStore } = await import('../store/open-store.js');
  const { discoverOutputTables } = await import('../athena/schema.js');
  const store = await openStore(values.store);
  const tables = await discoverOutputTables(store);
  const statements = athenaDdl(tables, { database: values.database ?? 'reckon', store: values.store, since: values.since });
  if (values.json) printJson(io, { database: values.database ?? 'reckon', store: values.store, statements });
  else io.stdout(ddlScript(statements));
  return 0;
}

async function query(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    workgroup: { type: 'string' }, output: { type: 'string' }, database: { type: 'string' }, 'timeout-s': { type: 'string' }, json: { type: 'boolean' },
  }, true);
  if (positionals.length !== 1 || positionals[0].trim() === '') throw new ConfigError(`reckon athena query needs exactly one SQL statement\n${USAGE}`);
  if (!values.workgroup) throw new ConfigError(`reckon athena query needs --workgroup\n${USAGE}`);
  if (values.output !== undefined && !values.output.startsWith('s3://')) throw new ConfigError('--output must be an s3:// location');
  const timeout = values['timeout-s'] ?? '300';
  if (!/^[0-9]+$/.test(timeout) || Number(timeout) < 1) throw new ConfigError('--timeout-s must be a whole number of seconds ≥ 1');
  const { runAthenaQuery } = await import('../athena/query.js');
  const result = await runAthenaQuery(positionals[0], {
    workgroup: values.workgroup, outputLocation: values.output, database: values.database, deadlineMs: Number(timeout) * 1000,
  });
  if (values.json) {
    printJson(io, {
      query_execution_id: result.queryExecutionId, state: result.state, columns: result.columns,
      rows: result.rows.map((r) => Object.fromEntries(result.columns.map((c, i) => [c.name, r[i] ?? null]))),
      statistics: result.statistics,
    });
  } else {
    const cell = (v: string | null) => (v === null ? 'NULL' : v.replace(/[\t\n\r\\]/g, (ch) => ({ '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' } as Record<string, string>)[ch]));
    const lines = [result.columns.map((c) => c.name).join('\t'), ...result.rows.map((r) => r.map(cell).join('\t'))];
    io.stdout(`${lines.join('\n')}\n`);
    io.stderr(`reckon: athena query ${result.queryExecutionId}: ${result.rows.length} row(s)\n`);
  }
  return 0;
}
