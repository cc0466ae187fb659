/**
 * The write-once store on S3 (CONTRACT §6): `--store s3://bucket/prefix`. Every publication is a
 * conditional write (`If-None-Match: *`): S3 answers 412 Precondition Failed when the key exists,
 * and that becomes AlreadyExistsError; nothing published is ever overwritten or deleted. Files
 * above the multipart threshold go up in parts and the completion is conditional in the same way.
 * Only keys whose first segment starts with `_` (locks, staging) can be deleted.
 *
 * When Object Lock is configured (`RECKON_S3_OBJECT_LOCK_DAYS`, core/settings.ts), objects under the locked prefixes
 * (manifests and evidence by default) are written in COMPLIANCE mode with a retain-until date; the
 * bucket must have Object Lock enabled. Every single-request write carries an
 * `x-amz-checksum-sha256` header, which S3 checks against the bytes it receives (and which Object
 * Lock writes require). Throttling and transient failures are retried with full-jitter backoff.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand,
  GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, UploadPartCommand,
  type CompletedPart, type S3Client,
} from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { ConfigError, StoreError } from '../core/errors.js';
import { DEFAULT_SETTINGS, type ObjectLockPolicy, type S3Settings } from '../core/settings.js';
import { AlreadyExistsError, type ObjectStore } from './object-store.js';
import {
  describeS3Error, httpStatus, listObjects, makeS3Client, parseS3Url, s3Key, unquote, withRetries,
  type RetryPolicy, type S3Location,
} from './s3-client.js';

export type { ObjectLockPolicy } from '../core/settings.js';

const MIB = 1024 * 1024;

/** Options of the S3 store; every field has a default (the settings of an empty environment). */
export interface S3StoreOptions {
  readonly client?: S3Client;
  readonly retry?: RetryPolicy;
  /** Parallel part uploads (default 8; `RECKON_S3_CONCURRENCY` through the settings). */
  readonly concurrency?: number;
  /** Part size in bytes for multipart uploads, ≥ 5 MiB (default 8 MiB). Files larger than this go up in parts. */
  readonly partSizeBytes?: number;
  readonly objectLock?: ObjectLockPolicy | null;
  /** Local scratch directory (default under the OS temp folder). */
  readonly scratchDir?: string;
  /** Clock for retain-until dates (tests). */
  readonly now?: () => Date;
}

/** Write-once ObjectStore on S3 or an S3-compatible server. Keys are `/`-separated and relative to the prefix. */
export class S3ObjectStore implements ObjectStore {
  readonly location: string;
  readonly scratchDir: string;
  readonly client: S3Client;
  private readonly loc: S3Location;
  private readonly retry: RetryPolicy;
  private readonly concurrency: number;
  private readonly partSize: number;
  private readonly lock: ObjectLockPolicy | null;
  private readonly now: () => Date;

