/**
 * Verification of the break log (issue 17), shared by `reckon manifest verify` (a store) and
 * `reckon evidence verify` (a bag read as a store): every event, observation, proposal and
 * withdrawal, and every break head the manifests record. Found and named, first failure first:
 *
 *   - an event edited, reordered, inserted or removed inside a log: versions, file names, states
 *     and the hash chain (each payload names the SHA-256 of the payload before it);
 *   - a person's event or proposal whose signatures do not verify against the registry version
 *     recorded with each (kept in the store under signers/), a dual-control event without the
 *     approver's countersignature or its proposal, two names backed by one key;
 *   - with a registry the reader trusts (`--config`/`--signers`), a key it does not give the
 *     signer under a registry version no published run recorded (a registry written into the
 *     store, check-signatures.ts);
 *   - a signature made after a run that recorded a registry no longer giving the signer that key
 *     (a revoked key signing with an old configuration, registry-timeline.ts);
 *   - a run's event or observation that is not bound to a published manifest listing its digest;
 *   - a newest event or a proposal removed after a run recorded it: the manifests list the head of
 *     every break the run touched and a checkpoint of every break's head (break-plan.ts).
 *
 * Not failures, but reported: legacy events and observations (written before signing), unsigned
 * events (the configuration said `signing.unsigned: true`), planned events superseded by a
 * transition that landed first, planned objects a crashed run has not written yet, and registry
 * versions no manifest records.
 */
import { breakId as computeBreakId } from './break-id.js';
import { BREAK_KEYS, decodeObject, keyKind, ObjectFormatError, type DecodedObject } from './break-objects.js';
import { headsKey, type HeadsDocument, type PlannedObject } from './break-plan.js';
import { eventOf, groupById, type BreakEvent } from './break-store.js';
import { sha256Hex } from '../core/digest.js';
import { ConfigError, SignatureError } from '../core/errors.js';
import { archivedRegistry, type ObjectReader, type SignerRegistry } from '../signing/registry.js';
import { verifyRecord, type SignatureRecord } from '../signing/signatures.js';
import { trustedSigners, untrustedKey, type LogRefusal, type TrustedSigners } from './check-signatures.js';
import { RegistryTimeline, type MadeAt } from './registry-timeline.js';
import { RECONCILER } from './transitions.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';

/** One finding: the object (store key) and what is wrong with it. */
export interface LogFinding {
  readonly key: string;
  readonly problem: string;
}

/** A signature record the check refused: the object's key, the signer, and the problem as in `problems`. */
export interface RefusedSignature extends LogFinding, LogRefusal {}

/** What the check counted. */
export interface LogCounts {
  breaks: number;
  events: number;
  signed: number;
  countersigned: number;
  by_run: number;
  unsigned: number;
  legacy: number;
  observations: number;
  proposals: number;
  signatures: number;
}

/** The outcome: problems (tampering) and notices (legacy, unsigned, superseded, pending), with counts and the registries used. */
export interface LogVerification {
  readonly problems: LogFinding[];
  readonly notices: LogFinding[];
  /** The signatures among `problems` refused, by object key and signer (so a reader marks each one, breaks show). */
  readonly refused: RefusedSignature[];
  readonly counts: LogCounts;
  /** SHA-256 of every registry version a signature was checked against. */
  readonly registries: string[];
}

/** A published manifest as the check needs it. */
export interface ManifestRef {
  readonly key: string;
  readonly sha256: string;
  readonly manifest: ManifestV1;
}

/** What the check reads besides the break objects. */
export interface LogSources {
  /** The published manifests (in chain order). */
  readonly manifests: readonly ManifestRef[];
  /** Only these breaks (a bag holds some); default every break of the reader. */
  readonly breakIds?: readonly string[];
  /** The staged plan of a published run not yet rolled forward (a store only). */
  readonly stagedPlan?: (runId: string, sha256: string) => Promise<readonly PlannedObject[] | undefined>;
  /** The registry the reader trusts (`--config`/`--signers`); absent or null: the store's registries as they say. */
  readonly trusted?: SignerRegistry | null;
}

