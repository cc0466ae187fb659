/**
 * A full `reckon run` (real child process) with S3 sources and an S3 store on a real s3rver on
 * loopback, against the same data read from a local folder into a local store: the results digest,
 * statuses and differences are equal; the manifest records each S3 object's key, size, ETag and
 * SHA-256; outputs are published under their keys and staging is cleared; a second run chains to
 * the first; `reckon athena ddl` declares every output table of the S3 store.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, ROOT, scratchDir } from './helpers/cli.js';
import { startS3rver, type S3rverHandle } from './helpers/s3rver.js';
import { filesUnder, writeSmallSources } from './fixtures/s3-small-sources.js';

let s3: S3rverHandle;
let client: S3Client;
let sources: { dir: string; cleanup: () => void };
let local: { dir: string; cleanup: () => void };

beforeAll(async () => {
  s3 = await startS3rver(['reckon-sources', 'reckon-store']);
  client = s3.client();
  sources = scratchDir();
  local = scratchDir();
  writeSmallSources(sources.dir);
  for (const rel of filesUnder(sources.dir)) {
    await client.send(new PutObjectCommand({ Bucket: 'reckon-sources', Key: `landing/2026-11-02/${rel}`, Body: readFileSync(join(sources.dir, rel)) }));
  }
  // A typo'd dataset folder on the landing prefix only: never read, so the digest is the folder's.
  await client.send(new PutObjectCommand({ Bucket: 'reckon-sources', Key: 'landing/2026-11-02/notification_exception/part-0001.csv', Body: 'not,a,dataset\n' }));
});
afterAll(async () => {
  await s3?.stop();
  sources?.cleanup();
  local?.cleanup();
});

async function getJson(key: string): Promise<any> {
  const r = await client.send(new GetObjectCommand({ Bucket: 'reckon-store', Key: key }));
  return JSON.parse(await r.Body!.transformToString());
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

describe('reckon run with S3 sources and an S3 store', () => {
  it('gives the same results digest as the same data from a local folder, and records S3 lineage', async () => {
    const fromLocal = reckon(['run', '--date', '2026-11-02', '--sources', sources.dir, '--store', local.dir, '--json', '--quiet']);
    expect(fromLocal.json, fromLocal.stderr).toBeDefined();
    const fromS3 = reckon(['run', '--date', '2026-11-02', '--sources', 's3://reckon-sources/landing/2026-11-02', '--store', 's3://reckon-store/prod', '--json', '--quiet'], { env: s3.env });
    expect(fromS3.json, fromS3.stderr).toBeDefined();

    expect(fromS3.code).toBe(fromLocal.code);
    expect(fromS3.code).toBe(4);
    expect(fromS3.json.results_digest).toBe(fromLocal.json.results_digest);
    const summary = (j: any) => j.controls.map((c: any) => [c.control_id, c.status, c.differences.map((d: any) => `${d.kind} ${d.key}`)]);
    expect(summary(fromS3.json)).toEqual(summary(fromLocal.json));
    expect(summary(fromS3.json).slice(0, 2)).toEqual([
      ['RC01', 'BREAKS', ['ORDER_VERSION_GAP ORD-2']],
      ['RC02', 'BREAKS', ['FILL_PRICE_MISMATCH XLON|VF-2']],
    ]);
    expect(fromS3.json.controls.find((c: any) => c.control_id === 'RC06').status).toBe('INCOMPLETE');
    expect(fromS3.json.quarantine_count).toBe(1);

    // The manifest: on S3 under the store prefix, with each object's key, size, ETag and SHA-256.
    const path: string = fromS3.json.manifest.path;
    expect(path).toMatch(/^s3:\/\/reckon-store\/prod\/manifests\/00000001-run-[a-z0-9-]+\.json$/);
    const manifestKey = path.replace('s3://reckon-store/', '');
    const manifest = await getJson(manifestKey);
    expect(manifest.sources.location).toBe('s3://reckon-sources/landing/2026-11-02');
    const stray = "sources: the folder 'notification_exception' at the source root s3://reckon-sources/landing/2026-11-02 is no dataset's folder and was not read (did you mean notification_exceptions?)";
    expect(manifest.notes.filter((n: string) => n.startsWith('sources: '))).toEqual([stray]);
    expect(fromS3.stderr).toContain(stray);
    const orders = manifest.sources.datasets.orders.objects;
    expect(orders.length).toBe(1);
    const body = readFileSync(join(sources.dir, 'orders', 'part-0001.csv'));
    expect(orders[0]).toMatchObject({ path: 'orders/part-0001.csv', size: body.length, sha256: sha256(body), etag: md5(body), remote_key: 'landing/2026-11-02/orders/part-0001.csv' });
    const digestFile = await client.send(new GetObjectCommand({ Bucket: 'reckon-store', Key: manifestKey.replace(/\.json$/, '.sha256') }));
    expect((await digestFile.Body!.transformToString()).split(/\s+/)[0]).toBe(fromS3.json.manifest.sha256);

    // Every output listed is published under its key with its SHA-256; staging and locks are gone.
    for (const o of manifest.outputs) {
      const r = await client.send(new GetObjectCommand({ Bucket: 'reckon-store', Key: `prod/${o.key}` }));
      expect(sha256(await r.Body!.transformToByteArray())).toBe(o.sha256);
      expect(o.key).toMatch(/^outputs\/[a-z_]+\/window_date=2026-11-02\/run=run-[a-z0-9-]+\/part-00000\.parquet$/);
    }
    expect(manifest.outputs.map((o: any) => o.table).at(-1)).toBe('runs');
    const listed = await client.send(new ListObjectsV2Command({ Bucket: 'reckon-store', Prefix: 'prod/_' }));
    expect((listed.Contents ?? []).map((c) => c.Key).filter((k) => !k!.startsWith('prod/_leases') && !k!.startsWith('prod/_locks/'))).toEqual([]);

    // A second run chains to the first.
    const again = reckon(['run', '--date', '2026-11-02', '--sources', 's3://reckon-sources/landing/2026-11-02', '--store', 's3://reckon-store/prod', '--json', '--quiet'], { env: s3.env });
    expect(again.json, again.stderr).toBeDefined();
    expect(again.json.results_digest).toBe(fromLocal.json.results_digest);
    const second = await getJson(again.json.manifest.path.replace('s3://reckon-store/', ''));
    expect(second.chain).toEqual({ sequence: 2, previous_manifest_sha256: fromS3.json.manifest.sha256 });
    expect(second.breaks.map((b: any) => b.disposition).sort()).toEqual(['REOBSERVED', 'REOBSERVED']);

    // The chain and every output verify on S3.
    const verify = reckon(['manifest', 'verify', '--store', 's3://reckon-store/prod', '--json'], { env: s3.env });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, checked: 2 });

    // The DDL names every output table of the store, located under the store prefix.
    const ddl = reckon(['athena', 'ddl', '--store', 's3://reckon-store/prod', '--database', 'recon_prod', '--json'], { env: s3.env });
    expect(ddl.code, ddl.stderr).toBe(0);
    const tables = ddl.json.statements.filter((s: any) => s.kind === 'table').map((s: any) => s.name);
    expect(tables).toEqual([...new Set(manifest.outputs.map((o: any) => o.table) as string[])].sort());
    const runsDdl = ddl.json.statements.find((s: any) => s.name === 'runs').sql;
    expect(runsDdl).toContain("LOCATION 's3://reckon-store/prod/outputs/runs/'");
    expect(runsDdl).toContain("'storage.location.template' = 's3://reckon-store/prod/outputs/runs/window_date=${window_date}/'");
    expect(ddl.json.statements.filter((s: any) => s.kind === 'view').map((s: any) => s.name)).toEqual(['latest_accepted_runs', 'open_breaks_by_age']);
  });

  it('gives the same results digest for the bundled sample day (CSV, JSON Lines and Parquet) read from S3', async () => {
    const day = join(ROOT, 'fixtures', 'sample-day', 'sources');
    for (const rel of filesUnder(day)) {
      await client.send(new PutObjectCommand({ Bucket: 'reckon-sources', Key: `sample/${rel}`, Body: readFileSync(join(day, rel)) }));
    }
    const fromLocal = reckon(['run', '--date', '2026-11-02', '--sources', day, '--store', join(local.dir, 'sample'), '--json', '--quiet']);
    const fromS3 = reckon(['run', '--date', '2026-11-02', '--sources', 's3://reckon-sources/sample', '--store', 's3://reckon-store/sample', '--json', '--quiet'], { env: s3.env });
    expect(fromLocal.json, fromLocal.stderr).toBeDefined();
    expect(fromS3.json, fromS3.stderr).toBeDefined();
    expect(fromS3.code).toBe(fromLocal.code);
    expect(fromS3.json.results_digest).toBe(fromLocal.json.results_digest);
    expect(fromS3.json.controls.map((c: any) => c.status)).toEqual(fromLocal.json.controls.map((c: any) => c.status));
  });

  it('exits 2 naming the location when the S3 sources bucket or the store bucket is missing (as for a local folder that does not exist)', () => {
    const noSources = reckon(['run', '--date', '2026-11-02', '--sources', 's3://no-such-bucket/x', '--store', 's3://reckon-store/other', '--quiet'], { env: s3.env });
    expect(noSources.code).toBe(2);
    expect(noSources.stderr).toContain('the source location s3://no-such-bucket/x cannot be listed: NoSuchBucket');
    const noStore = reckon(['run', '--date', '2026-11-02', '--sources', sources.dir, '--store', 's3://no-such-bucket/x', '--quiet'], { env: s3.env });
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toContain('the store s3://no-such-bucket/x cannot be listed: NoSuchBucket');
  });
});