  constructor(location: string, opts: S3StoreOptions = {}) {
    this.loc = parseS3Url(location);
    this.location = `s3://${this.loc.bucket}${this.loc.prefix ? `/${this.loc.prefix}` : ''}`;
    this.client = opts.client ?? makeS3Client();
    this.retry = opts.retry ?? DEFAULT_SETTINGS.s3.retry;
    this.concurrency = opts.concurrency ?? DEFAULT_SETTINGS.s3.concurrency;
    this.partSize = opts.partSizeBytes ?? 8 * MIB;
    if (this.partSize < 5 * MIB) throw new ConfigError('the multipart part size must be at least 5 MiB (an S3 rule)');
    this.lock = opts.objectLock ?? null;
    this.now = opts.now ?? (() => new Date());
    this.scratchDir = opts.scratchDir ?? join(tmpdir(), 'reckon-s3-scratch', `${this.loc.bucket}${this.loc.prefix ? `-${this.loc.prefix.replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`);
  }

  /** The object key for a store key; refuses empty, `.` and `..` segments. */
  private full(key: string): string {
    if (key.split('/').some((p) => p === '' || p === '.' || p === '..')) throw new Error(`bad store key ${key}`);
    return s3Key(this.loc, key);
  }

  private url(key: string): string {
    return `s3://${this.loc.bucket}/${this.full(key)}`;
  }

  /** Object Lock parameters for `key`, when the policy covers it. */
  private lockParams(key: string): { ObjectLockMode: 'COMPLIANCE'; ObjectLockRetainUntilDate: Date } | undefined {
    if (!this.lock || !this.lock.prefixes.some((p) => key.startsWith(p))) return undefined;
    return { ObjectLockMode: this.lock.mode, ObjectLockRetainUntilDate: new Date(this.now().getTime() + this.lock.retainDays * 86_400_000) };
  }

  private alreadyExists(key: string): AlreadyExistsError {
    return new AlreadyExistsError(key, `${this.url(key)} exists: S3 answered 412 Precondition Failed to a write with If-None-Match: *`);
  }

  /**
   * A 412 after a retried request may be our own earlier write that landed while its answer was
   * lost. The write counts as done only when the object holds exactly our bytes.
   */
  private async isOurs(key: string, sha256Hex: string): Promise<boolean> {
    const h = await this.hashObject(key);
    return h === sha256Hex;
  }

  private async hashObject(key: string): Promise<string | undefined> {
    return withRetries(this.retry, async () => {
      try {
        const r = await this.client.send(new GetObjectCommand({ Bucket: this.loc.bucket, Key: this.full(key) }));
        const h = createHash('sha256');
        for await (const chunk of r.Body as AsyncIterable<Uint8Array>) h.update(chunk);
        return h.digest('hex');
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    });
  }

  /** Writes `key` once with If-None-Match: *; throws AlreadyExistsError when it exists. */
  async putOnce(key: string, body: Uint8Array | string): Promise<void> {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    const full = this.full(key);
    const digest = createHash('sha256').update(bytes).digest();
    const shaHex = digest.toString('hex');
    const checksum = digest.toString('base64');
    const lock = this.lockParams(key);
    let retried = false;
    try {
      await withRetries(this.retry, async (attempt) => {
        retried = attempt > 1;
        await this.client.send(new PutObjectCommand({
          Bucket: this.loc.bucket, Key: full, Body: bytes, ContentLength: bytes.length, ContentType: contentType(key),
          IfNoneMatch: '*', ChecksumSHA256: checksum, ...lock,
        }));
      });
    } catch (e) {
      if (isPreconditionFailed(e)) {
        if ((retried || sdkAttempts(e) > 1) && (await this.isOurs(key, shaHex))) return;
        throw this.alreadyExists(key);
      }
      throw s3WriteError(e, this.url(key), `writing ${this.url(key)} failed: ${describeS3Error(e)}`);
    }
  }

  /** Publishes a local file under `key` once: one conditional PUT, or a multipart upload with a conditional completion. */
  async putFileOnce(key: string, localPath: string): Promise<void> {
    const { size } = await stat(localPath);
    if (size <= this.partSize) return this.putOnce(key, await readFile(localPath));
    const full = this.full(key);
    // A cheap early refusal; the conditional completion below is what guarantees write-once.
    if (await this.exists(full)) throw this.alreadyExists(key);
    const lock = this.lockParams(key);
    const created = await withRetries(this.retry, () => this.client.send(new CreateMultipartUploadCommand({
      Bucket: this.loc.bucket, Key: full, ContentType: contentType(key), ...(lock ? { ...lock, ChecksumAlgorithm: 'SHA256' as const } : {}),
    })));
    const uploadId = created.UploadId!;
    let retried = false;
    try {
      const count = Math.ceil(size / this.partSize);
      const limit = pLimit(this.concurrency);
      const parts: CompletedPart[] = await Promise.all(Array.from({ length: count }, (_, i) => limit(async () => {
        const offset = i * this.partSize;
        const buf = await readRange(localPath, offset, Math.min(this.partSize, size - offset));
        const checksum = lock ? createHash('sha256').update(buf).digest('base64') : undefined;
        const r = await withRetries(this.retry, () => this.client.send(new UploadPartCommand({
          Bucket: this.loc.bucket, Key: full, UploadId: uploadId, PartNumber: i + 1, Body: buf, ContentLength: buf.length,
          ...(checksum ? { ChecksumSHA256: checksum } : {}),
        })));
        return { PartNumber: i + 1, ETag: r.ETag, ...(checksum ? { ChecksumSHA256: checksum } : {}) };
      })));
      await withRetries(this.retry, async (attempt) => {
        retried = attempt > 1;
        await this.client.send(new CompleteMultipartUploadCommand({
          Bucket: this.loc.bucket, Key: full, UploadId: uploadId, MultipartUpload: { Parts: parts }, IfNoneMatch: '*',
        }));
      });
    } catch (e) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.loc.bucket, Key: full, UploadId: uploadId })).catch(() => undefined);
      if (isPreconditionFailed(e) || (retried && httpStatus(e) === 404)) {
        if ((retried || sdkAttempts(e) > 1) && (await this.isOurs(key, (await hashLocal(localPath))))) return;
        if (isPreconditionFailed(e)) throw this.alreadyExists(key);
      }
      throw s3WriteError(e, this.url(key), `uploading ${localPath} to ${this.url(key)} failed: ${describeS3Error(e)}`);
    }
  }

  private async exists(fullKey: string): Promise<boolean> {
    return withRetries(this.retry, async () => {
      try {
        await this.client.send(new HeadObjectCommand({ Bucket: this.loc.bucket, Key: fullKey }));
        return true;
      } catch (e) {
        if (isNotFound(e)) return false;
        throw e;
      }
    });
  }

  /** Reads `key`, or undefined when it does not exist. */
  async get(key: string): Promise<Buffer | undefined> {
    const full = this.full(key);
    try {
      return await withRetries(this.retry, async () => {
        try {
          const r = await this.client.send(new GetObjectCommand({ Bucket: this.loc.bucket, Key: full }));
          return Buffer.from(await r.Body!.transformToByteArray());
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      });
    } catch (e) {
      throw new StoreError(`the store object ${this.url(key)} cannot be read: ${describeS3Error(e)}`, { path: this.url(key), reason: 'read_failed', cause: e });
    }
  }

  /**
   * Lists the keys under `prefix` (a folder, or one key), relative to the store, sorted like the
   * local store. Follows continuation tokens, so any number of objects is listed.
   */
  async list(prefix: string): Promise<string[]> {
    const base = prefix.replace(/\/+$/, '');
    if (base !== '') this.full(base);
    const root = this.loc.prefix === '' ? '' : `${this.loc.prefix}/`;
    const listPrefix = base === '' ? root : `${root}${base}`;
    const out: string[] = [];
    try {
      for await (const key of listKeys(this.client, this.loc.bucket, listPrefix, this.retry)) {
        if (key.endsWith('/')) continue;
        const rel = key.slice(root.length);
        if (base === '' || rel === base || rel.startsWith(`${base}/`)) out.push(rel);
      }
    } catch (e) {
      // Never an empty listing: a run that took it for one would start a second chain or take a held lease.
      const where = `s3://${this.loc.bucket}/${listPrefix}`;
      throw new StoreError(`the store prefix ${where} cannot be listed: ${describeS3Error(e)}; a listing that fails is never taken for an empty one`, { path: where, reason: 'list_failed', cause: e });
    }
    return out.sort();
  }

  /** Deletes a lock or staging key (first segment starting with `_`); published keys are refused. */
  async deleteScratch(key: string): Promise<void> {
    if (!key.split('/')[0].startsWith('_')) throw new Error(`refusing to delete ${key}: only lock and staging keys (\`_…\`) are ever deleted`);
    const full = this.full(key);
    await withRetries(this.retry, async () => {
      try {
        await this.client.send(new DeleteObjectCommand({ Bucket: this.loc.bucket, Key: full }));
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    });
  }
}

/** Lists every object key under `prefix` (full keys), page by page, each page retried. */
export async function* listKeys(client: S3Client, bucket: string, prefix: string, retry: RetryPolicy): AsyncGenerator<string> {
  for await (const o of listObjects(client, bucket, prefix, retry)) yield o.Key;
}

/**
 * Opens the store at `s3://bucket/prefix` and checks that the bucket can be listed. Throws
 * ConfigError (exit 2) when the location is malformed, the bucket does not exist, or access is
 * denied or has no credentials.
 */
export async function openS3Store(location: string, opts: S3StoreOptions = {}): Promise<S3ObjectStore> {
  const store = new S3ObjectStore(location, opts);
  const loc = parseS3Url(location);
  try {
    await withRetries(opts.retry ?? DEFAULT_SETTINGS.s3.retry, () => store.client.send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: loc.prefix ? `${loc.prefix}/` : undefined, MaxKeys: 1 })));
  } catch (e) {
    throw new ConfigError(`the store ${store.location} cannot be listed: ${describeS3Error(e)}`);
  }
  await mkdir(store.scratchDir, { recursive: true });
  return store;
}

