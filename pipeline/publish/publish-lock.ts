/**
 * The store-wide publish lock (CONTRACT §6 "publication serializes on the chain head"): a sequence
 * of write-once grants, so that two runs of different windows never fork the manifest chain.
 */
import { ConcurrencyError } from '../core/errors.js';
import { holderAlive, thisProcess, type Holder } from '../core/process.js';
import { AlreadyExistsError, type ObjectStore } from '../store/object-store.js';

const LOCK_PREFIX = '_locks/publish';
const LOCK_TTL_MS = 120_000;

interface LockGrant extends Holder { readonly acquired_at: string; readonly expires_at: string }

/**
 * Runs `fn` holding the store-wide publish lock. The lock is a sequence of write-once grants
 * `_locks/publish/<generation>.json`; a grant is held until its `.released` marker exists, its
 * process is gone (same host) or it expires. To take the lock a publisher writes generation n+1
 * once the latest generation n is free — a conditional create, so of two publishers that both saw
 * n free exactly one gets n+1. Nothing is ever deleted to break a lock, so a stale lock cannot be
 * broken twice (the race that could fork the chain).
 */
export async function withPublishLock<T>(store: ObjectStore, fn: (generation: number) => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const keys = await store.list(LOCK_PREFIX);
    const gens = keys.map((k) => /\/([0-9]{10})\.json$/.exec(k)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1]));
    const latest = gens.length ? Math.max(...gens) : 0;
    let free = latest === 0 || keys.includes(`${LOCK_PREFIX}/${String(latest).padStart(10, '0')}.released`);
    if (!free) {
      const body = await store.get(`${LOCK_PREFIX}/${String(latest).padStart(10, '0')}.json`);
      try {
        const g = JSON.parse(body!.toString('utf8')) as LockGrant;
        free = !(Date.parse(g.expires_at) >= Date.now()) || !holderAlive(g);
      } catch { free = true; }
    }
    if (free) {
      const gen = latest + 1;
      const now = Date.now();
      const grant: LockGrant = { ...thisProcess(), acquired_at: new Date(now).toISOString(), expires_at: new Date(now + LOCK_TTL_MS).toISOString() };
      try {
        await store.putOnce(`${LOCK_PREFIX}/${String(gen).padStart(10, '0')}.json`, JSON.stringify(grant));
      } catch (e) {
        if (!(e instanceof AlreadyExistsError)) throw e;
        // Another publisher took generation gen first: look again, within the deadline.
        if (Date.now() > deadline) throw new ConcurrencyError('the store-wide publish lock is held by another run', 'lock');
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 50));
        continue;
      }
      try {
        return await fn(gen);
      } finally {
        await store.putOnce(`${LOCK_PREFIX}/${String(gen).padStart(10, '0')}.released`, new Date().toISOString()).catch(() => undefined);
        // Old generations are history nobody needs: keep the last few.
        for (const k of keys) {
          const m = /\/([0-9]{10})\.(json|released)$/.exec(k);
          if (m && Number(m[1]) < gen - 4) await store.deleteScratch(k).catch(() => undefined);
        }
      }
    }
    if (Date.now() > deadline) throw new ConcurrencyError('the store-wide publish lock is held by another run', 'lock');
    await new Promise((r) => setTimeout(r, 25 + Math.random() * 100));
  }
}
