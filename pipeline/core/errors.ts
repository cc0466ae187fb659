/**
 * The typed error hierarchy of reckon. Expected business outcomes (breaks, NOT_READY) are
 * results, not exceptions; these classes are for runs and commands that cannot produce a result.
 * Each class maps to its exit code in one table, core/outcome.ts (`exitCodeOf`), and nowhere else.
 */

/** Base class of every reckon error; its exit code is core/outcome.ts's `exitCodeOf`. */
export abstract class ReckonError extends Error {}

/** Bad command line or configuration (exit 2). `file` and `path` locate the problem. */
export class ConfigError extends ReckonError {
  constructor(message: string, readonly file?: string, readonly path?: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A rule refused a break transition (exit 2, CONTRACT §5): `rule` names it. */
export class TransitionRuleError extends ReckonError {
  constructor(readonly rule: string, message: string) {
    super(`${rule}: ${message}`);
    this.name = 'TransitionRuleError';
  }
}

/**
 * A signature or signing key was refused (exit 2, nothing written): `rule` names why — an unknown
 * key, a key of another signer, a signature over other bytes, for another namespace or truncated
 * (pipeline/signing/). The message never holds key material.
 */
export class SignatureError extends ReckonError {
  constructor(readonly rule: string, message: string) {
    super(`${rule}: ${message}`);
    this.name = 'SignatureError';
  }
}

/**
 * The store cannot be used as it is (exit 2, like a deployment mistake): a folder that cannot be
 * listed, a store that is read-only or full, an object in it that cannot be read or does not match
 * what was published. `path` names the folder, key or object; `reason` is a stable code
 * (`list_failed`, `read_only`, `no_space`, `not_permitted`, `write_failed`, `read_failed`,
 * `corrupt_object`, `unverifiable_head`). Never a reason to treat the store as empty.
 */
export class StoreError extends ReckonError {
  readonly path: string;
  readonly reason: string;
  constructor(message: string, opts: { path: string; reason: string; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'StoreError';
    this.path = opts.path;
    this.reason = opts.reason;
  }
}

/** Where an input problem is: dataset, file, row (1-based), column and the rule it breaks. */
export interface InputProblem {
  readonly message: string;
  readonly dataset?: string;
  readonly file?: string;
  readonly row?: number;
  readonly column?: string;
  readonly rule?: string;
}

/** Input that cannot be read at all or totalled exactly (exit 3), e.g. an unreadable sources root. */
export class InputError extends ReckonError {
  readonly dataset?: string;
  readonly file?: string;
  readonly row?: number;
  readonly column?: string;
  readonly rule?: string;
  constructor(problem: InputProblem) {
    super(problem.message);
    this.name = 'InputError';
    this.dataset = problem.dataset;
    this.file = problem.file;
    this.row = problem.row;
    this.column = problem.column;
    this.rule = problem.rule;
  }
}

/** Another run holds the lock (`lock`, exit 5) or a transition lost a race (`version`, exit 6). */
export class ConcurrencyError extends ReckonError {
  constructor(message: string, readonly kind: 'lock' | 'version') {
    super(message);
    this.name = 'ConcurrencyError';
  }
}

/** A broken invariant inside reckon (exit 70): stops the run. */
export class InternalError extends ReckonError {
  constructor(message: string) {
    super(message);
    this.name = 'InternalError';
  }
}

/**
 * A manifest of a version this reckon does not read (exit 70): names the version `expected` and
 * the `found` value of `manifest_version` (STYLE: a reader rejects an unknown version, never guesses).
 */
export class ManifestVersionError extends ReckonError {
  constructor(readonly expected: number, readonly found: unknown) {
    super(`unknown manifest version ${JSON.stringify(found) ?? 'undefined'}; this reckon reads version ${expected}`);
    this.name = 'ManifestVersionError';
  }
}

/** The store no longer matches what it recorded, so no verifiable evidence bag can be made (exit 1). */
export class EvidenceIntegrityError extends ReckonError {
  constructor(message: string) {
    super(message);
    this.name = 'EvidenceIntegrityError';
  }
}

/** An Athena query that failed or was cancelled (exit 2), or ran out of time and was stopped (`DEADLINE`, exit 70). */
export class AthenaQueryError extends ReckonError {
  constructor(message: string, readonly queryExecutionId: string | undefined, readonly state: 'FAILED' | 'CANCELLED' | 'DEADLINE') {
    super(message);
    this.name = 'AthenaQueryError';
  }
}

/**
 * The run was stopped by a signal (SIGINT: exit 130, SIGTERM: exit 143; 128 + the signal's number,
 * outside CONTRACT §7's codes). The message says what the run had published and what to do
 * (core/interrupt.ts, run/run-window.ts).
 */
export class InterruptedError extends ReckonError {
  constructor(readonly signal: 'SIGINT' | 'SIGTERM', message: string) {
    super(message);
    this.name = 'InterruptedError';
  }
}

/** Asserts an internal invariant; throws InternalError (exit 70) when it does not hold. */
export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InternalError(`invariant broken: ${message}`);
}

/**
 * True when `e` is DuckDB running out of its memory limit (or of spill space): a property of the
 * run's resources, never of an input file, so it is not quarantined as one.
 */
export function isOutOfMemory(e: unknown): boolean {
  const message = e instanceof Error ? e.message : String(e);
  return !(e instanceof ReckonError) && /Out of Memory Error|could not allocate block|failed to pin block/i.test(message);
}
