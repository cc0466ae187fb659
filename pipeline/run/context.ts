/**
 * What the phases of a run share (run-window.ts): the request, the run's identity, its store,
 * leases and scratch folder, the open DuckDB, timings, and the typed parts each phase hands to the
 * next. Phases are functions of a RunContext and the parts before them; only `open`, `timings`
 * and `progress` change as the run goes.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ControlResult, EvaluationSource, Trigger } from '../../manifests/v1/schema.js';
import type { LoadedConfig } from '../config/config.js';
import type { ControlDefinition } from '../controls/definitions.js';
import type { ControlEvaluation } from '../controls/evaluation.js';
import type { ControlSet } from '../controls/selection.js';
import type { FaultPoints } from '../core/fault.js';
import type { RunLogger } from '../core/log.js';
import type { RunOutcome } from '../core/outcome.js';
import type { Settings } from '../core/settings.js';
import type { Window } from '../contract/window.js';
import type { PlannedObject } from '../breaks/break-plan.js';
import type { BreakOutcome, VerifiedOutcome } from '../breaks/run-breaks.js';
import type { SignerRegistry } from '../signing/registry.js';
import type { PipelineSigning } from '../publish/pipeline-key.js';
import type { ProgressReporter } from '../core/progress.js';
import type { AlertRequest } from '../alerts/deliver.js';
import type { Engine } from '../load/engine.js';
import type { DatasetLoad, LoadResult } from '../load/load.js';
import type { Lease } from '../publish/lease.js';
import type { ControlFile } from '../publish/manifest-document.js';
import type { LocatedSources } from '../sources/locate.js';
import type { PreparedSources } from '../sources/source-plan.js';
import type { ObjectStore } from '../store/object-store.js';

/** What `reckon run` was asked to do. */
export interface RunRequest {
  readonly window: Window;
  /** The control definitions, loaded once for the run: every one, and the selection to evaluate (controls.ts selectControls). */
  readonly controls: ControlSet;
  readonly sources: string;
  readonly store: string;
  readonly config: LoadedConfig;
  readonly trigger: Trigger;
  readonly reason: string | null;
  readonly rerunOf: string | null;
  /** Settings parsed from the environment at the command line's entry (core/settings.ts). */
  readonly settings: Settings;
  /** The signer registry the configuration names (null: none, or `signing.unsigned`): recorded in the manifest and kept in the store. */
  readonly signers?: SignerRegistry | null;
  /** The pipeline's key that signs the manifest (publish/pipeline-key.ts); absent: unsigned, no registry. */
  readonly pipeline?: PipelineSigning;
  /** Logger (stderr only); defaults to one that drops everything. */
  readonly logger?: RunLogger;
  /** Crash-test pauses (core/fault.ts); default none. */
  readonly faults?: FaultPoints;
  /** Aborted (reason `SIGINT` or `SIGTERM`) when the run is to stop at its next safe point (core/interrupt.ts); default never. */
  readonly interrupt?: AbortSignal;
  /** The environment a sources file's connections read (PG*, url_env: the driver's, not reckon's settings); default the process's. */
  readonly env?: NodeJS.ProcessEnv;
  /** Alerts after publication (phase-alerts.ts); default off. */
  readonly alerts?: AlertRequest;
  /** Progress on stderr while loading and evaluating (core/progress.ts); default none. */
  readonly progress?: ProgressReporter;
  /** When the run's time started, as the command line measured it; without it the wall time starts at runWindow. */
  readonly clock?: RunClock;
}

/**
 * The time before `runWindow` was called (cli/run-command.ts), so that a manifest's phases add up
 * to the run's wall time: `originMs` is the `performance.now()` at which the wall time starts (0
 * for the process's start), `before` the phases measured before the run (`startup_ms`: Node and
 * the CLI's entry module; `command_ms`: the run command's modules, options, controls, configuration).
 */
export interface RunClock {
  readonly originMs: number;
  readonly before: Readonly<PhaseTimings>;
}

/** Milliseconds spent per phase, recorded in the manifest. */
export type PhaseTimings = Record<string, number>;

/** What a run is doing in DuckDB, for an out-of-memory report. */
export interface Progress { doing: string }

