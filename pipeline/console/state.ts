/**
 * What one console process holds (issue 22): the store, the configuration and control definitions,
 * the action context (the operator's key, or none: read-only), the break index, the published
 * manifests and the store's verification result. Built once at start; the index and the
 * manifests are refreshed on change, the verification on start and on request.
 */
import { actionContext, configuredRegistry, type ActionContext } from '../breaks/actions.js';
import { verifyOneBreakLog, type LogFinding, type RefusedSignature } from '../breaks/verify-log.js';
import { registryPath, type LoadedConfig } from '../config/config.js';
import type { ControlDefinition } from '../controls/definitions.js';
import { verifyManifests, type VerifyProblem } from '../publish/verify-chain.js';
import { type SignerRegistry } from '../signing/registry.js';
import { BREAK_NAMESPACE, signerOf } from '../signing/signatures.js';
import type { KeySource } from '../signing/signing-key.js';
import { listManifests } from '../store/manifests.js';
import type { ObjectStore } from '../store/object-store.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';
import { BreakIndex } from './read-model.js';

/** The store's verification (`reckon manifest verify`'s check), run at start and on request. */
export interface StoreVerification {
  status: 'running' | 'ok' | 'failed';
  checked: number;
  problems: VerifyProblem[];
  /** Inputs changed in their source folders since their runs: noted, never a reason to refuse actions. */
  inputsChanged?: VerifyProblem[];
  /** Manifests signed by the pipeline and not signed (an unsigned one's consistent rewrite cannot be detected). */
  signed?: number;
  unsigned?: number;
  notices: number;
  ms: number;
  at: Date | null;
}

/** A published manifest as the console lists it. */
export interface ManifestEntry {
  readonly key: string;
  readonly sha256: string;
  readonly manifest: ManifestV1;
}

/** Everything a console process serves from. */
export interface ConsoleState {
  readonly store: ObjectStore;
  readonly config: LoadedConfig;
  readonly controls: readonly ControlDefinition[];
  readonly act: ActionContext;
  /** The registry in force (signed mode), for the owner and approver choices; null unsigned. */
  readonly registry: SignerRegistry | null;
  /** Who the console acts as, or null. */
  readonly actor: { name: string; key: string } | null;
  /** Why the console does not write, or null. */
  readonly readOnly: string | null;
  readonly index: BreakIndex;
  manifests: ManifestEntry[];
  verification: StoreVerification;
}

/** Options of `openConsoleState`. */
export interface ConsoleOptions {
  readonly store: ObjectStore;
  readonly config: LoadedConfig;
  readonly controls: readonly ControlDefinition[];
  /** The operator's key; null starts a read-only console. */
  readonly key: KeySource | null;
  /** Unsigned mode only (signing.unsigned: true): the name actions are made under. */
  readonly actorName?: string;
}

/**
 * Loads the key and registry (SignatureError or ConfigError when they cannot be used), reads every
 * break and manifest, and starts the store's verification in the background. A configuration that
 * names no registry (signed mode) gives a read-only console whose `readOnly` says how to act.
 */
export async function openConsoleState(o: ConsoleOptions): Promise<ConsoleState> {
  const unsigned = o.config.config.signing.unsigned;
  // Signed transitions with no registry to check them against: nothing can be signed, but every page can be read.
  const noRegistry = !unsigned && !registryPath(o.config);
  const act: ActionContext = noRegistry ? { store: o.store, config: o.config, signer: null } : await actionContext(o.store, o.config, unsigned ? null : o.key);
  const registry = unsigned || noRegistry ? null : await configuredRegistry(o.config);
  let actor: ConsoleState['actor'] = null;
  if (act.signer) actor = { name: signerOf(act.signer.key.publicKey, act.signer.registry, BREAK_NAMESPACE).signer, key: act.signer.key.publicKey.fingerprint };
  else if (unsigned && o.actorName?.trim()) actor = { name: o.actorName.trim(), key: 'unsigned' };
  const readOnly = actor ? null : noRegistry ? noRegistryReason(o.config)
    : unsigned ? 'started without an actor name (unsigned mode: --actor NAME)' : 'started without a signing key (--key FILE, or RECKON_SIGNING_KEY_FILE)';
  const index = new BreakIndex(o.store, o.config, o.controls);
  const manifests = await listManifests(o.store);
  await index.load(manifests);
  const state: ConsoleState = {
    store: o.store, config: o.config, controls: o.controls, act, registry, actor, readOnly, index, manifests,
    verification: { status: 'running', checked: 0, problems: [], notices: 0, ms: 0, at: null },
  };
  return state;
}

/** Why a console whose configuration names no signer registry cannot act, and how to let it. */
function noRegistryReason(config: LoadedConfig): string {
  const which = config.path ? `the configuration ${config.path}` : 'no configuration was given (--config FILE), so it';
  return `break transitions are signed and ${which} names no signer registry (signing.registry); to act, start the console with --config FILE naming one and --key FILE (the demo: --config fixtures/demo/reckon.yaml --key fixtures/demo/keys/olivia), or say signing.unsigned: true in the configuration and give --actor NAME`;
}

/** Runs the store's verification and records it in `state` (the promise settles when done). */
export async function verifyStore(state: ConsoleState): Promise<void> {
  const t0 = Date.now();
  state.verification = { ...state.verification, status: 'running' };
  const { checked, problems, breaks, inputsChanged, signed, unsigned } = await verifyManifests(state.store);
  state.verification = { status: problems.length ? 'failed' : 'ok', checked, problems, inputsChanged, signed, unsigned, notices: breaks.notices.length, ms: Date.now() - t0, at: new Date() };
}

/**
 * Takes in what others wrote: the manifests published since the last look (read once each: a
 * published manifest never changes) and, through their checkpoints, the breaks they touched
 * (BreakIndex.refreshFromRuns); with `sweep`, also every break whose objects changed
 * (BreakIndex.refreshChanged: lists the store's break keys, for a person's change between runs).
 * Returns the ids read again.
 */
export async function refreshState(state: ConsoleState, sweep = true): Promise<string[]> {
  state.manifests = await listManifests(state.store, state.manifests);
  const fromRuns = await state.index.refreshFromRuns(state.manifests);
  return sweep ? [...fromRuns, ...await state.index.refreshChanged(state.manifests)] : fromRuns;
}

export { checkSignatures, trustedSigners, withLogRefusals, type SignatureCheck } from '../breaks/check-signatures.js';

/** The break-log check of one break (chain, signatures, bindings, heads) against the published manifests. */
export async function verifyOneBreak(state: ConsoleState, breakId: string): Promise<{ problems: LogFinding[]; notices: LogFinding[]; refused: RefusedSignature[] }> {
  return verifyOneBreakLog(state.store, state.manifests, breakId);
}
