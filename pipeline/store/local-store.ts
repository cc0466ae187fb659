/**
 * The write-once store on the local file system. It writes a temporary file beside the target and
 * hard-links it into place (`link` fails when the name exists, unlike `rename`, which replaces
 * silently), so a reader sees either no object or the whole object, even if the writer is killed.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AlreadyExistsError, type ObjectStore } from './object-store.js';

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