/** A run in progress: set up by the prepare phase, released at the end whatever happened. */
export interface RunContext {
  readonly req: RunRequest;
  readonly runId: string;
  readonly startedAt: Date;
  readonly logger: RunLogger;
  /** The request's fault points; after a pause at a safe one, an interrupted run stops there (phase-prepare.ts). */
  readonly fault: FaultPoints;
  /** The request's interrupt (never aborted when it has none). */
  readonly interrupt: AbortSignal;
  readonly store: ObjectStore;
  /** The sources, checked (a sources file's databases connected) before the leases; closed at release. */
  readonly sources: PreparedSources;
  readonly leases: readonly Lease[];
  /** The run's scratch folder (DuckDB files, links, staged outputs); removed at release. */
  readonly scratch: string;
  /** The delivery and results caches' folder, checked to be the run's user's own (load/cache-folder.ts); undefined: no cache this run. */
  readonly cacheDir?: string;
  /** A manifest note on the cache folder: why it was not used, or that it was made private. */
  readonly cacheNote?: string;
  readonly timings: PhaseTimings;
  /** The `performance.now()` at which the run's wall time (`timings.wall_ms`) starts. */
  readonly originMs: number;
  readonly progress: Progress;
  /** The DuckDB the load phase opened; closed (and unset) at release. */
  readonly open: { engine?: Engine; conn?: DuckDBConnection };
}

/**
 * A run's use of the results cache (results-cache.ts ResultsReuse): whether every control's
 * evaluation is reused, each control's evaluation (kept or computed now by `run`), keeping a miss's
 * evaluation with the run's load, and what the manifest says about it.
 */
export interface EvaluationReuse {
  readonly hit: boolean;
  evaluate(def: ControlDefinition, run: () => Promise<ControlEvaluation>): Promise<ControlEvaluation>;
  finish(loaded: LoadResult): Promise<void>;
  sources(): Record<string, EvaluationSource>;
  notes(): string[];
}

/** The load phase's result: the located sources, what was loaded, by dataset, and the side files' hashes. */
export interface LoadedInputs {
  readonly located: LocatedSources;
  readonly loaded: LoadResult;
  readonly loads: ReadonlyMap<string, DatasetLoad>;
  readonly controlFiles: Readonly<Record<string, readonly ControlFile[]>>;
  readonly engine: Engine;
  readonly conn: DuckDBConnection;
  /** The results cache as the load phase opened it (keyed by the load's inputs, before loading); absent: the evaluate phase opens it. */
  readonly reuse?: EvaluationReuse;
  /** Manifest notes of the load: entries at a source root that are no dataset's folder (sources/files.ts strayRootEntries). */
  readonly notes: readonly string[];
}

/** The evaluate phase's result: each selected control's provisional result, and the shared SQL it ran (sql/common). */
export interface EvaluatedControls {
  readonly results: readonly ControlResult[];
  readonly commonSql: readonly { path: string; text: string; sha256: string }[];
  /** Manifest notes about the evaluation: controls computed by the wide fallback, totals beyond DECIMAL(38), the results cache. */
  readonly notes: readonly string[];
  /** Per control, whether it was evaluated now or its earlier evaluation reused (results-cache.ts). */
  readonly evaluation: Readonly<Record<string, EvaluationSource>>;
}

/** The run's staged break plan (breaks/break-plan.ts): its objects, the verifications, its SHA-256 and counts. */
export interface StagedPlan {
  readonly objects: readonly PlannedObject[];
  readonly verified: readonly VerifiedOutcome[];
  readonly sha256: string;
  readonly events: number;
  readonly observations: number;
}

/** The breaks phase's result: final control results, what the run does to breaks, its outcome and results digest. */
export interface SettledResults {
  readonly results: readonly ControlResult[];
  readonly breaks: readonly BreakOutcome[];
  readonly outcome: RunOutcome;
  readonly resultsDigest: string;
  readonly plan: StagedPlan;
  /** The staged checkpoint of every break's head: final key, SHA-256, how many breaks. */
  readonly heads: { readonly key: string; readonly sha256: string; readonly breaks: number };
}

/** Runs `fn`, recording its duration in `timings[phase]` (ms) even when it throws. */
export async function timed<T>(timings: PhaseTimings, phase: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try { return await fn(); } finally { timings[phase] = Math.round(performance.now() - t0); }
}