const short = (sha: string | null | undefined) => (sha ? `${sha.slice(0, 12)}…` : 'none');

/** Checks the break log of `reader` against `src` (see the module comment). Never throws for a bad log. */
export async function verifyBreakLogs(reader: ObjectReader, src: LogSources): Promise<LogVerification> {
  const v = new Verifier(reader, src);
  await v.run();
  return { problems: v.problems, notices: v.notices, refused: v.refused, counts: v.counts, registries: [...v.registriesUsed].sort() };
}

interface BreakObjects {
  readonly id: string;
  readonly events: DecodedObject[];
  readonly byKey: Map<string, DecodedObject>;
}

class Verifier {
  readonly problems: LogFinding[] = [];
  readonly notices: LogFinding[] = [];
  readonly refused: RefusedSignature[] = [];
  readonly counts: LogCounts = { breaks: 0, events: 0, signed: 0, countersigned: 0, by_run: 0, unsigned: 0, legacy: 0, observations: 0, proposals: 0, signatures: 0 };
  readonly registriesUsed = new Set<string>();
  private readonly registries = new Map<string, SignerRegistry | null>();
  private readonly manifestsByKey: Map<string, ManifestRef>;
  private readonly breaks = new Map<string, BreakObjects>();
  private readonly attested: Set<string>;
  private readonly trusted: TrustedSigners | null;
  private timeline: RegistryTimeline | undefined;

  constructor(private readonly reader: ObjectReader, private readonly src: LogSources) {
    this.manifestsByKey = new Map(src.manifests.map((m) => [m.key, m]));
    this.attested = new Set(src.manifests.map((m) => m.manifest.break_log?.signing.registry_sha256).filter((s): s is string => typeof s === 'string'));
    this.trusted = src.trusted ? trustedSigners(src.trusted, src.manifests) : null;
  }

  private problem(key: string, problem: string): void { this.problems.push({ key, problem }); }
  /** A problem that refuses `signer`'s signature on `key`. */
  private refuse(key: string, signer: string, problem: string): null {
    this.problem(key, problem);
    this.refused.push({ key, signer, problem });
    return null;
  }
  private notice(key: string, notice: string): void { this.notices.push({ key, problem: notice }); }

  async run(): Promise<void> {
    this.timeline = await RegistryTimeline.read(this.reader, this.src.manifests);
    const byId = groupById(await this.reader.list('breaks/'));
    const ids = [...(this.src.breakIds ?? byId.keys())].sort();
    for (const id of ids) await this.checkBreak(id, byId.get(id) ?? []);
    for (const m of this.src.manifests) await this.checkManifest(m);
    for (const sha of this.registriesUsed) {
      if (!this.attested.has(sha)) this.notice(`signers/${sha}.allowed_signers`, `registry ${short(sha)} verified signatures but no published run records it (break_log.signing): confirm it with whoever keeps the registry`);
    }
  }

  private async decode(key: string): Promise<DecodedObject | undefined> {
    const bytes = await this.reader.get(key);
    if (!bytes) { this.problem(key, 'is listed but cannot be read'); return undefined; }
    try { return decodeObject(key, bytes); } catch (e) {
      if (e instanceof ObjectFormatError) { this.problem(key, e.message.slice(key.length + 2)); return undefined; }
      throw e;
    }
  }

  private async registry(sha: string): Promise<SignerRegistry | null> {
    if (!this.registries.has(sha)) {
      let r: SignerRegistry | null = null;
      try { r = (await archivedRegistry(this.reader, sha)) ?? null; } catch (e) { if (!(e instanceof ConfigError)) throw e; }
      this.registries.set(sha, r);
    }
    return this.registries.get(sha)!;
  }

