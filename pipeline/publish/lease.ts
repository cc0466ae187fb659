/**
 * Window leases (issue 7): one run per (store, control, window) at a time. A lease is a grant
 * object `leases/<control>/<window>/<token>.json`, written once; the token is a fencing number
 * that grows by one per grant, so a run whose lease expired and was taken over sees a higher
 * token at publication and refuses to publish. A grant is released by a write-once
 * `<token>.released` beside it. A lease is held while it is not released, not past `expires_at`,
 * and (on the same host) its process is alive, so a lease left by a killed process expires at once
 * on this host and at `expires_at` elsewhere. Grants are kept: they are the lease history.
 */
import { ConcurrencyError } from '../core/errors.js';
import { holderAlive, thisProcess, type Holder } from '../core/process.js';
import { AlreadyExistsError, type ObjectStore } from '../store/object-store.js';
import type { Window } from '../contract/window.js';

/** A lease this run holds. */
export interface Lease {
  readonly control_id: string;
  readonly window_key: string;
  readonly token: number;
  readonly run_id: string;
  readonly acquired_at: string;
  readonly expires_at: string;
}

interface Grant extends Lease, Holder {}

/** Default lease duration: longer than any run of this machine's size is expected to take. */
export const LEASE_TTL_MS = 2 * 60 * 60 * 1000;

/** `20261102t000000z-20261103t000000z`: the window as a key part. */
export function windowKey(w: Window): string {
  const k = (iso: string) => iso.replace(/[-:]/g, '').replace(/\.([0-9]+)Z$/, '$1z').replace(/Z$/, 'z').toLowerCase();
  return `${k(w.start)}-${k(w.end)}`;
}

/** A grant's body, or undefined when it is not a readable grant (nothing proves anyone holds it). */
function parseGrant(body: Buffer | undefined): Grant | undefined {
  try {
    const g = body ? (JSON.parse(body.toString('utf8')) as Grant) : undefined;
    return g && typeof g === 'object' && typeof g.expires_at === 'string' && typeof g.run_id === 'string' ? g : undefined;
  } catch { return undefined; }
}

async function latestGrant(store: ObjectStore, prefix: string): Promise<{ token: number; grant?: Grant; released: boolean }> {
  const keys = await store.list(prefix);
  const tokens = keys.map((k) => /\/([0-9]{10})\.json$/.exec(k)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1]));
  if (tokens.length === 0) return { token: 0, released: true };
  const token = Math.max(...tokens);
  const name = String(token).padStart(10, '0');
  const released = keys.includes(`${prefix}/${name}.released`);
  return { token, grant: parseGrant(await store.get(`${prefix}/${name}.json`)), released };
}

/**
 * Whether a grant is held: not released, not expired, and its holder not known dead (a holder on
 * this host whose process is gone, was restarted under the same pid or lived before a reboot;
 * core/process.ts). A dead holder's lease is so free at once on its host and at its expiry
 * elsewhere, never later. An unreadable grant holds nothing (its token still counts).
 */
function held(g: { grant?: Grant; released: boolean }, now: number): boolean {
  if (!g.grant || g.released) return false;
  const expires = Date.parse(g.grant.expires_at);
  if (!(expires > now)) return false;
  return holderAlive(g.grant);
}

/**
 * The refusal of a window another run holds: who holds it and what to do (wait for the run, or
 * for the lease expiry when its holder died on another host; on this host a dead holder frees it).
 */
function heldMessage(controlId: string, w: Window, g: Grant): string {
  const died = g.host === thisProcess().host ? '' : `, or, if it died on ${g.host}, after its lease expires at ${g.expires_at}`;
  return `${controlId} window [${w.start}, ${w.end}) is being run by ${g.run_id} (pid ${g.pid} on ${g.host}, lease until ${g.expires_at}): nothing was run; retry when run ${g.run_id} ends${died}`;
}

/**
 * Acquires the lease of every control for the window, or none: throws ConcurrencyError('lock')
 * (exit 5) naming the run that holds one. Leases already taken by this call are released first.
 */
export async function acquireLeases(store: ObjectStore, controls: readonly string[], w: Window, runId: string, ttlMs = LEASE_TTL_MS): Promise<Lease[]> {
  const taken: Lease[] = [];
  try {
    for (const control_id of controls) {
      const prefix = `leases/${control_id.toLowerCase()}/${windowKey(w)}`;
      const now = Date.now();
      const latest = await latestGrant(store, prefix);
      if (held(latest, now)) throw new ConcurrencyError(heldMessage(control_id, w, latest.grant!), 'lock');
      const token = latest.token + 1;
      const grant: Grant = {
        control_id, window_key: windowKey(w), token, run_id: runId, ...thisProcess(),
        acquired_at: new Date(now).toISOString(), expires_at: new Date(now + ttlMs).toISOString(),
      };
      try {
        await store.putOnce(`${prefix}/${String(token).padStart(10, '0')}.json`, JSON.stringify(grant));
      } catch (e) {
        if (e instanceof AlreadyExistsError) throw new ConcurrencyError(`${control_id} window [${w.start}, ${w.end}) was leased by another run at the same moment: nothing was run; retry when that run ends (reckon runs lists it once published)`, 'lock');
        throw e;
      }
      taken.push({ control_id, window_key: grant.window_key, token, run_id: runId, acquired_at: grant.acquired_at, expires_at: grant.expires_at });
    }
    return taken;
  } catch (e) {
    await releaseLeases(store, taken);
    throw e;
  }
}

/** Fencing check before publication: throws ConcurrencyError('lock') if any lease was taken over. */
export async function checkFencing(store: ObjectStore, leases: readonly Lease[]): Promise<void> {
  for (const l of leases) {
    const latest = await latestGrant(store, `leases/${l.control_id.toLowerCase()}/${l.window_key}`);
    if (latest.token !== l.token) throw new ConcurrencyError(`${l.control_id} lease token ${l.token} was superseded by token ${latest.token}: this run no longer owns the window and does not publish`, 'lock');
  }
}

/** Releases leases (write-once release markers); never throws for a marker that exists. */
export async function releaseLeases(store: ObjectStore, leases: readonly Lease[]): Promise<void> {
  for (const l of leases) {
    await store.putOnce(`leases/${l.control_id.toLowerCase()}/${l.window_key}/${String(l.token).padStart(10, '0')}.released`, new Date().toISOString()).catch(() => undefined);
  }
}
