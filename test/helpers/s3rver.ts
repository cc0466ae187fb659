/**
 * A real S3-compatible server on loopback for tests: s3rver 3.7.1 in a child process, started with
 * `node --openssl-legacy-provider` (without it, listing past 1,000 objects fails), on a free port
 * of 127.0.0.1, with its data in a temp folder. `stop()` ends the child (by its pid) and removes
 * the folder. s3rver ignores `If-None-Match` (a second write overwrites); tests of the 412 path
 * add a conditional-write shim to the SDK client (see `conditionalWriteShim`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HeadObjectCommand, type S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { makeS3Client } from '../../pipeline/store/s3-client.js';
import { ROOT } from './cli.js';

/** A running s3rver: its endpoint, the environment a child `reckon` needs to reach it, and stop(). */
export interface S3rverHandle {
  readonly endpoint: string;
  readonly env: Record<string, string>;
  /** A fresh SDK client for the server (path-style, checksums only when required); `overrides` as in S3ClientConfig. */
  client(overrides?: S3ClientConfig): S3Client;
  stop(): Promise<void>;
}

const SERVER = `
const S3rver = require(process.env.S3RVER_MODULE);
const server = new S3rver({
  address: '127.0.0.1', port: 0, silent: true, directory: process.env.S3RVER_DIR,
  configureBuckets: JSON.parse(process.env.S3RVER_BUCKETS).map((name) => ({ name })),
});
server.run().then((a) => process.stdout.write(JSON.stringify({ port: a.port }) + '\\n'), (e) => { console.error(e); process.exit(1); });
process.on('SIGTERM', () => { server.close().finally(() => process.exit(0)); });
`;

/** Starts s3rver with `buckets` created. Rejects if it does not announce its port within 20 s. */
export async function startS3rver(buckets: readonly string[]): Promise<S3rverHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'reckon-s3rver-'));
  const module = createRequire(join(ROOT, 'package.json')).resolve('s3rver');
  const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', '-e', SERVER], {
    env: { ...process.env, S3RVER_MODULE: module, S3RVER_DIR: dir, S3RVER_BUCKETS: JSON.stringify(buckets) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => { stderr += String(d); });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`s3rver did not start: ${stderr}`)), 20_000);
    child.stdout!.on('data', (d) => {
      out += String(d);
      const line = out.split('\n')[0];
      if (out.includes('\n')) { clearTimeout(timer); resolve((JSON.parse(line) as { port: number }).port); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`s3rver exited with ${code}: ${stderr}`)); });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const env = { AWS_ENDPOINT_URL_S3: endpoint, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };
  return {
    endpoint,
    env,
    client: (overrides = {}) => makeS3Client({ region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, ...overrides }, { url: endpoint, requestChecksumSet: false, responseChecksumSet: false }),
    stop: async () => {
      if (child.exitCode === null && child.pid !== undefined) {
        const exited = new Promise((r) => child.once('exit', r));
        process.kill(child.pid, 'SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
        if (child.exitCode === null) process.kill(child.pid, 'SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A test double at the SDK boundary that gives s3rver S3's conditional-write behaviour: a
 * PutObject or CompleteMultipartUpload carrying `If-None-Match: *` for a key that already exists
 * is answered with S3's 412 PreconditionFailed response (status, XML error body), which the SDK's
 * own deserializer turns into its error; every other request goes to s3rver unchanged. Existence is
 * checked on the real server with a second, shim-free client. Returns a counter of 412 answers.
 */
export function conditionalWriteShim(client: S3Client, probe: S3Client): { answered412: number } {
  const state = { answered412: 0 };
  // Below the SDK's deserializer, so the 412 goes through the SDK's own error parsing.
  client.middlewareStack.add((next, context) => async (args) => {
    const input = args.input as { Bucket?: string; Key?: string; IfNoneMatch?: string };
    const conditional = (context.commandName === 'PutObjectCommand' || context.commandName === 'CompleteMultipartUploadCommand') && input.IfNoneMatch === '*';
    if (!conditional || !(await exists(probe, input.Bucket!, input.Key!))) return next(args);
    state.answered412 += 1;
    const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition><RequestId>SHIM</RequestId></Error>';
    const response = { statusCode: 412, reason: 'Precondition Failed', headers: { 'content-type': 'application/xml', 'x-amz-request-id': 'SHIM' }, body: Readable.from([Buffer.from(body)]) };
    return { response, output: undefined as never };
  }, { step: 'deserialize', name: 'conditionalWriteShim', priority: 'low' });
  return state;
}

async function exists(client: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (e) {
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw e;
  }
}