  /** Verifies one signature record of an object made `at`; returns its signer, or null after recording the problem. */
  private async signature(key: string, payload: string, rec: SignatureRecord, what: string, at: MadeAt): Promise<{ signer: string; key: string } | null> {
    this.counts.signatures += 1;
    const reg = await this.registry(rec.registry_sha256);
    if (!reg) return this.refuse(key, rec.signer, `${what} names registry ${short(rec.registry_sha256)}, which the store does not keep (signers/)`);
    this.registriesUsed.add(reg.sha256);
    let signer: { signer: string; key: string };
    try { signer = verifyRecord(payload, rec, reg); } catch (e) {
      if (e instanceof SignatureError) return this.refuse(key, rec.signer, `${what} by ${rec.signer}: ${e.message}`);
      throw e;
    }
    const why = (this.trusted ? untrustedKey(rec, this.trusted) : null) ?? (await this.revoked(payload, rec, at));
    if (why) return this.refuse(key, rec.signer, `${what} by ${rec.signer}: ${why}`);
    return signer;
  }

  /** Why a signature naming an older registry was made after a run whose registry no longer gives the signer that key; null when it was not. */
  private async revoked(payload: string, rec: SignatureRecord, at: MadeAt): Promise<string | null> {
    const before = this.timeline?.runBefore(at);
    // A registry version newer than that run's (a rotation no run recorded yet) is judged by the trusted registry above.
    if (!before || before.registrySha256 === rec.registry_sha256 || !before.recordedUpTo.has(rec.registry_sha256)) return null;
    const inForce = await this.registry(before.registrySha256);
    if (!inForce) return null;
    try { verifyRecord(payload, rec, inForce); return null; } catch (e) {
      if (!(e instanceof SignatureError)) throw e;
      return `it names registry ${short(rec.registry_sha256)} but was made after ${before.manifestKey}, whose run recorded registry ${short(before.registrySha256)}, under which it does not verify (${e.message}): a key revoked, or a name removed, before it signed`;
    }
  }

  private async checkBreak(id: string, keys: readonly string[]): Promise<void> {
    this.counts.breaks += 1;
    const byKey = new Map<string, DecodedObject>();
    for (const k of [...keys].sort()) {
      if (keyKind(k) === null) { this.problem(k, `is not an event, observation, proposal or withdrawal of break ${id}`); continue; }
      const o = await this.decode(k);
      if (o) byKey.set(k, o);
    }
    const events = [...byKey.values()].filter((o) => keyKind(o.key) === 'event').sort((a, b) => (a.key < b.key ? -1 : 1));
    const b = { id, events, byKey };
    this.breaks.set(id, b);
    await this.checkEvents(b);
    for (const o of byKey.values()) {
      const kind = keyKind(o.key);
      if (kind === 'observation') this.checkObservation(b, o);
      else if (kind === 'proposal') await this.checkProposal(b, o);
      else if (kind === 'withdrawal') await this.checkWithdrawal(b, o);
    }
  }