/** The store options of S3 settings (core/settings.ts): client for its endpoint, retries, concurrency, Object Lock. */
export function s3StoreOptions(s3: S3Settings): S3StoreOptions {
  return { client: makeS3Client({}, s3.endpoint), retry: s3.retry, concurrency: s3.concurrency, objectLock: s3.objectLock };
}

/** A failed write as StoreError (exit 2): refused by the bucket's policy or credentials (403), or failed otherwise. */
function s3WriteError(e: unknown, url: string, message: string): StoreError {
  const status = httpStatus(e);
  const reason = status === 403 || (e as { name?: string } | null)?.name === 'AccessDenied' ? 'not_permitted' : 'write_failed';
  return new StoreError(reason === 'not_permitted' ? `the store refuses this write (access denied): ${message}` : message, { path: url, reason, cause: e });
}

function isPreconditionFailed(e: unknown): boolean {
  return httpStatus(e) === 412 || (e as { name?: string } | null)?.name === 'PreconditionFailed';
}

function isNotFound(e: unknown): boolean {
  const name = (e as { name?: string } | null)?.name;
  return httpStatus(e) === 404 || name === 'NoSuchKey' || name === 'NotFound';
}

function sdkAttempts(e: unknown): number {
  return (e as { $metadata?: { attempts?: number } } | null)?.$metadata?.attempts ?? 1;
}

function contentType(key: string): string {
  if (key.endsWith('.json')) return 'application/json';
  if (key.endsWith('.parquet')) return 'application/vnd.apache.parquet';
  if (key.endsWith('.sha256') || key.endsWith('.txt')) return 'text/plain; charset=utf-8';
  return 'application/octet-stream';
}

async function readRange(path: string, offset: number, length: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
      if (bytesRead === 0) throw new Error(`${path} ended before byte ${offset + length}: it changed during upload`);
      done += bytesRead;
    }
    return buf;
  } finally {
    await fh.close();
  }
}

async function hashLocal(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}
