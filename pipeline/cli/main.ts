/**
 * The `reckon` command line (CONTRACT §7). Each subcommand lives in its own module, loaded only
 * when called, and returns an exit code; every thrown error maps to its exit code in one place
 * (core/outcome.ts), with a line on stderr naming what went wrong. The settings are parsed from
 * the command's environment here, once, before the subcommand runs (core/settings.ts).
 */
import { InterruptedError, ReckonError } from '../core/errors.js';
import { ExitCode, exitCodeOf } from '../core/outcome.js';
import { parseSettings } from '../core/settings.js';
import type { CommandModule } from './command.js';
import { processIo, type CliIo } from './io.js';

export type { CommandContext } from './command.js';

/** Subcommand → module exporting `command(argv, ctx)`. */
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  run: () => import('./run-command.js'),
  runs: () => import('./runs-command.js'),
  manifest: () => import('./manifest-command.js'),
  breaks: () => import('./breaks-command.js'),
  generate: () => import('./generate-command.js'),
  schedule: () => import('./schedule-command.js'),
  athena: () => import('./athena-command.js'),
  evidence: () => import('./evidence-command.js'),
  report: () => import('./report-command.js'),
  import: () => import('./import-command.js'),
  console: () => import('./console-command.js'),
  records: () => import('./records-command.js'),
  quarantine: () => import('./quarantine-command.js'),
};

const USAGE = `usage: reckon <command> [options]

  reckon run      (--date D | --window START/END) [--control RC01,RC03 | --all]
                  [--sources DIR|s3://…|FILE.yaml] [--store DIR|s3://…] [--config FILE]
                  [--trigger manual|scheduled-nightly|scheduled-intraday|incident]
                  [--reason TEXT] [--rerun-of RUN_ID] [--no-alerts | --alerts-dry-run] [--json] [--quiet]
  reckon runs     [--store DIR] [--window START/END] [--json]      (published runs, oldest first, with alerts)
  reckon manifest verify [--store DIR] [--run RUN_ID] [--signers FILE | --config FILE] [--json]
  reckon breaks   list|show|advance …          (reckon breaks list --help, …)
  reckon records  (--break B | --run R|latest --kind K --key KEY) [--store DIR] [--json]
                                               (the records behind a difference, with their source rows)
  reckon quarantine list|show N [--run R|latest] [--store DIR] [--json]
  reckon generate --orders N --date D --out DIR [--seed S] [--format csv|parquet]
  reckon schedule --plan nightly|intraday …    (reckon schedule --help; --dry-run shows the windows)
  reckon athena   ddl|query …                  (reckon athena ddl --help, …)
  reckon evidence pack|verify …                (reckon evidence pack --help, …)
  reckon report   --run RUN_ID|latest --out FILE [--store DIR]
  reckon import   camt053|mt940|bai2|fix FILE… --out SOURCES_DIR
  reckon console  --store DIR [--config FILE] [--key FILE] [--port N]   (the break console, a web page)

Every command takes --help. --store defaults to ./var/reckon, --sources to ./sources.

Exit codes: 0 clean, 1 breaks, 2 usage/configuration, 3 input quarantined, 4 not ready,
5 window locked by another run, 6 break transition lost, 70 internal error;
130 / 143 stopped by SIGINT / SIGTERM (outside the contract: 128 + the signal).
`;