  private async checkEvents(b: BreakObjects): Promise<void> {
    let prev: { event: BreakEvent; object: DecodedObject } | null = null;
    let identity: string | undefined;
    for (const [i, o] of b.events.entries()) {
      this.counts.events += 1;
      const e = eventOf(o);
      const v = i + 1;
      if (o.key !== BREAK_KEYS.event(b.id, v)) { this.problem(o.key, `stands where version ${v} was expected: the log's versions are not contiguous from 1 (an event was removed or added)`); return; }
      if (e.version !== v) { this.problem(o.key, `records version ${e.version}, its name says ${v}: events were reordered or renamed`); return; }
      if (e.expected_version !== v - 1) this.problem(o.key, `expected version ${e.expected_version}, not ${v - 1}`);
      if (e.break_id !== b.id) this.problem(o.key, `belongs to break ${e.break_id}`);
      if ((e.from_state ?? null) !== (prev?.event.to_state ?? null)) this.problem(o.key, `moves from ${e.from_state} but the previous event left the break ${prev?.event.to_state ?? 'unopened'}`);
      const ident = `${e.control_id}\u0000${e.kind}\u0000${e.key}`;
      if (identity !== undefined && ident !== identity) this.problem(o.key, 'names a different control, kind or key than version 1');
      identity ??= ident;
      if (v === 1 && computeBreakId(String(e.control_id), String(e.kind), String(e.key)) !== b.id) this.problem(o.key, `(${e.control_id}, ${e.kind}, ${e.key}) does not hash to the break id ${b.id}`);
      if (o.format === 'legacy') {
        if (prev && prev.object.format === 'v2') this.problem(o.key, 'is in the unsigned legacy form but follows an event of the signed form: legacy events only precede signing; this one was rewritten');
        else { this.counts.legacy += 1; this.notice(o.key, 'legacy event: written before events were signed and chained; its content is not proven'); }
      } else {
        const expectedPrev = prev ? prev.object.digest : null;
        if ((e.previous_event_sha256 ?? null) !== expectedPrev) {
          // Named at the earlier event: the later one's pointer is covered by its own proof, checked next.
          this.problem(prev ? prev.object.key : o.key, prev
            ? `has SHA-256 ${short(expectedPrev)}, but the next event (${o.key}) names ${short(e.previous_event_sha256)} before it: this event was edited or replaced`
            : `is version 1 but names a previous event ${short(e.previous_event_sha256)}`);
        }
        await this.checkProof(b, o, e);
      }
      prev = { event: e, object: o };
    }
  }

  private async checkProof(b: BreakObjects, o: DecodedObject, e: BreakEvent): Promise<void> {
    const isRun = e.proof === 'manifest';
    if ((e.actor === RECONCILER) !== isRun) {
      this.problem(o.key, isRun ? `is proven by a manifest but names actor ${e.actor}: only ${RECONCILER} is` : `names actor ${RECONCILER} but is not proven by a run's manifest: no person acts as ${RECONCILER}`);
      return;
    }
    if (isRun) return this.checkRunEvent(b, o, e);
    if (e.proof === 'unsigned') { this.counts.unsigned += 1; this.notice(o.key, 'unsigned event: the configuration said signing.unsigned: true, so who made it is not proven'); return; }
    if (e.proof !== 'signed') { this.problem(o.key, `says proof ${JSON.stringify(e.proof)}: an event is signed, unsigned by configuration, or proven by a manifest`); return; }
    const dual = e.to_state === 'CONTAINED' || e.to_state === 'CORRECTED' || e.dual_control === true;
    if (dual && e.dual_control !== true) { this.problem(o.key, `${e.to_state} is a dual-control step but the event does not say so`); return; }
    const actor = o.signatures.filter((s) => s.role === 'actor');
    const approver = o.signatures.filter((s) => s.role === 'approver');
    if (actor.length !== 1) { this.problem(o.key, `has ${actor.length} signatures of its actor; one is needed`); return; }
    if (dual !== (approver.length === 1) || approver.length > 1) { this.problem(o.key, dual ? 'is a dual-control step without exactly one countersignature of its approver' : 'is countersigned, but its step is made by one person'); return; }
    const proposalKey = dual ? BREAK_KEYS.proposal(b.id, e.version, o.digest) : null;
    const a = await this.signature(o.key, o.payload, actor[0], 'the actor\'s signature', { breakId: b.id, version: e.version, objectKey: proposalKey });
    if (a && a.signer.toLowerCase() !== e.actor.toLowerCase()) this.problem(o.key, `is made by ${e.actor} but signed by ${a.signer}`);
    this.counts.signed += 1;
    if (!dual) return;
    const c = await this.signature(o.key, o.payload, approver[0], 'the approver\'s countersignature', { breakId: b.id, version: e.version, objectKey: null });
    if (c && c.signer.toLowerCase() !== String(e.evidence.approver ?? '').toLowerCase()) this.problem(o.key, `names approver ${e.evidence.approver} but is countersigned by ${c.signer}`);
    if (a && c && (a.signer.toLowerCase() === c.signer.toLowerCase() || a.key === c.key)) this.problem(o.key, `is signed and countersigned by one person (${a.signer} ${a.key}, ${c.signer} ${c.key}): not dual control`);
    const proposal = b.byKey.get(BREAK_KEYS.proposal(b.id, e.version, o.digest));
    if (!proposal) this.problem(o.key, `was countersigned from a proposal (${BREAK_KEYS.proposal(b.id, e.version, o.digest)}) that is missing`);
    this.counts.countersigned += 1;
  }

