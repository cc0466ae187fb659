/** What the command line hands every subcommand (cli/main.ts): its I/O and the settings parsed from `io.env`. */
import type { Settings } from '../core/settings.js';
import type { CliIo } from './io.js';

/** A subcommand's surroundings: where it reads and writes, and the settings of its environment (core/settings.ts). */
export interface CommandContext {
  readonly io: CliIo;
  readonly settings: Settings;
  /** When this command started, for the run's timings (cli/main.ts); absent outside the CLI. */
  readonly clock?: CliClock;
}

/**
 * Where a command's time started, in `performance.now()` milliseconds: `originMs` is the start of
 * what a run's `wall_ms` counts (0, the process's start, for the first command of a process, so
 * Node's start and module loading count; the call itself for later ones), `enteredMs` when
 * `main` was entered.
 */
export interface CliClock {
  readonly originMs: number;
  readonly enteredMs: number;
}

/** A subcommand: runs with its arguments (after the subcommand name) and returns the exit code. */
export type Command = (argv: string[], ctx: CommandContext) => Promise<number>;

/** A command module: its command and its usage text for `--help` (given the arguments, so a subcommand's own usage can be picked). */
export interface CommandModule {
  readonly command: Command;
  readonly usage: (argv: string[]) => string;
}
