/**
 * The S3 store and S3 sources against a real s3rver on loopback (started and stopped here):
 * paginated listing past 1,000 objects, staged downloads with SHA-256, a multipart object over
 * 5 MiB, write-once publication, Object Lock headers, deletion limits and throttling retries.
 * s3rver ignores If-None-Match, so the 412 path uses `conditionalWriteShim`, a double at the SDK
 * boundary that answers as S3 does; throttling is injected the same way.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlreadyExistsError } from '../pipeline/store/object-store.js';
import { StoreError } from '../pipeline/core/errors.js';
import { exitCodeOf } from '../pipeline/core/outcome.js';
import { fullJitterDelay, isRetryable, parseS3Url } from '../pipeline/store/s3-client.js';
import { openS3Store, S3ObjectStore } from '../pipeline/store/s3-store.js';
import { stageS3Sources } from '../pipeline/sources/s3-sources.js';
import { scratchDir } from './helpers/cli.js';
import { conditionalWriteShim, startS3rver, type S3rverHandle } from './helpers/s3rver.js';

const FAST = { attempts: 4, baseMs: 1, capMs: 5 };
let s3: S3rverHandle;
let client: S3Client;

beforeAll(async () => {
  s3 = await startS3rver(['reckon-store', 'reckon-src']);
  client = s3.client();
});
afterAll(async () => { await s3?.stop(); });

const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

describe('S3 locations', () => {
  it('parses bucket and prefix and refuses malformed ones', () => {
    expect(parseS3Url('s3://reckon-store')).toEqual({ bucket: 'reckon-store', prefix: '' });
    expect(parseS3Url('s3://reckon-store/a/b/')).toEqual({ bucket: 'reckon-store', prefix: 'a/b' });
    expect(() => parseS3Url('s3://ab/x')).toThrow(/bucket name/);
    expect(() => parseS3Url('s3://reckon-store/a//b')).toThrow(/empty/);
    expect(() => parseS3Url('s3://reckon-store/a/../b')).toThrow(/'\.\.'/);
  });
});

describe('listing and staging past 1,000 objects', () => {
  // S3 lists at most 1,000 keys a page: 1,100 objects take two pages (counted below), which is
  // all the paging needs; each object costs a PUT and a GET on s3rver, so no more than that.
  const N = 1100;
  it(`lists and stages ${N.toLocaleString('en-US')} objects over two listing pages, each with its size, ETag and SHA-256`, async () => {
    const limit = pLimit(32);
    const bodies = new Map<string, string>();
    for (let i = 0; i < N; i++) bodies.set(`orders/part-${String(i).padStart(4, '0')}.csv`, `order_id\nORD-${i}\n`);
    await Promise.all([...bodies].map(([rel, body]) => limit(() => client.send(new PutObjectCommand({ Bucket: 'reckon-src', Key: `many/${rel}`, Body: body })))));

    const listing = s3.client();
    let pages = 0;
    listing.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'ListObjectsV2Command') pages += 1;
      return next(args);
    }, { step: 'initialize', name: 'countListPages' });
    const store = new S3ObjectStore('s3://reckon-src/many', { client: listing, retry: FAST });
    const keys = await store.list('orders');
    expect(keys.length).toBe(N);
    expect(keys).toEqual([...bodies.keys()].sort());
    expect(pages).toBe(2);

    const { dir, cleanup } = scratchDir();
    try {
      pages = 0;
      const { objects: staged } = await stageS3Sources('s3://reckon-src/many', dir, { client: listing, retry: FAST, concurrency: 16 });
      expect(pages).toBeGreaterThanOrEqual(2);
      expect(staged.length).toBe(N);
      for (const o of staged) {
        const body = bodies.get(o.relPath)!;
        expect(o.sha256).toBe(sha256(body));
        expect(o.size).toBe(Buffer.byteLength(body));
        expect(o.etag).toBe(createHash('md5').update(body).digest('hex'));
        expect(o.key).toBe(`many/${o.relPath}`);
        expect(readFileSync(join(dir, ...o.relPath.split('/')), 'utf8')).toBe(body);
      }
    } finally { cleanup(); }
  });

  it('stages only what a run may read: dataset files, _watermark.json, _import_report.json', async () => {
    const put = (Key: string, Body: string) => client.send(new PutObjectCommand({ Bucket: 'reckon-src', Key, Body }));
    await put('few/orders/a.csv', 'x\n');
    await put('few/orders/_watermark.json', '{"watermark": "2026-11-03T00:00:00Z"}');
    await put('few/orders/_import_report.json', '{}');
    await put('few/orders/_other.csv', 'x\n');
    await put('few/orders/.hidden', 'x\n');
    await put('few/orders/deeper/b.csv', 'x\n');
    await put('few/not_a_dataset/c.csv', 'x\n');
    await put('few/venue_fills/', '');
    await put('few/notification_exception/d.csv', 'x\n');
    await put('few/README.csv', 'x\n');
    await put('few/_exporter_state/e.json', '{}');
    const { dir, cleanup } = scratchDir();
    try {
      const { objects: staged, stray } = await stageS3Sources('s3://reckon-src/few', dir, { client, retry: FAST, datasets: ['orders', 'venue_fills'] });
      expect(staged.map((o) => o.relPath)).toEqual(['orders/_import_report.json', 'orders/_watermark.json', 'orders/a.csv']);
      // The first-level names that are no dataset of §2 (datasets not asked for are not stray).
      expect(stray).toEqual([
        { name: 'README.csv', kind: 'file', nearest: null },
        { name: 'not_a_dataset', kind: 'folder', nearest: null },
        { name: 'notification_exception', kind: 'folder', nearest: 'notification_exceptions' },
      ]);
      expect(readFileSync(join(dir, 'orders', '_watermark.json'), 'utf8')).toContain('2026-11-03');
    } finally { cleanup(); }
  });

  it('reports an unlistable source location as unreadable input', async () => {
    const { dir, cleanup } = scratchDir();
    try {
      await expect(stageS3Sources('s3://no-such-bucket/x', dir, { client, retry: FAST })).rejects.toThrow(/cannot be listed: NoSuchBucket/);
    } finally { cleanup(); }
  });
});

describe('write-once publication', () => {
  it('writes, reads and lists keys relative to the store prefix', async () => {
    const store = await openS3Store('s3://reckon-store/basic', { client, retry: FAST });
    await store.putOnce('manifests/00000001-run-a.json', '{"a":1}');
    await store.putOnce('manifests/00000001-run-a.sha256', 'x');
    await store.putOnce('breaks/b1/events/000001.json', '{}');
    expect((await store.get('manifests/00000001-run-a.json'))!.toString()).toBe('{"a":1}');
    expect(await store.get('manifests/absent.json')).toBeUndefined();
    expect(await store.list('manifests')).toEqual(['manifests/00000001-run-a.json', 'manifests/00000001-run-a.sha256']);
    expect(await store.list('manifests/00000001-run-a.json')).toEqual(['manifests/00000001-run-a.json']);
    expect(await store.list('breaks/b')).toEqual([]);
    expect(await store.list('nothing-here')).toEqual([]);
    expect(await store.list('')).toEqual(['breaks/b1/events/000001.json', 'manifests/00000001-run-a.json', 'manifests/00000001-run-a.sha256']);
  });

  it('a second write of a key gets S3 412 and AlreadyExistsError, and the object is unchanged', async () => {
    const shimmed = s3.client();
    const shim = conditionalWriteShim(shimmed, client);
    const store = new S3ObjectStore('s3://reckon-store/once', { client: shimmed, retry: FAST });
    await store.putOnce('manifests/00000001-run-b.json', 'first');
    const err = await store.putOnce('manifests/00000001-run-b.json', 'second').catch((e) => e);
    expect(err).toBeInstanceOf(AlreadyExistsError);
    expect(err.message).toBe('manifests/00000001-run-b.json already exists and is never overwritten (s3://reckon-store/once/manifests/00000001-run-b.json exists: S3 answered 412 Precondition Failed to a write with If-None-Match: *)');
    expect(shim.answered412).toBe(1);
    expect((await store.get('manifests/00000001-run-b.json'))!.toString()).toBe('first');
  });

  it('a retried write whose first attempt landed is not a conflict when the object holds our bytes', async () => {
    const shimmed = s3.client({ maxAttempts: 1 });
    conditionalWriteShim(shimmed, client);
    let calls = 0;
    // The first PUT reaches s3rver, then its answer is "lost" (a 503), as on a dropped connection.
    shimmed.middlewareStack.add((next, context) => async (args) => {
      const first = context.commandName === 'PutObjectCommand' && ++calls === 1;
      const out = await next(args);
      if (first) throw Object.assign(new Error('SlowDown'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } });
      return out;
    }, { step: 'finalizeRequest', name: 'loseFirstAnswer' });
    const store = new S3ObjectStore('s3://reckon-store/idem', { client: shimmed, retry: FAST });
    await store.putOnce('breaks/b/events/000001.json', 'mine');
    expect(calls).toBe(2);
    await expect(store.putOnce('breaks/b/events/000001.json', 'theirs')).rejects.toBeInstanceOf(AlreadyExistsError);
  });

  it('uploads a file over 5 MiB in parts; the conditional completion refuses a key another writer took meanwhile', async () => {
    const { dir, cleanup } = scratchDir();
    try {
      const file = join(dir, 'big.parquet');
      const bytes = randomBytes(6 * 1024 * 1024 + 123);
      writeFileSync(file, bytes);
      const shimmed = s3.client();
      conditionalWriteShim(shimmed, client);
      let parts = 0;
      shimmed.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName === 'UploadPartCommand') parts += 1;
        return next(args);
      }, { step: 'initialize', name: 'countParts' });
      const store = new S3ObjectStore('s3://reckon-store/multi', { client: shimmed, retry: FAST, partSizeBytes: 5 * 1024 * 1024 });
      await store.putFileOnce('outputs/t/window_date=2026-11-02/run=r1/part-00000.parquet', file);
      expect(parts).toBe(2);
      const head = await client.send(new HeadObjectCommand({ Bucket: 'reckon-store', Key: 'multi/outputs/t/window_date=2026-11-02/run=r1/part-00000.parquet' }));
      expect(head.ContentLength).toBe(bytes.length);
      expect(sha256((await store.get('outputs/t/window_date=2026-11-02/run=r1/part-00000.parquet'))!)).toBe(sha256(bytes));

      // Again, under a key that exists: refused before any part is sent.
      parts = 0;
      await expect(store.putFileOnce('outputs/t/window_date=2026-11-02/run=r1/part-00000.parquet', file)).rejects.toBeInstanceOf(AlreadyExistsError);
      expect(parts).toBe(0);

      // A competing writer lands while the parts go up: the completion gets 412.
      const racing = s3.client();
      const shim = conditionalWriteShim(racing, client);
      racing.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName === 'UploadPartCommand' && (args.input as { PartNumber: number }).PartNumber === 1) {
          await client.send(new PutObjectCommand({ Bucket: 'reckon-store', Key: 'multi/outputs/t/race.parquet', Body: 'competitor' }));
        }
        return next(args);
      }, { step: 'initialize', name: 'competitor' });
      const racer = new S3ObjectStore('s3://reckon-store/multi', { client: racing, retry: FAST, partSizeBytes: 5 * 1024 * 1024 });
      await expect(racer.putFileOnce('outputs/t/race.parquet', file)).rejects.toThrow(/412 Precondition Failed/);
      expect(shim.answered412).toBe(1);
      expect((await racer.get('outputs/t/race.parquet'))!.toString()).toBe('competitor');
    } finally { cleanup(); }
  });

  it('puts manifests and evidence under COMPLIANCE Object Lock with a retain-until date and a SHA-256 checksum header', async () => {
    const seen: { key: string; headers: Record<string, string> }[] = [];
    const watched = s3.client();
    watched.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'PutObjectCommand') seen.push({ key: (args.input as { Key: string }).Key, headers: { ...(args.request as { headers: Record<string, string> }).headers } });
      return next(args);
    }, { step: 'finalizeRequest', name: 'watchHeaders', priority: 'low' });
    const now = new Date('2026-11-03T02:00:00Z');
    const store = new S3ObjectStore('s3://reckon-store/locked', {
      client: watched, retry: FAST, now: () => now, objectLock: { mode: 'COMPLIANCE', retainDays: 2555, prefixes: ['manifests/', 'evidence/'] },
    });
    await store.putOnce('manifests/00000001-run-c.json', '{"m":1}');
    await store.putOnce('evidence/run-c.zip', 'zip');
    await store.putOnce('_locks/publish.json', '{}');
    const [m, e, l] = seen;
    expect(m.headers['x-amz-object-lock-mode']).toBe('COMPLIANCE');
    expect(m.headers['x-amz-object-lock-retain-until-date']).toBe('2033-11-01T02:00:00Z');
    expect(m.headers['x-amz-checksum-sha256']).toBe(createHash('sha256').update('{"m":1}').digest('base64'));
    expect(m.headers['if-none-match']).toBe('*');
    expect(e.headers['x-amz-object-lock-mode']).toBe('COMPLIANCE');
    expect(l.headers['x-amz-object-lock-mode']).toBeUndefined();
    expect(l.headers['x-amz-checksum-sha256']).toBe(createHash('sha256').update('{}').digest('base64'));
  });

  it('deletes only lock and staging keys', async () => {
    const store = new S3ObjectStore('s3://reckon-store/del', { client, retry: FAST });
    await store.putOnce('_locks/publish.json', 'x');
    await store.putOnce('manifests/00000001-run-d.json', 'x');
    await store.deleteScratch('_locks/publish.json');
    await store.deleteScratch('_locks/publish.json');
    expect(await store.get('_locks/publish.json')).toBeUndefined();
    await expect(store.deleteScratch('manifests/00000001-run-d.json')).rejects.toThrow(/refusing to delete/);
    expect(await store.get('manifests/00000001-run-d.json')).toBeDefined();
  });

  it('refuses a store whose bucket does not exist (exit 2)', async () => {
    await expect(openS3Store('s3://no-such-bucket/x', { client, retry: FAST })).rejects.toThrow(/cannot be listed: NoSuchBucket/);
  });

  it('a listing that fails after the store was opened is a StoreError naming the prefix, never an empty listing (issue 18)', async () => {
    // The bucket goes away (or the credentials lose s3:ListBucket) while the store is in use.
    const store = new S3ObjectStore('s3://no-such-bucket/x', { client, retry: FAST });
    const err = await store.list('manifests').then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('list_failed');
    expect((err as StoreError).message).toMatch(/^the store prefix s3:\/\/no-such-bucket\/x\/manifests cannot be listed: NoSuchBucket/);
    expect(exitCodeOf(err)).toBe(2);
  });
});

describe('throttling', () => {
  it('retries SlowDown with full-jitter backoff and then succeeds', async () => {
    const throttled = s3.client({ maxAttempts: 1 });
    let gets = 0;
    throttled.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'GetObjectCommand' && ++gets <= 2) {
        const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';
        return { response: { statusCode: 503, headers: { 'content-type': 'application/xml' }, body: Readable.from([Buffer.from(body)]) }, output: undefined as never };
      }
      return next(args);
    }, { step: 'deserialize', name: 'throttle', priority: 'low' });
    const store = new S3ObjectStore('s3://reckon-store/slow', { client: throttled, retry: FAST });
    await new S3ObjectStore('s3://reckon-store/slow', { client, retry: FAST }).putOnce('a.json', 'ok');
    expect((await store.get('a.json'))!.toString()).toBe('ok');
    expect(gets).toBe(3);
  });

  it('never retries answers, and the delay stays within [0, min(cap, base·2^(n−1))]', () => {
    expect(isRetryable({ name: 'SlowDown', $metadata: { httpStatusCode: 503 } })).toBe(true);
    expect(isRetryable({ name: 'ConditionalRequestConflict', $metadata: { httpStatusCode: 409 } })).toBe(true);
    expect(isRetryable({ name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } })).toBe(false);
    expect(isRetryable({ name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } })).toBe(false);
    expect(isRetryable({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } })).toBe(false);
    const p = { attempts: 10, baseMs: 100, capMs: 1000 };
    expect(fullJitterDelay(p, 1, () => 0.999)).toBe(99);
    expect(fullJitterDelay(p, 4, () => 0.5)).toBe(400);
    expect(fullJitterDelay(p, 9, () => 0.999)).toBe(999);
    expect(fullJitterDelay(p, 3, () => 0)).toBe(0);
  });
});
