/**
 * What people do to breaks (CONTRACT §5, issue 17), as a library the command line and other
 * front ends (a console) call: advance a break one step, propose a dual-control step, countersign
 * a proposal, withdraw one. In signed mode every object is signed by its author with their own key
 * (signing/), the author's name is the registry's name of that key, and the registry version is
 * kept in the store; in unsigned mode (the configuration says `signing.unsigned: true`) names are
 * taken as given and nothing is signed. Every object is written with one write-once put, so a
 * version is never claimed unsigned and two writers of one version cannot both land (exit 6).
 */
import { registryPath, signerMay, type LoadedConfig } from '../config/config.js';
import { ConfigError, TransitionRuleError } from '../core/errors.js';
import { archiveRegistry, archivedRegistry, loadRegistry, type SignerRegistry } from '../signing/registry.js';
import { loadSigningKey, type KeySource } from '../signing/signing-key.js';
import { BREAK_NAMESPACE, signPayload, signerOf, verifyRecord, type SignatureRecord, type Signer } from '../signing/signatures.js';
import { MANIFEST_KEY } from '../store/manifests.js';
import type { ObjectStore } from '../store/object-store.js';
import { BREAK_KEYS, FORMATS, payloadDigest, payloadOf } from './break-objects.js';
import { BreakStore, eventOf, type BreakEvent, type BreakRecord, type StoredProposal } from './break-store.js';
import {
  TRANSITION_RULES, judgeApproval, planTransition, proposalStatus,
  type EvidenceRun, type TransitionPolicy, type TransitionRequest, type TransitionRule,
} from './transitions.js';

/** Where people's actions happen and under which rules: the store, the configuration, the signer (null unsigned). */
export interface ActionContext {
  readonly store: ObjectStore;
  readonly config: LoadedConfig;
  /** The person's key and the registry in force; null in unsigned mode. */
  readonly signer: Signer | null;
}

/**
 * The action context of a configuration: in unsigned mode no key is read; otherwise the
 * configured registry is loaded (ConfigError when none is configured or it is invalid), checked
 * against the roles, archived in the store, and the key of `keySource` is loaded (SignatureError
 * when it cannot be). `keySource` null loads no key (reading only).
 */
export async function actionContext(store: ObjectStore, config: LoadedConfig, keySource: KeySource | null): Promise<ActionContext> {
  if (config.config.signing.unsigned) return { store, config, signer: null };
  const registry = await configuredRegistry(config);
  if (!keySource) return { store, config, signer: null };
  const key = await loadSigningKey(keySource);
  await refuseSupersededRegistry(store, registry);
  await archiveRegistry(store, registry);
  return { store, config, signer: { key, registry } };
}

/**
 * Refuses to sign under a registry version that a later run superseded: the newest published run
 * that recorded a registry used another, and an earlier run recorded this one. A removed (revoked)
 * key would otherwise keep signing with a copy of the old configuration, and manifest verify
 * refuses such a signature afterwards (registry-timeline.ts). A version no run recorded yet (a
 * rotation ahead of the runs) passes. Throws ConfigError naming both versions.
 */
async function refuseSupersededRegistry(store: ObjectStore, registry: SignerRegistry): Promise<void> {
  // Newest first: the common case (the configuration's registry is the newest recorded) reads one manifest.
  let newest: { key: string; sha: string } | undefined;
  for (const key of (await store.list('manifests')).filter((k) => MANIFEST_KEY.test(k)).sort().reverse()) {
    const bytes = await store.get(key);
    let sha: unknown;
    try { sha = bytes ? (JSON.parse(bytes.toString('utf8')) as { break_log?: { signing?: { registry_sha256?: unknown } } }).break_log?.signing?.registry_sha256 : undefined; } catch { sha = undefined; }
    if (typeof sha !== 'string') continue;
    newest ??= { key, sha };
    if (sha !== registry.sha256) continue;
    if (newest.sha === sha) return;
    throw new ConfigError(`the signer registry ${registry.source} (${registry.sha256.slice(0, 12)}…) is an older version than the one the store's newest run recorded (${newest.sha.slice(0, 12)}… in ${newest.key}): a key it gives may have been revoked since; sign with the configuration of the current registry`, registry.source);
  }
}

/** The registry the configuration names, checked against its roles. ConfigError when there is none or it is invalid. */
export async function configuredRegistry(config: LoadedConfig): Promise<SignerRegistry> {
  const path = registryPath(config);
  if (!path) {
    throw new ConfigError(`break transitions are signed: the configuration${config.path ? ` ${config.path}` : ' (none given: --config FILE)'} names no signer registry (signing.registry); to run without signatures say signing.unsigned: true`, config.path);
  }
  const registry = await loadRegistry(path);
  const unknown = Object.keys(config.config.signing.roles ?? {}).filter((n) => !registry.signer(n));
  if (unknown.length) throw new ConfigError(`configuration ${config.path}: signing.roles names ${unknown.join(', ')}, not signers of ${path}`, config.path, `signing.roles.${unknown[0]}`);
  return registry;
}