  /** A run's event: bound to a published manifest that lists its digest for this break. */
  private checkRunEvent(b: BreakObjects, o: DecodedObject, e: BreakEvent): void {
    this.counts.by_run += 1;
    if (e.to_state !== 'OPEN' && e.to_state !== 'VERIFIED') { this.problem(o.key, `a run makes only OPEN and VERIFIED, not ${e.to_state}`); return; }
    if (!o.binding) { this.problem(o.key, 'is a run\'s event without the binding to its manifest'); return; }
    const m = this.manifestsByKey.get(o.binding.manifest_key);
    if (!m || m.sha256 !== o.binding.manifest_sha256) { this.problem(o.key, `is bound to ${o.binding.manifest_key} (${short(o.binding.manifest_sha256)}), which is not a published manifest of the chain`); return; }
    const listed = [
      ...m.manifest.breaks.filter((x) => x.break_id === b.id).map((x) => x.event?.sha256),
      ...(m.manifest.break_log?.verified ?? []).filter((x) => x.break_id === b.id).map((x) => x.event.sha256),
    ];
    if (!listed.includes(o.digest)) this.problem(o.key, `is bound to ${m.key}, which does not list its digest ${short(o.digest)} for break ${b.id}: the event was edited or forged`);
    if (e.run_id !== undefined && e.run_id !== m.manifest.run_id) this.problem(o.key, `names run ${e.run_id} but is bound to run ${m.manifest.run_id}'s manifest`);
    if (e.to_state === 'VERIFIED' && e.evidence.run_id !== m.manifest.run_id) this.problem(o.key, `names proving run ${e.evidence.run_id} but is bound to run ${m.manifest.run_id}'s manifest`);
  }

  private checkObservation(b: BreakObjects, o: DecodedObject): void {
    this.counts.observations += 1;
    const runId = o.key.slice(o.key.lastIndexOf('/') + 1, -'.json'.length);
    if (o.body.break_id !== b.id || o.body.run_id !== runId) { this.problem(o.key, `is not an observation of break ${b.id} by run ${runId}`); return; }
    if (o.format === 'legacy') { this.counts.legacy += 1; this.notice(o.key, 'legacy observation: written before observations were bound to their manifest'); return; }
    if (!o.binding) { this.problem(o.key, 'is an observation without the binding to its run\'s manifest'); return; }
    const m = this.manifestsByKey.get(o.binding.manifest_key);
    if (!m || m.sha256 !== o.binding.manifest_sha256 || m.manifest.run_id !== runId) { this.problem(o.key, `is bound to ${o.binding.manifest_key}, which is not run ${runId}'s published manifest`); return; }
    if (!m.manifest.breaks.some((x) => x.break_id === b.id && x.observation_sha256 === o.digest)) this.problem(o.key, `is not the observation ${m.key} lists for break ${b.id}: it was edited`);
  }

