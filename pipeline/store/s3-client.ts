/**
 * What the S3 source reader and the S3 store share: `s3://bucket/prefix` parsing, one way to build
 * an S3 client, and retries with full-jitter backoff.
 *
 * The client takes its credentials from the AWS SDK's default provider chain (environment, shared
 * files, SSO, web identity, container and instance metadata) and honours the SDK's own
 * environment settings (AWS_REGION, AWS_PROFILE, AWS_MAX_ATTEMPTS, AWS_RETRY_MODE, …). When the
 * settings name an S3-compatible endpoint (`AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`,
 * core/settings.ts), requests use path-style addressing, and checksums are sent only where an
 * operation requires them unless `AWS_REQUEST_CHECKSUM_CALCULATION` says otherwise:
 * S3-compatible servers (s3rver, older MinIO) store SDK-computed streaming checksums with their
 * aws-chunked framing.
 */
import { ListObjectsV2Command, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { fullJitterDelay } from '../core/backoff.js';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_SETTINGS, type RetryPolicy, type S3Endpoint } from '../core/settings.js';

export type { RetryPolicy } from '../core/settings.js';

/** A parsed `s3://bucket/prefix` location. `prefix` has no leading or trailing `/` and may be empty. */
export interface S3Location {
  readonly bucket: string;
  readonly prefix: string;
}

/**
 * Parses `s3://bucket[/prefix]`. Throws ConfigError (exit 2) for anything else: a bucket name that
 * S3 would refuse (3–63 characters of `a-z0-9.-`), an empty path segment, or `.`/`..` segments.
 */
export function parseS3Url(url: string): S3Location {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  if (!m) throw new ConfigError(`'${url}' is not an s3://bucket/prefix location`);
  const bucket = m[1];
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new ConfigError(`'${bucket}' in ${url} is not a valid S3 bucket name (3–63 characters of a-z, 0-9, '.' and '-')`);
  const prefix = (m[2] ?? '').replace(/\/+$/, '');
  if (prefix !== '' && prefix.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw new ConfigError(`the prefix of ${url} has an empty, '.' or '..' segment`);
  }
  return { bucket, prefix };
}

/** Joins a location's prefix and a relative key: `prefix/key`, or `key` when the prefix is empty. */
export function s3Key(loc: S3Location, rel: string): string {
  return loc.prefix === '' ? rel : rel === '' ? loc.prefix : `${loc.prefix}/${rel}`;
}

/**
 * Builds the S3 client: default credential chain, SDK environment settings, and for a custom
 * `endpoint` (settings.s3.endpoint) path-style addressing and "when required" checksums unless the
 * SDK's own checksum variables are set. `overrides` win (tests add middleware to the returned
 * client rather than replacing its transport).
 */
export function makeS3Client(overrides: S3ClientConfig = {}, endpoint: S3Endpoint = DEFAULT_SETTINGS.s3.endpoint): S3Client {
  const config: S3ClientConfig = {};
  if (endpoint.url) {
    config.endpoint = endpoint.url;
    config.forcePathStyle = true;
    if (!endpoint.requestChecksumSet) config.requestChecksumCalculation = 'WHEN_REQUIRED';
    if (!endpoint.responseChecksumSet) config.responseChecksumValidation = 'WHEN_REQUIRED';
  }
  return new S3Client({ ...config, ...overrides });
}

/** HTTP status of an SDK error, when it has one. */
export function httpStatus(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

const THROTTLING = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'ThrottledException', 'RequestThrottled', 'RequestLimitExceeded', 'TooManyRequestsException', 'RequestThrottledException']);
const TRANSIENT = new Set(['RequestTimeout', 'RequestTimeoutException', 'InternalError', 'ServiceUnavailable', 'ConditionalRequestConflict', 'OperationAborted']);
const NETWORK = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'ERR_STREAM_PREMATURE_CLOSE', 'UND_ERR_SOCKET']);

/**
 * True for failures worth another attempt: throttling (503 SlowDown, 429), 500/502/503/504, 409
 * ConditionalRequestConflict (a concurrent conditional write was in flight) and dropped
 * connections. A 412 or 404 is an answer, never retried.
 */
export function isRetryable(e: unknown): boolean {
  const err = e as { name?: string; code?: string; $retryable?: unknown } | null;
  if (!err) return false;
  const status = httpStatus(e);
  if (status === 412 || status === 404 || status === 403 || status === 400) return false;
  if (err.name && (THROTTLING.has(err.name) || TRANSIENT.has(err.name))) return true;
  if (err.code && NETWORK.has(err.code)) return true;
  if (err.name === 'TimeoutError' || err.$retryable) return true;
  return status === 409 || status === 429 || (status !== undefined && status >= 500);
}

export { fullJitterDelay } from '../core/backoff.js';

/**
 * Runs `fn` until it succeeds, a failure is not retryable, or the attempts are spent; waits a
 * full-jitter delay between attempts. `fn` receives the attempt number (1-based). Rethrows the last
 * error. The SDK's own retries (AWS_MAX_ATTEMPTS) happen inside each attempt.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  fn: (attempt: number) => Promise<T>,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (e) {
      if (attempt >= policy.attempts || !isRetryable(e)) throw e;
      await sleep(fullJitterDelay(policy, attempt));
    }
  }
}

/** A one-line description of an SDK error for messages: name, HTTP status and message. */
export function describeS3Error(e: unknown): string {
  const err = e as { name?: string; message?: string } | null;
  const status = httpStatus(e);
  return `${err?.name ?? 'Error'}${status ? ` (HTTP ${status})` : ''}: ${err?.message ?? String(e)}`;
}

/** One listed object: key, size in bytes and ETag (quotes removed). */
export interface ListedObject { readonly Key: string; readonly Size: number; readonly ETag: string }

/** Lists every object under `prefix` with its size and ETag, following continuation tokens. */
export async function* listObjects(client: S3Client, bucket: string, prefix: string, retry: RetryPolicy): AsyncGenerator<ListedObject> {
  let token: string | undefined;
  do {
    const page = await withRetries(retry, () => client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix || undefined, ContinuationToken: token })));
    for (const o of page.Contents ?? []) {
      if (o.Key === undefined) continue;
      yield { Key: o.Key, Size: Number(o.Size ?? 0), ETag: unquote(o.ETag ?? '') };
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
    if (page.IsTruncated && !token) throw new Error(`listing s3://${bucket}/${prefix} was truncated without a continuation token`);
  } while (token);
}

/** Removes the quotes S3 puts around ETags. */
export function unquote(etag: string): string {
  return etag.replace(/^"(.*)"$/, '$1');
}
