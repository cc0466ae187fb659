/** `reckon import`: not built yet (see the issue that introduces it). */
import { ConfigError } from '../errors.js';

export async function command(argv: string[]): Promise<number> {
  void argv;
  throw new ConfigError('reckon import is not available in this build');
}