  private async checkProposal(b: BreakObjects, o: DecodedObject): Promise<void> {
    this.counts.proposals += 1;
    const e = o.body as unknown as BreakEvent;
    if (e.break_id !== b.id || o.key !== BREAK_KEYS.proposal(b.id, Number(e.version), o.digest)) { this.problem(o.key, `is not named by its version and digest as a proposal of break ${b.id}: it was edited or moved`); return; }
    if (e.dual_control !== true) this.problem(o.key, 'is a proposal of a step that is not dual control');
    if (e.proof === 'unsigned') { this.notice(o.key, 'unsigned proposal (signing.unsigned: true)'); return; }
    const actor = o.signatures.filter((s) => s.role === 'actor');
    if (actor.length !== 1) { this.problem(o.key, 'carries no signature of its proposer'); return; }
    const a = await this.signature(o.key, o.payload, actor[0], 'the proposer\'s signature', { breakId: b.id, version: Number(e.version), objectKey: o.key });
    if (a && a.signer.toLowerCase() !== String(e.actor).toLowerCase()) this.problem(o.key, `is proposed by ${e.actor} but signed by ${a.signer}`);
  }

  private async checkWithdrawal(b: BreakObjects, o: DecodedObject): Promise<void> {
    const proposalKey = o.key.replace(/\.withdrawal\.json$/, '.json');
    const p = b.byKey.get(proposalKey);
    if (!p) { this.problem(o.key, `withdraws ${proposalKey}, which is missing`); return; }
    if (o.body.proposal_sha256 !== p.digest || o.body.break_id !== b.id) { this.problem(o.key, `does not name the digest of ${proposalKey}`); return; }
    if (String(o.body.actor).toLowerCase() !== String(p.body.actor).toLowerCase()) this.problem(o.key, `is made by ${o.body.actor}, not by the proposer ${p.body.actor}`);
    if (o.body.proof === 'unsigned') return;
    const actor = o.signatures.filter((s) => s.role === 'actor');
    if (actor.length !== 1) { this.problem(o.key, 'carries no signature of its author'); return; }
    const a = await this.signature(o.key, o.payload, actor[0], 'the withdrawal\'s signature', { breakId: b.id, version: Number(p.body.version), objectKey: o.key });
    if (a && a.signer.toLowerCase() !== String(o.body.actor).toLowerCase()) this.problem(o.key, `is made by ${o.body.actor} but signed by ${a.signer}`);
  }

  /** A manifest's records of break heads, observations and its checkpoint, against the log. */
  private async checkManifest(m: ManifestRef): Promise<void> {
    const log = m.manifest.break_log;
    if (!log) return;
    const staged = this.src.stagedPlan ? await this.src.stagedPlan(m.manifest.run_id, log.plan.sha256) : undefined;
    const pending = new Set((staged ?? []).map((o) => `${o.key}\u0000${o.digest}`));
    const where = `${m.key}`;
    for (const x of [...m.manifest.breaks, ...log.verified]) {
      const b = this.breaks.get(x.break_id);
      if (!b) continue;
      if (x.head) this.checkHead(b, where, x.head, x.event ?? null, pending);
      const obs = (x as { observation_sha256?: string }).observation_sha256;
      if (obs) {
        const key = BREAK_KEYS.observation(x.break_id, m.manifest.run_id);
        const o = b.byKey.get(key);
        if (!o && pending.has(`${key}\u0000${obs}`)) this.notice(key, `planned by ${where}, not written yet: the next run rolls it forward`);
        else if (!o) this.problem(key, `is missing: ${where} lists its digest ${short(obs)}`);
        else if (o.digest !== obs) this.problem(key, `has digest ${short(o.digest)}, ${where} lists ${short(obs)}: it was edited`);
      }
    }
    await this.checkCheckpoint(m, pending, staged !== undefined);
  }

