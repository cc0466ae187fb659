/** SHA-256 digests of bytes and of files (streamed), in lower-case hex. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** SHA-256 hex of a string or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * SHA-256 (hex) and size in bytes of a file, streamed. `onChunk`, when given, sees every chunk of
 * the file's bytes in order (the loader inspects CSV structure on the same pass). Throws when the
 * file cannot be read.
 */
export async function hashFile(path: string, onChunk?: (chunk: Buffer) => void): Promise<{ sha256: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    h.update(chunk as Buffer);
    size += (chunk as Buffer).length;
    onChunk?.(chunk as Buffer);
  }
  return { sha256: h.digest('hex'), size };
}
