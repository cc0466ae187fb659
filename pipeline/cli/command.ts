/** What the command line hands every subcommand (cli/main.ts): its I/O and the settings parsed from `io.env`. */
import type { Settings } from '../core/settings.js';
import type { CliIo } from './io.js';

/** A subcommand's surroundings: where it reads and writes, and the settings of its environment (core/settings.ts). */
export interface CommandContext {
  readonly io: CliIo;
  readonly settings: Settings;
}

/** A subcommand: runs with its arguments (after the subcommand name) and returns the exit code. */
export type Command = (argv: string[], ctx: CommandContext) => Promise<number>;
