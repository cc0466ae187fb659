/**
 * Resolves a source location (CONTRACT §2) to a local folder the loader reads. A local folder is
 * used in place (never written to: CI's copy of inputs is read-only). `s3://bucket/prefix` is
 * downloaded into the run's scratch folder first (s3-sources.ts), with per-object metadata
 * (S3 key, size, ETag, SHA-256 of the bytes read) returned for the manifest.
 */
import { stat } from 'node:fs/promises';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_SETTINGS, type S3Settings } from '../core/settings.js';

/** Per-object metadata from a remote source, keyed by path relative to the source root (`orders/part-1.csv`). */
export type RemoteObjectInfo = ReadonlyMap<string, { readonly size: number; readonly etag?: string; readonly key: string; readonly sha256?: string }>;

/** A source location ready to load. */
export interface LocatedSources {
  readonly root: string;
  readonly location: string;
  readonly remote?: RemoteObjectInfo;
}

/**
 * Returns the local folder for `location`, staging remote sources under `scratch` (created if
 * needed) with the endpoint, retries and concurrency of `s3`. Throws ConfigError (exit 2) if a
 * local folder does not exist or is not a folder (a deployment mistake, not quarantined input),
 * InputError (exit 3) if an `s3://` location cannot be read.
 */
export async function locateSources(location: string, scratch: string, s3: S3Settings = DEFAULT_SETTINGS.s3): Promise<LocatedSources> {
  if (!location.startsWith('s3://')) await checkLocalSources(location);
  if (location.startsWith('s3://')) {
    const { mkdir } = await import('node:fs/promises');
    const { stageS3Sources } = await import('./s3-sources.js');
    const { makeS3Client } = await import('../store/s3-client.js');
    await mkdir(scratch, { recursive: true });
    const staged = await stageS3Sources(location, scratch, { client: makeS3Client({}, s3.endpoint), retry: s3.retry, concurrency: s3.concurrency });
    return { root: scratch, location, remote: new Map(staged.map((o) => [o.relPath, { size: o.size, etag: o.etag, key: o.key, sha256: o.sha256 }])) };
  }
  return { root: location, location };
}

/** Throws ConfigError unless `location` is an existing local folder. */
export async function checkLocalSources(location: string): Promise<void> {
  try {
    if (!(await stat(location)).isDirectory()) throw new Error('not a directory');
  } catch (e) {
    throw new ConfigError(`--sources ${location} is not a readable folder (${(e as Error).message}); give the folder that holds one folder per dataset`);
  }
}
