/** Command-line parsing helpers: node:util parseArgs with every problem as a ConfigError (exit 2). */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../core/errors.js';

/** Parses `argv` with the given options; unknown options, missing values and empty values (`--sources ""`) are ConfigErrors. */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
  // An empty value is never meant (an unset shell variable): `--sources ""` must not mean the current folder.
  for (const [name, v] of Object.entries(parsed.values)) {
    if (v === '' || (Array.isArray(v) && v.includes(''))) throw new ConfigError(`--${name} is empty; give it a value (an unset shell variable?)`);
  }
  return parsed;
}
