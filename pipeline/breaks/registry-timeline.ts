/**
 * The signer registry in force when a person's break object was made, read from the published
 * manifests alone (so an attacker who can write the store cannot move it): each manifest records
 * the registry its run used (`break_log.signing.registry_sha256`) and a checkpoint of every
 * break's head (`heads/<run_id>.json`, its SHA-256 in the manifest). An object the checkpoint of a
 * manifest does not hold yet — an event above the head it records, a proposal it does not list —
 * was made after that run took its checkpoint, so under that run's registry or a later one.
 *
 * What this catches: a key removed from the registry (a revoked signer) that keeps signing with a
 * copy of the old configuration. Its signatures name the old registry version, which a published
 * run recorded, so they verify against it; they are refused when they were made after a run that
 * recorded a newer registry not giving the signer that key in that namespace.
 */
import { sha256Hex } from '../core/digest.js';
import type { HeadEntry, HeadsDocument } from './break-plan.js';
import type { ObjectReader } from '../signing/registry.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';

/** When a break object was made, as a checkpoint sees it: its version and, for a proposal or withdrawal, its key. */
export interface MadeAt {
  readonly breakId: string;
  readonly version: number;
  /** A proposal or withdrawal key: listed by a checkpoint taken after it was made. Null for an event's own signature. */
  readonly objectKey: string | null;
}

/** The latest run before an object: its manifest key, the registry it recorded, and every registry recorded up to it. */
export interface RunBefore {
  readonly manifestKey: string;
  readonly registrySha256: string;
  readonly recordedUpTo: ReadonlySet<string>;
}

interface Checkpoint {
  readonly manifestKey: string;
  readonly registry: string | null;
  readonly recordedUpTo: ReadonlySet<string>;
  readonly heads: ReadonlyMap<string, { version: number; keys: ReadonlySet<string> }>;
}

/** The checkpoints of the published manifests (chain order), each with the registry its run recorded. */
export class RegistryTimeline {
  private constructor(private readonly points: readonly Checkpoint[]) {}

  /**
   * Reads each manifest's checkpoint (promoted, or still staged after a crash); one that is
   * missing or does not have its listed SHA-256 is left out (verify-log.ts reports it).
   */
  static async read(reader: ObjectReader, manifests: readonly { readonly key: string; readonly manifest: ManifestV1 }[]): Promise<RegistryTimeline> {
    const points: Checkpoint[] = [];
    const recorded = new Set<string>();
    for (const m of manifests) {
      const log = m.manifest.break_log;
      if (!log) continue;
      const registry = log.signing.registry_sha256 ?? null;
      if (registry) recorded.add(registry);
      const bytes = (await reader.get(log.heads.key)) ?? (await reader.get(`_staging/${m.manifest.run_id}/${log.heads.key}`));
      if (!bytes || sha256Hex(bytes) !== log.heads.sha256) continue;
      let doc: HeadsDocument;
      try { doc = JSON.parse(bytes.toString('utf8')) as HeadsDocument; } catch { continue; }
      const list: readonly HeadEntry[] | undefined = doc.heads;
      if (!list || typeof list.map !== 'function') continue;
      const heads = new Map(list.map((h) => [h.break_id, { version: h.version, keys: new Set((h.proposals ?? []).map((p) => p.key)) }]));
      points.push({ manifestKey: m.key, registry, recordedUpTo: new Set(recorded), heads });
    }
    return new RegistryTimeline(points);
  }

  /**
   * The latest run whose checkpoint does not hold the object (it was made after that checkpoint),
   * when that run recorded a registry; undefined when every checkpoint holds it or that run was
   * unsigned. A checkpoint holds an event once its head reached the event's version, and a
   * proposal or withdrawal also while it lists it.
   */
  runBefore(at: MadeAt): RunBefore | undefined {
    for (let i = this.points.length - 1; i >= 0; i--) {
      const p = this.points[i];
      const h = p.heads.get(at.breakId);
      const held = h !== undefined && (h.version >= at.version || (at.objectKey !== null && h.keys.has(at.objectKey)));
      if (held) continue;
      return p.registry ? { manifestKey: p.manifestKey, registrySha256: p.registry, recordedUpTo: p.recordedUpTo } : undefined;
    }
    return undefined;
  }
}
