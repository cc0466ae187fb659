/**
 * core/digest.ts hashFile against node:crypto over whole bytes: a small file (read whole), one just
 * over the 1 MiB whole-read bound (streamed), an empty one; every chunk reaches `onChunk` in order;
 * anything but a regular file is refused.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scratchDir } from './helpers/cli.js';
import { hashFile } from '../pipeline/core/digest.js';

const tmp = scratchDir('reckon-digest-');
afterAll(() => tmp.cleanup());
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('hashFile', () => {
  for (const [name, size] of [['empty', 0], ['small', 1000], ['at the bound', 1024 * 1024], ['over the bound', 1024 * 1024 + 1], ['several MiB', 3 * 1024 * 1024 + 17]] as const) {
    it(`${name} (${size} bytes): the SHA-256 and size of its bytes; onChunk sees them all, in order`, async () => {
      const bytes = Buffer.alloc(size, 0);
      for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff;
      const path = join(tmp.dir, `f-${size}`);
      writeFileSync(path, bytes);
      const seen: Buffer[] = [];
      expect(await hashFile(path, (c) => seen.push(Buffer.from(c)))).toEqual({ sha256: sha(bytes), size });
      expect(Buffer.concat(seen).equals(bytes)).toBe(true);
    });
  }

  it('a folder is not read', async () => {
    const dir = join(tmp.dir, 'a-folder');
    mkdirSync(dir);
    await expect(hashFile(dir)).rejects.toThrow(/is not a regular file|EISDIR/);
  });
});
