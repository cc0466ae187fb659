/**
 * The store where runs publish (CONTRACT §6): manifests, break events, output objects. Every
 * publication is write-once: `putOnce` never replaces an existing object, and a second write of
 * the same key fails with AlreadyExistsError. Keys are `/`-separated relative paths. This module
 * holds only the interface and its error, so both implementations (local-store.ts, s3-store.ts)
 * depend on it and on nothing of each other.
 */

/** A second write to a write-once key. `detail` says how the store knew (an S3 412, a local EEXIST). */
export class AlreadyExistsError extends Error {
  constructor(readonly key: string, detail?: string) {
    super(`${key} already exists and is never overwritten${detail ? ` (${detail})` : ''}`);
    this.name = 'AlreadyExistsError';
  }
}

/** One object of a batch write (ObjectStore.putManyOnce). */
export interface PutItem {
  readonly key: string;
  readonly body: Uint8Array | string;
}

/** What a batch write did with one object: written now, or left as it was because the key exists. */
export type PutOutcome = 'written' | 'exists';

/** Minimal write-once object store used by manifests, breaks and outputs. */
export interface ObjectStore {
  /** Human-readable location (`/var/reckon` or `s3://bucket/prefix`). */
  readonly location: string;
  /** Writes `key` once; throws AlreadyExistsError if it exists. */
  putOnce(key: string, body: Uint8Array | string): Promise<void>;
  /**
   * Optional: writes each of `items` once, in order, with putOnce's guarantees for each (a reader
   * sees no object or the whole object; an existing key is never replaced but reported `exists`).
   * Throws the first other failure (StoreError), the items before it written. A store without it
   * is written object by object with putOnce.
   */
  putManyOnce?(items: readonly PutItem[]): Promise<PutOutcome[]>;
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
