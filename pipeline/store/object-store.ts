/**
 * The store where runs publish (CONTRACT §6): manifests, break events, output objects. Every
 * publication is write-once: `putOnce` never replaces an existing object, and a second write of
 * the same key fails with AlreadyExistsError. Keys are `/`-separated relative paths.
 *
 * The local implementation writes a temporary file beside the target and hard-links it into
 * place (`link` fails when the name exists, unlike `rename`, which replaces silently), so a reader
 * sees either no object or the whole object, even if the writer is killed.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError } from '../errors.js';

/** A second write to a write-once key. `detail` says how the store knew (an S3 412, a local EEXIST). */
export class AlreadyExistsError extends Error {
  constructor(readonly key: string, detail?: string) {
    super(`${key} already exists and is never overwritten${detail ? ` (${detail})` : ''}`);
    this.name = 'AlreadyExistsError';
  }
}

/** Minimal write-once object store used by manifests, breaks and outputs. */
export interface ObjectStore {
  /** Human-readable location (`/var/reckon` or `s3://bucket/prefix`). */
  readonly location: string;
  /** Writes `key` once; throws AlreadyExistsError if it exists. */
  putOnce(key: string, body: Uint8Array | string): Promise<void>;
  /** Publishes a local file under `key` once (outputs). */
  putFileOnce(key: string, localPath: string): Promise<void>;
  /** Reads `key`, or undefined when absent. */
  get(key: string): Promise<Buffer | undefined>;
  /** Lists keys under `prefix` (recursively), sorted. */
  list(prefix: string): Promise<string[]>;
  /** Deletes a key (only for staging and lock objects; published objects are never deleted). */
  deleteScratch(key: string): Promise<void>;
  /** A local directory for scratch space (DuckDB temp files, staging). */
  readonly scratchDir: string;
}

/** Write-once store on the local file system under `root`. */
export class LocalObjectStore implements ObjectStore {
  readonly location: string;
  readonly scratchDir: string;
  constructor(readonly root: string) {
    this.location = root;
    this.scratchDir = join(root, '_scratch');
  }

  private path(key: string): string {
    if (key.split('/').some((p) => p === '..' || p === '')) throw new Error(`bad store key ${key}`);
    return join(this.root, ...key.split('/'));
  }

  async putOnce(key: string, body: Uint8Array | string): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const tmp = join(dirname(target), `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
    await writeFile(tmp, body, { flag: 'wx' });
    try {
      await link(tmp, target);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new AlreadyExistsError(key);
      throw e;
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  async putFileOnce(key: string, localPath: string): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    try {
      await link(localPath, target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new AlreadyExistsError(key);
      if (code === 'EXDEV') return this.putOnce(key, await readFile(localPath));
      throw e;
    }
  }

  async get(key: string): Promise<Buffer | undefined> {
    try { return await readFile(this.path(key)); } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (rel: string) => {
      let entries;
      try { entries = await readdir(this.path(rel), { withFileTypes: true }); } catch { return; }
      for (const e of entries) {
        if (e.name.startsWith('.tmp-')) continue;
        const k = `${rel}/${e.name}`;
        if (e.isDirectory()) await walk(k);
        else out.push(k);
      }
    };
    const p = prefix.replace(/\/$/, '');
    try {
      const s = await stat(this.path(p));
      if (s.isFile()) return [p];
    } catch { return []; }
    await walk(p);
    return out.sort();
  }

  async deleteScratch(key: string): Promise<void> {
    await unlink(this.path(key)).catch(() => undefined);
  }
}

/**
 * Opens the store at `location`: `s3://bucket/prefix` opens the S3 store (s3-store.ts; the AWS SDK
 * is loaded only then), anything else is a local directory, created if missing. Throws ConfigError
 * when an S3 location is malformed or its bucket cannot be listed.
 */
export async function openStore(location: string): Promise<ObjectStore> {
  if (location.startsWith('s3://')) {
    const { openS3Store } = await import('./s3-store.js');
    return openS3Store(location);
  }
  try {
    await mkdir(location, { recursive: true });
    if (!(await stat(location)).isDirectory()) throw new Error('not a directory');
  } catch (e) {
    throw new ConfigError(`--store ${location} cannot be used as a store folder: ${(e as Error).message}`);
  }
  return new LocalObjectStore(location);
}
