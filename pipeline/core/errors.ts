/**
 * The typed error hierarchy of reckon and the one place where errors and control statuses map
 * to the exit codes of CONTRACT §7. Expected business outcomes (breaks, NOT_READY) are results,
 * not exceptions; these classes are for runs that cannot produce a result.
 */

/** Exit codes of CONTRACT §7. Published values; never renumbered. */
export const ExitCode = {
  CLEAN: 0,
  BREAKS: 1,
  USAGE: 2,
  INCOMPLETE: 3,
  NOT_READY: 4,
  LOCKED: 5,
  TRANSITION_LOST: 6,
  INTERNAL: 70,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Base class: every reckon error names the exit code it maps to. */
export abstract class ReckonError extends Error {
  abstract readonly exitCode: ExitCode;
}

/** Bad command line or configuration (exit 2). `file` and `path` locate the problem. */
export class ConfigError extends ReckonError {
  readonly exitCode = ExitCode.USAGE;
  constructor(message: string, readonly file?: string, readonly path?: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A rule refused a break transition (exit 2, CONTRACT §5): `rule` names it. */
export class TransitionRuleError extends ReckonError {
  readonly exitCode = ExitCode.USAGE;
  constructor(readonly rule: string, message: string) {
    super(`${rule}: ${message}`);
    this.name = 'TransitionRuleError';
  }
}

/** Input that cannot be read at all (exit 3), e.g. an unreadable sources root. */
export class InputError extends ReckonError {
  readonly exitCode = ExitCode.INCOMPLETE;
  constructor(
    message: string,
    readonly dataset?: string,
    readonly file?: string,
    readonly row?: number,
    readonly column?: string,
    readonly rule?: string,
  ) {
    super(message);
    this.name = 'InputError';
  }
}

/** The window cannot be closed yet (exit 4). */
export class ReadinessError extends ReckonError {
  readonly exitCode = ExitCode.NOT_READY;
  constructor(message: string) {
    super(message);
    this.name = 'ReadinessError';
  }
}

/** Another run holds the lock (exit 5) or a transition lost a race (exit 6). */
export class ConcurrencyError extends ReckonError {
  readonly exitCode: ExitCode;
  constructor(message: string, readonly kind: 'lock' | 'version') {
    super(message);
    this.name = 'ConcurrencyError';
    this.exitCode = kind === 'lock' ? ExitCode.LOCKED : ExitCode.TRANSITION_LOST;
  }
}

/** A broken invariant inside reckon (exit 70): stops the run. */
export class InternalError extends ReckonError {
  readonly exitCode = ExitCode.INTERNAL;
  constructor(message: string) {
    super(message);
    this.name = 'InternalError';
  }
}

/** Maps any thrown value to its exit code; unknown errors are internal (70). */
export function exitCodeOf(err: unknown): ExitCode {
  return err instanceof ReckonError ? err.exitCode : ExitCode.INTERNAL;
}

/** Control statuses of CONTRACT §7 and their exit codes. */
export const ControlStatus = ['CLEAN', 'BREAKS', 'NOT_READY', 'INCOMPLETE'] as const;
export type ControlStatus = (typeof ControlStatus)[number];
const STATUS_EXIT: Record<ControlStatus, ExitCode> = { CLEAN: 0, BREAKS: 1, INCOMPLETE: 3, NOT_READY: 4 };

/**
 * The run's exit code from its control statuses: where several apply, the highest wins
 * (CONTRACT §7), so INCOMPLETE (3) outranks BREAKS (1) and NOT_READY (4) outranks both.
 */
export function exitCodeForStatuses(statuses: readonly ControlStatus[]): ExitCode {
  return statuses.reduce<ExitCode>((max, s) => (STATUS_EXIT[s] > max ? STATUS_EXIT[s] : max), ExitCode.CLEAN);
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
