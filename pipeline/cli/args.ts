/** Command-line parsing helpers: node:util parseArgs with every problem as a ConfigError (exit 2). */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../core/errors.js';

/** Parses `argv` with the given options; unknown options and missing values are ConfigErrors. */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}