/** The transition policy of a context (signerName from the registry, roles from the configuration). */
export function policyOf(ctx: Pick<ActionContext, 'config' | 'signer'>): TransitionPolicy {
  const cfg = ctx.config.config;
  const registry = ctx.signer?.registry;
  return {
    proof: ctx.signer ? 'signed' : 'unsigned',
    signerName: registry ? (n) => registry.signer(n) : undefined,
    may: cfg.signing.roles ? (signer, part, controlId) => signerMay(cfg, signer, part, controlId) : undefined,
    candidates: registry ? (part, controlId) => registry.signers().filter((n) => registry.entries.some((e) => e.signer === n && registry.allows(e, BREAK_NAMESPACE)) && (!cfg.signing.roles || signerMay(cfg, n, part, controlId))) : undefined,
    closedNeedsApproval: cfg.signing.closed_needs_approval,
    configSha256: ctx.config.sha256,
  };
}

const refuse = (rule: TransitionRule, detail: string): never => {
  throw new TransitionRuleError(rule, `${TRANSITION_RULES[rule]} (${detail})`);
};

/** The person acting: the registry's name of the key (checked against `claimed`), or `claimed` itself unsigned. */
function actorOf(ctx: ActionContext, claimed: string | undefined): { name: string; key: string | null } {
  if (ctx.signer) {
    const entry = signerOf(ctx.signer.key.publicKey, ctx.signer.registry, BREAK_NAMESPACE, claimed);
    return { name: entry.signer, key: ctx.signer.key.publicKey.fingerprint };
  }
  if (!claimed?.trim()) throw new ConfigError('--actor NAME is required: who makes this transition (unsigned mode takes names as given)');
  return { name: claimed.trim(), key: null };
}

async function sign(ctx: ActionContext, payload: string, role: SignatureRecord['role']): Promise<SignatureRecord[]> {
  return ctx.signer ? [await signPayload(payload, ctx.signer, { role })] : [];
}

/** What an action wrote: the event landed, or the proposal waiting for its countersignature. */
export interface ActionResult {
  readonly kind: 'event' | 'proposal';
  readonly event: BreakEvent;
  readonly key: string;
  readonly digest: string;
}

/**
 * Moves `rec` one step as `req` asks (planTransition's rules). A dual-control step is written as a
 * signed proposal for the approver it names; any other step lands as a signed event. Throws
 * TransitionRuleError or SignatureError (exit 2, nothing written), ConcurrencyError (exit 6).
 */
export async function advanceBreak(ctx: ActionContext, rec: BreakRecord, req: TransitionRequest, evidenceRun: EvidenceRun | null | undefined, now = new Date()): Promise<ActionResult> {
  const actor = actorOf(ctx, req.actor);
  const event = planTransition(rec, { ...req, actor: actor.name }, evidenceRun, now, policyOf(ctx));
  const payload = payloadOf(event);
  const object = { payload, signatures: await sign(ctx, payload, 'actor') };
  const bs = new BreakStore(ctx.store);
  const digest = payloadDigest(payload);
  if (event.dual_control) return { kind: 'proposal', event, digest, key: await bs.putProposal(rec.break_id, event.version, digest, object) };
  await bs.putEvent(rec.break_id, event.version, object);
  return { kind: 'event', event, digest, key: BREAK_KEYS.event(rec.break_id, event.version) };
}

/** The proposal of `version` (narrowed by a digest prefix), preferring the ones still pending. */
export function selectProposal(rec: BreakRecord, version: number, digestPrefix: string | undefined, maxAgeS: number, now = new Date()): StoredProposal {
  const all = rec.proposals.filter((p) => p.event.version === version && (!digestPrefix || p.object.digest.startsWith(digestPrefix.trim().toLowerCase())));
  if (all.length === 0) return refuse('PROPOSAL_UNKNOWN', `no proposal for version ${version}${digestPrefix ? ` matching ${digestPrefix}` : ''}; the break is ${rec.state} at version ${rec.version}`);
  if (all.length === 1) return all[0];
  const pending = all.filter((p) => proposalStatus(rec, p, maxAgeS, now) === 'pending');
  if (pending.length === 1) return pending[0];
  return refuse('PROPOSAL_AMBIGUOUS', `${(pending.length ? pending : all).map((p) => p.object.digest.slice(0, 16)).join(', ')}`);
}

/**
 * Checks the proposer's signature against the registry it was made under (kept in the store) and
 * that the proposal is a dual-control event of this break. Throws SignatureError or TransitionRuleError.
 */
