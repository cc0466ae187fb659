/** The `--store` option of the commands that read a store: a local folder that must exist, or `s3://…`. */
import { existsSync } from 'node:fs';
import { ConfigError } from '../core/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { openStore } from '../store/open-store.js';
import { localOrRemote, type CliIo } from './io.js';

/** Opens the store `--store` names (default `var/reckon`). Throws ConfigError (exit 2) when a local one does not exist. */
export async function openExistingStore(io: Pick<CliIo, 'cwd'>, location = 'var/reckon'): Promise<ObjectStore> {
  const where = localOrRemote(io, location);
  if (!where.startsWith('s3://') && !existsSync(where)) throw new ConfigError(`--store ${location}: no store there`);
  return openStore(where);
}
