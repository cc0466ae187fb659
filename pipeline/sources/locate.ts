/**
 * Resolves a source location (CONTRACT §2) to a local folder the loader reads. A local folder is
 * used in place (never written to: CI's copy of inputs is read-only). `s3://bucket/prefix` is
 * downloaded into the run's scratch folder first (s3-sources.ts), with per-object metadata
 * (S3 key, size, ETag, SHA-256 of the bytes read) returned for the manifest.
 */
import { stat } from 'node:fs/promises';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_SETTINGS, type S3Settings } from '../core/settings.js';
import type { WrittenFile } from './csv-fast.js';
import type { DatabaseExtract } from './postgres/extract.js';
import type { StrayEntry } from './files.js';


/** Per-object metadata from a remote source, keyed by path relative to the source root (`orders/part-1.csv`). */
export type RemoteObjectInfo = ReadonlyMap<string, { readonly size: number; readonly etag?: string; readonly key: string; readonly sha256?: string }>;

/**
 * Where each dataset's folder lies: one root holding every dataset folder (a `--sources` location),
 * or a root per dataset (a sources file mixing databases, folders and S3: sources/source-plan.ts).
 */
export type DatasetRoots = string | ReadonlyMap<string, string>;

/** The root folder that holds `dataset`'s folder. Throws on a dataset the map does not place (a programming error). */
export function datasetRoot(roots: DatasetRoots, dataset: string): string {
  if (typeof roots === 'string') return roots;
  const root = roots.get(dataset);
  if (root === undefined) throw new Error(`no root folder for dataset ${dataset}`);
  return root;
}

/** A source location ready to load. */
export interface LocatedSources {
  readonly root: DatasetRoots;
  readonly location: string;
  readonly remote?: RemoteObjectInfo;
  /** Entries at the first level of each `s3://` location that are no dataset's folder (never staged), by location. */
  readonly strayRemote?: ReadonlyMap<string, readonly StrayEntry[]>;
  /** Set for a sources file: where each dataset came from, the database extracts, whole-dataset faults. */
  readonly plan?: PlannedSources;
  /**
   * Set when datasets are still being extracted from databases while the run loads: resolves
   * once `dataset`'s files are written (at once for the others); rejects with the extract's error.
   */
  readonly ready?: (dataset: string) => Promise<void>;
  /** Resolves when every extract has committed and `plan.databases` is complete; rejects with the extract's error. */
  readonly settled?: Promise<void>;
  /** Files the run wrote (database extracts) by real path, with their digest, size and CSV shape. */
  readonly written?: ReadonlyMap<string, WrittenFile>;
  /** The planner's size of each database dataset's extract (bytes), for sizing the engine before it is written. */
  readonly estimatedBytes?: ReadonlyMap<string, number>;
}

/** Where a dataset of a sources file came from (recorded per dataset in the manifest). */
export type DatasetOrigin =
  | { readonly kind: 'database'; readonly database: string }
  | { readonly kind: 'folder' | 's3'; readonly location: string }
  | { readonly kind: 'absent' };

/** A whole-dataset quarantine entry the loader adds (a refused column, a bad watermark query): `file` names the source. */
export interface DatasetFault {
  readonly file: string;
  readonly column: string | null;
  readonly rule: string;
  readonly message: string;
}

/** What a sources file run located, beyond the folders: for the loader, the labels and the manifest. */
export interface PlannedSources {
  readonly file: { readonly path: string; readonly sha256: string };
  readonly origins: ReadonlyMap<string, DatasetOrigin>;
  /** Each database's extract, complete once `settled` resolves. */
  readonly databases: readonly DatabaseExtract[];
  /** Whole-dataset faults, each set before its dataset is `ready`. */
  readonly faults: ReadonlyMap<string, readonly DatasetFault[]>;
}

/**
 * Returns the local folder for `location`, staging remote sources under `scratch` (created if
 * needed) with the endpoint, retries and concurrency of `s3`, only the folders of `datasets`
 * when given. Throws ConfigError (exit 2) if a local folder does not exist or is not a folder (a
 * deployment mistake, not quarantined input), InputError (exit 3) if an `s3://` location cannot be read.
 */
export async function locateSources(location: string, scratch: string, s3: S3Settings = DEFAULT_SETTINGS.s3, datasets?: readonly string[]): Promise<LocatedSources> {
  if (!location.startsWith('s3://')) await checkLocalSources(location);
  if (location.startsWith('s3://')) {
    const { mkdir } = await import('node:fs/promises');
    const { stageS3Sources } = await import('./s3-sources.js');
    const { makeS3Client } = await import('../store/s3-client.js');
    await mkdir(scratch, { recursive: true });
    const { objects, stray } = await stageS3Sources(location, scratch, { client: makeS3Client({}, s3.endpoint), retry: s3.retry, concurrency: s3.concurrency, datasets });
    const remote: RemoteObjectInfo = new Map(objects.map((o) => [o.relPath, { size: o.size, etag: o.etag, key: o.key, sha256: o.sha256 }]));
    return { root: scratch, location, remote, strayRemote: new Map([[location, stray]]) };
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