async function checkProposal(ctx: ActionContext, rec: BreakRecord, p: StoredProposal): Promise<void> {
  const e = p.event;
  if (e.break_id !== rec.break_id || e.dual_control !== true || p.object.key !== BREAK_KEYS.proposal(rec.break_id, e.version, p.object.digest)) {
    refuse('PROPOSAL_UNKNOWN', `${p.object.key} is not a dual-control proposal of ${rec.break_id}`);
  }
  if (e.proof !== 'signed') {
    if (ctx.signer) refuse('PROPOSAL_UNKNOWN', `${p.object.key} is unsigned, and this store's transitions are signed`);
    return;
  }
  const sig = p.object.signatures.find((s) => s.role === 'actor');
  if (!sig) return refuse('PROPOSAL_UNKNOWN', `${p.object.key} carries no signature of its proposer`);
  const registry = await archivedRegistry(ctx.store, sig.registry_sha256);
  if (!registry) throw new ConfigError(`the registry ${sig.registry_sha256} that signed ${p.object.key} is not kept in ${ctx.store.location} (signers/)`);
  const ok = verifyRecord(p.object.payload, sig, registry);
  if (ok.signer.toLowerCase() !== e.actor.toLowerCase()) refuse('PROPOSAL_UNKNOWN', `${p.object.key} is proposed by ${e.actor} but signed by ${ok.signer}`);
}

/**
 * Countersigns the proposal of `version` (judgeApproval's rules): the event lands with the
 * proposer's and the approver's signatures over the same payload. Throws TransitionRuleError or
 * SignatureError (exit 2, nothing written), ConcurrencyError (exit 6) when another approval of this
 * proposal landed first, or any event took the version between the read of `rec` and the write.
 */
export async function approveProposal(ctx: ActionContext, rec: BreakRecord, version: number, opts: { proposal?: string; actor?: string }, now = new Date()): Promise<ActionResult> {
  const maxAge = ctx.config.config.signing.proposal_max_age_s;
  const p = selectProposal(rec, version, opts.proposal, maxAge, now);
  await checkProposal(ctx, rec, p);
  const approver = actorOf(ctx, opts.actor);
  judgeApproval(rec, p, approver, policyOf(ctx), maxAge, now);
  const signatures = [...p.object.signatures, ...(await sign(ctx, p.object.payload, 'approver'))];
  const object = { payload: p.object.payload, signatures };
  await new BreakStore(ctx.store).putEvent(rec.break_id, version, object);
  return { kind: 'event', event: eventOf({ ...p.object, signatures, key: BREAK_KEYS.event(rec.break_id, version) }), key: BREAK_KEYS.event(rec.break_id, version), digest: p.object.digest };
}

/**
 * Withdraws the proposal of `version`, signed by its proposer, while it can still land (pending or
 * expired). Throws TransitionRuleError (PROPOSAL_NOT_CURRENT when it landed or the break moved on,
 * PROPOSAL_WITHDRAWN, WITHDRAW_BY_PROPOSER), SignatureError, ConcurrencyError (withdrawn before).
 */
export async function withdrawProposal(ctx: ActionContext, rec: BreakRecord, version: number, opts: { proposal?: string; actor?: string; note?: string }, now = new Date()): Promise<{ key: string; proposal: StoredProposal }> {
  const p = selectProposal(rec, version, opts.proposal, ctx.config.config.signing.proposal_max_age_s, now);
  const actor = actorOf(ctx, opts.actor);
  if (actor.name.toLowerCase() !== p.event.actor.toLowerCase()) refuse('WITHDRAW_BY_PROPOSER', `${p.event.actor} proposed it, not ${actor.name}`);
  const status = proposalStatus(rec, p, ctx.config.config.signing.proposal_max_age_s, now);
  if (status === 'approved') refuse('PROPOSAL_NOT_CURRENT', `it landed as version ${version} and cannot be withdrawn; the break is ${rec.state} at version ${rec.version}`);
  if (status === 'superseded') refuse('PROPOSAL_NOT_CURRENT', `it is for version ${version}; the break is ${rec.state} at version ${rec.version}`);
  if (p.withdrawal) refuse('PROPOSAL_WITHDRAWN', `by ${p.withdrawal.actor} at ${p.withdrawal.at}`);
  const payload = payloadOf({
    format: FORMATS.withdrawal, break_id: rec.break_id, version, proposal_sha256: p.object.digest, actor: actor.name, at: now.toISOString(),
    proof: ctx.signer ? 'signed' : 'unsigned', ...(opts.note?.trim() ? { note: opts.note.trim() } : {}),
  });
  const key = await new BreakStore(ctx.store).putWithdrawal(rec.break_id, version, p.object.digest, { payload, signatures: await sign(ctx, payload, 'actor') });
  return { key, proposal: p };
}
