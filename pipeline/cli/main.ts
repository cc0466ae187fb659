/**
 * The `reckon` command line (CONTRACT §7). Each subcommand lives in its own module and returns an
 * exit code; every thrown error maps to its exit code in one place (errors.ts), with a line on
 * stderr naming what went wrong.
 */
import { exitCodeOf, ReckonError } from '../errors.js';
import { runCommand, RUN_USAGE } from './run-command.js';
import { manifestCommand } from './manifest-command.js';

type Command = (argv: string[]) => Promise<number>;

/** Subcommands; later modules register theirs here. */
export const COMMANDS: Record<string, Command> = {
  run: runCommand,
  manifest: manifestCommand,
};

const USAGE = `usage: reckon <command> [options]

  ${RUN_USAGE}
  reckon manifest verify [--store DIR] [--run RUN_ID] [--json]
`;

/** Entry point: returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    process.stdout.write(USAGE);
    return cmd ? 0 : 2;
  }
  const fn = COMMANDS[cmd];
  if (!fn) {
    process.stderr.write(`reckon: unknown command '${cmd}'\n${USAGE}`);
    return 2;
  }
  try {
    return await fn(rest);
  } catch (e) {
    const code = exitCodeOf(e);
    const what = e instanceof ReckonError ? `${e.name}: ${e.message}` : `internal error: ${(e as Error)?.stack ?? String(e)}`;
    process.stderr.write(`reckon: ${what}\n`);
    return code;
  }
}