const RUN_USAGE = `usage: reckon run (--date D | --window START/END) [--control RC01,RC03 | --all]
                  [--sources DIR|s3://…|FILE.yaml] [--store DIR|s3://…] [--config FILE]
                  [--trigger manual|scheduled-nightly|scheduled-intraday|incident]
                  [--reason TEXT] [--rerun-of RUN_ID] [--no-alerts | --alerts-dry-run] [--json] [--quiet]

  --date D            the UTC day [D 00:00Z, D+1 00:00Z)
  --window S/E        a half-open UTC window of two zoned timestamps
  --control / --all   the controls to run (default: all of them)
  --sources           one folder per dataset, local or s3:// (default ./sources), or a sources
                      file (.yaml/.yml/.json) mapping datasets to PostgreSQL queries and folders
  --store             where manifests, breaks and outputs are published (default ./var/reckon)
  --config FILE       JSON or YAML configuration (rounding mode, SLAs, owners, control parameters)
  --trigger, --reason, --rerun-of
                      why this run (an incident rerun gives all three: incident, a reason, the run it reruns)
  --no-alerts         send no alerts (the run's delivery record says so)
  --alerts-dry-run    send no alerts; print what would be sent (docs/alerts.md)
  --json              one JSON object on stdout (also when the run fails)
  --quiet             no progress on stderr (warnings and quarantine lines still)

Exit codes: 0 clean, 1 breaks, 2 usage/configuration, 3 input quarantined, 4 not ready,
5 window locked by another run, 6 break transition lost, 70 internal error;
130 / 143 stopped by SIGINT / SIGTERM (outside the contract: 128 + the signal).
`;

/** True until the first command of this process: only that one counts the process's start-up in its wall time. */
let firstCall = true;

/**
 * Entry point: runs `reckon …argv` against `io` (the process's own by default; cli/io.ts
 * `captureIo()` to run in another program or a test) and returns the exit code of CONTRACT §7.
 * Never throws: every error is a line on stderr (and with `--json` one object on stdout).
 * Calls are independent of each other, so one process may call it many times.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const enteredMs = performance.now();
  const clock = { originMs: firstCall ? 0 : enteredMs, enteredMs };
  firstCall = false;
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    io.stdout(USAGE);
    return cmd ? ExitCode.CLEAN : ExitCode.USAGE;
  }
  if (cmd === '--version' || cmd === 'version') {
    const { readFileSync } = await import('node:fs');
    const { repoPath } = await import('../core/paths.js');
    io.stdout(`reckon ${(JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { version: string }).version} (Node ${process.version})\n`);
    // Said here once rather than by the AWS SDK on every S3 command (bin/reckon.js).
    if (Number(process.versions.node.split('.')[0]) < 22) io.stdout('note: the AWS SDK\'s releases after January 2027 need Node 22 or later; reckon runs on Node 20, 22 and 24\n');
    return 0;
  }
  const load = COMMANDS[cmd];
  if (!load) {
    io.stderr(`reckon: unknown command '${cmd}'\n${USAGE}`);
    return ExitCode.USAGE;
  }
  // `--help` anywhere after the command shows that command's (or subcommand's) usage, as the README says.
  if (rest.includes('--help') || rest.includes('-h')) {
    const text = cmd === 'run' ? RUN_USAGE : (await load()).usage(rest.filter((a) => a !== '--help' && a !== '-h'));
    io.stdout(text.endsWith('\n') ? text : `${text}\n`);
    return ExitCode.CLEAN;
  }
  try {
    const settings = parseSettings(io.env);
    const { command } = await load();
    return await command(rest, { io, settings, clock });
  } catch (e) {
    return reportFailure(io, e, rest.includes('--json'));
  }
}

/** Writes what failed to stderr (and, for `--json`, one object to stdout); returns its exit code. */
function reportFailure(io: CliIo, e: unknown, json: boolean): number {
  const code = exitCodeOf(e);
  // An interrupted run's message is its own sentence: `reckon: interrupted by SIGTERM: nothing published; …`.
  const what = e instanceof InterruptedError ? e.message : e instanceof ReckonError ? `${e.name}: ${e.message}` : `internal error: ${(e as Error)?.stack ?? String(e)}`;
  io.stderr(`reckon: ${what}\n`);
  // With --json a caller parses stdout: give it one object saying what failed.
  if (json) io.stdout(`${JSON.stringify({ error: { type: e instanceof ReckonError ? e.name : 'InternalError', message: (e as Error)?.message ?? String(e) }, exit_code: code })}\n`);
  return code;
}
