/** Opens a store by location: a local folder or `s3://bucket/prefix` (the AWS SDK is loaded only then). */
import { stat } from 'node:fs/promises';
import { ConfigError } from '../core/errors.js';
import { makeDirs } from '../core/paths.js';
import { DEFAULT_SETTINGS, type S3Settings } from '../core/settings.js';
import { LocalObjectStore } from './local-store.js';
import type { ObjectStore } from './object-store.js';

/**
 * Opens the store at `location`: `s3://bucket/prefix` opens the S3 store (s3-store.ts; the AWS SDK
 * is loaded only then; `s3` gives its endpoint, retries, concurrency and Object Lock), anything else
 * is a local directory, created if missing. Throws ConfigError when an S3 location is malformed or
 * its bucket cannot be listed.
 */
export async function openStore(location: string, s3: S3Settings = DEFAULT_SETTINGS.s3): Promise<ObjectStore> {
  if (location.startsWith('s3://')) {
    const { openS3Store, s3StoreOptions } = await import('./s3-store.js');
    return openS3Store(location, s3StoreOptions(s3));
  }
  try {
    await makeDirs(location);
    if (!(await stat(location)).isDirectory()) throw new Error('not a directory');
  } catch (e) {
    throw new ConfigError(`--store ${location} cannot be used as a store folder: ${(e as Error).message}`);
  }
  return new LocalObjectStore(location);
}