  /** The event the manifest says a break reached exists with that digest (or was superseded, or is pending). */
  private checkHead(b: BreakObjects, where: string, head: { version: number; sha256: string }, planned: { version: number; sha256: string; base_sha256: string | null } | null, pending: Set<string>): void {
    const key = BREAK_KEYS.event(b.id, head.version);
    const at = b.events[head.version - 1];
    const isPlanned = planned !== null && planned.version === head.version && planned.sha256 === head.sha256;
    if (!at) {
      if (isPlanned && pending.has(`${key}\u0000${head.sha256}`)) { this.notice(key, `planned by ${where}, not written yet: the next run rolls it forward`); return; }
      this.problem(key, `is missing: ${where} records break ${b.id} at version ${head.version} (${short(head.sha256)}), the log ends at version ${b.events.length}: an event was removed`);
      return;
    }
    if (at.digest === head.sha256) return;
    const prevOfFound = (at.body as { previous_event_sha256?: string | null }).previous_event_sha256 ?? null;
    if (isPlanned && prevOfFound === planned!.base_sha256) { this.notice(key, `holds ${short(at.digest)}: the event ${where} planned here (${short(head.sha256)}) was superseded by a transition that landed first`); return; }
    this.problem(key, `has digest ${short(at.digest)}, but ${where} records ${short(head.sha256)} for version ${head.version}: the event was replaced or edited`);
  }

  /** `unfinished`: the run's staged plan is still there (killed after its manifest): its checkpoint may be staged only. */
  private async checkCheckpoint(m: ManifestRef, pending: Set<string>, unfinished: boolean): Promise<void> {
    const log = m.manifest.break_log!;
    let bytes = await this.reader.get(log.heads.key);
    if (!bytes && unfinished) {
      bytes = await this.reader.get(`_staging/${m.manifest.run_id}/${log.heads.key}`);
      if (bytes) this.notice(log.heads.key, `staged by ${m.key}, not promoted yet: the next run rolls it forward`);
    }
    if (!bytes) { this.problem(log.heads.key, `is missing: ${m.key} lists the checkpoint of break heads`); return; }
    if (sha256Hex(bytes) !== log.heads.sha256) { this.problem(log.heads.key, `does not have the SHA-256 ${short(log.heads.sha256)} that ${m.key} lists: the checkpoint was edited`); return; }
    const doc = JSON.parse(bytes.toString('utf8')) as HeadsDocument;
    if (doc.run_id !== m.manifest.run_id || log.heads.key !== headsKey(m.manifest.run_id)) { this.problem(log.heads.key, `is not the checkpoint of run ${m.manifest.run_id}`); return; }
    const planned = new Map([...m.manifest.breaks, ...log.verified].filter((x) => x.event).map((x) => [x.break_id, x.event!]));
    for (const h of doc.heads) {
      const plannedHere = planned.get(h.break_id);
      const b = this.breaks.get(h.break_id) ?? (plannedHere?.version === 1 && (this.src.breakIds ?? [h.break_id]).includes(h.break_id) ? { id: h.break_id, events: [], byKey: new Map() } : undefined);
      if (!b) {
        if (this.src.breakIds === undefined) this.problem(`breaks/${h.break_id}/`, `is missing: checkpoint ${log.heads.key} records the break at version ${h.version}`);
        continue;
      }
      this.checkHead(b, log.heads.key, h, plannedHere ?? null, pending);
      for (const p of h.proposals) {
        const o = b.byKey.get(p.key);
        if (!o) this.problem(p.key, `is missing: checkpoint ${log.heads.key} records it (${short(p.sha256)})`);
        else if (o.digest !== p.sha256) this.problem(p.key, `has digest ${short(o.digest)}, checkpoint ${log.heads.key} records ${short(p.sha256)}`);
      }
    }
  }
}

/**
 * The check of one break's log (chain, signatures' bindings, heads) against the published
 * manifests, reading only that break's objects: what `breaks show` and the console's break page
 * report. Never throws for a bad log.
 */
export async function verifyOneBreakLog(reader: ObjectReader, manifests: readonly ManifestRef[], breakId: string, trusted: SignerRegistry | null = null): Promise<Pick<LogVerification, 'problems' | 'notices' | 'refused'>> {
  const scoped: ObjectReader = { get: (k: string) => reader.get(k), list: (p: string) => reader.list(p === 'breaks/' ? `breaks/${breakId}/` : p) };
  const r = await verifyBreakLogs(scoped, { manifests, breakIds: [breakId], trusted });
  return { problems: r.problems, notices: r.notices, refused: r.refused };
}
