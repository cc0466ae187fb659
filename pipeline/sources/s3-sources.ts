/**
 * S3 sources (CONTRACT §2): `--sources s3://bucket/prefix` holds one "folder" per dataset, as a
 * local source location does. The objects a run can read (`<dataset>/<name>` for the datasets of
 * §2, including `_watermark.json` and `_import_report.json`) are listed page by page, so any number
 * of objects is seen, and downloaded with bounded parallelism into the run's local scratch folder,
 * which the loader then reads like any local folder. DuckDB's httpfs is not used.
 *
 * Each download is streamed to disk with its SHA-256 computed on the way, checked against the
 * listed size, and pinned to the listed ETag (`If-Match`), so an object replaced while the run
 * reads it fails the run instead of mixing two versions. Throttling and dropped connections are
 * retried with full-jitter backoff; a retried download starts the file again.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { DATASETS } from '../contract/datasets.js';
import { ConfigError, InputError } from '../core/errors.js';
import { DEFAULT_SETTINGS } from '../core/settings.js';
import { describeS3Error, httpStatus, makeS3Client, parseS3Url, withRetries, type RetryPolicy } from '../store/s3-client.js';
import { listObjects } from '../store/s3-client.js';
import { controlsEscaped, strayAmong, type StrayEntry } from './files.js';

/** One staged source object: path relative to the source root, its S3 key, size, ETag and SHA-256 of the bytes read. */
export interface StagedObject {
  readonly relPath: string;
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly sha256: string;
  readonly localPath: string;
}

/** What staging an S3 source location gives: the objects staged, and the entries at its first level that are no dataset's folder (never staged). */
export interface StagedSources {
  readonly objects: StagedObject[];
  readonly stray: StrayEntry[];
}

/** Options for staging; defaults come from the environment (see s3-client.ts). */
export interface StageOptions {
  readonly client?: S3Client;
  readonly concurrency?: number;
  readonly retry?: RetryPolicy;
  /** Dataset folder names to stage (default: the datasets of CONTRACT §2). */
  readonly datasets?: readonly string[];
}

/** Names a run can read in a dataset folder: data files and the two `_` files; other `_` and `.` names are never read (§2). */
function readable(name: string): boolean {
  if (name === '_watermark.json' || name === '_import_report.json') return true;
  return !(name.startsWith('_') || name.startsWith('.'));
}

/** Relative paths that are safe as local file names under the staging root. */
function safeName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('\0') && !name.includes('\\') && Buffer.byteLength(name) <= 255;
}

/**
 * Lists `s3://bucket/prefix` and downloads every readable object of the known datasets into
 * `dest/<dataset>/<name>`. A dataset with any object (or only a folder marker) becomes a folder, so
 * a missing dataset stays missing. Returns the staged objects sorted by relative path, and the
 * first-level names that are no dataset of §2 (a typo'd folder: named by the run, never read). Throws
 * ConfigError (exit 2, as for a local `--sources` folder that does not exist) when the location
 * does not exist or cannot be listed with these credentials (no such bucket, HTTP 400/403/404,
 * no credentials), InputError (exit 3) when listing fails otherwise after its retries or an
 * object cannot be read intact.
 */
export async function stageS3Sources(location: string, dest: string, opts: StageOptions = {}): Promise<StagedSources> {
  const loc = parseS3Url(location);
  const client = opts.client ?? makeS3Client();
  const retry = opts.retry ?? DEFAULT_SETTINGS.s3.retry;
  const datasets = new Set(opts.datasets ?? DATASETS.map((d) => d.name));
  const root = loc.prefix === '' ? '' : `${loc.prefix}/`;
  const wanted: { relPath: string; key: string; size: number; etag: string }[] = [];
  const folders = new Set<string>();
  const others = new Map<string, StrayEntry['kind']>();
  try {
    for await (const o of listObjects(client, loc.bucket, root, retry)) {
      const parts = o.Key.slice(root.length).split('/');
      if (!datasets.has(parts[0])) {
        others.set(parts[0], parts.length > 1 || others.get(parts[0]) === 'folder' ? 'folder' : 'file');
        continue;
      }
      folders.add(parts[0]);
      if (parts.length !== 2 || !readable(parts[1]) || !safeName(parts[1])) continue;
      wanted.push({ relPath: `${parts[0]}/${parts[1]}`, key: o.Key, size: o.Size, etag: o.ETag });
    }
  } catch (e) {
    if (locationRefused(e)) throw new ConfigError(`the source location ${location} cannot be listed: ${describeS3Error(e)}; give an s3://bucket/prefix these credentials can list`);
    throw new InputError({ message: `the source location ${location} cannot be listed: ${describeS3Error(e)}` });
  }
  for (const f of folders) await mkdir(join(dest, f), { recursive: true });
  const limit = pLimit(opts.concurrency ?? DEFAULT_SETTINGS.s3.concurrency);
  const staged = await Promise.all(wanted.map((w) => limit(() => download(client, loc.bucket, w, join(dest, ...w.relPath.split('/')), retry))));
  const names = DATASETS.map((d) => d.name);
  const stray = strayAmong([...others].filter(([n]) => !names.includes(n)).map(([n, kind]) => ({ name: n === '' ? '(empty name)' : controlsEscaped(n), kind })), names);
  return { objects: staged.sort((a, b) => Buffer.compare(Buffer.from(a.relPath), Buffer.from(b.relPath))), stray };
}

async function download(
  client: S3Client, bucket: string, w: { relPath: string; key: string; size: number; etag: string }, localPath: string, retry: RetryPolicy,
): Promise<StagedObject> {
  const where = `s3://${bucket}/${w.key}`;
  try {
    return await withRetries(retry, async () => {
      const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: w.key, ...(w.etag ? { IfMatch: `"${w.etag}"` } : {}) }));
      const hash = createHash('sha256');
      let size = 0;
      const tap = new Transform({
        transform(chunk: Buffer, _enc, cb) { hash.update(chunk); size += chunk.length; cb(null, chunk); },
      });
      await pipeline(r.Body as NodeJS.ReadableStream, tap, createWriteStream(localPath, { flags: 'w' }));
      if (size !== w.size) {
        // A short read is a dropped transfer: worth another attempt (isRetryable honours $retryable).
        throw Object.assign(new Error(`${where}: read ${size} bytes where the listing said ${w.size}`), { $retryable: { throttling: false } });
      }
      return { relPath: w.relPath, key: w.key, size, etag: w.etag, sha256: hash.digest('hex'), localPath };
    });
  } catch (e) {
    if (httpStatus(e) === 412) throw new InputError({ message: `${where} changed while this run was reading it (its ETag is no longer ${w.etag}); run again on a stable extract` });
    throw new InputError({ message: `${where} cannot be read: ${describeS3Error(e)}` });
  }
}

/** The location itself is wrong or closed to these credentials (not a passing failure). */
function locationRefused(e: unknown): boolean {
  const name = (e as { name?: string } | null)?.name ?? '';
  const status = httpStatus(e);
  return status === 400 || status === 403 || status === 404
    || ['NoSuchBucket', 'AccessDenied', 'InvalidBucketName', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'CredentialsProviderError'].includes(name);
}
