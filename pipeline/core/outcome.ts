/**
 * Outcomes and exit codes (CONTRACT §7), in one place: the exit codes, the control statuses with
 * their exit codes and ranks, the run's overall status and the conditions it names, and the exit
 * code of every error class. The run, the CLI summary, the report and the schedule all read them
 * from here. Where several outcomes apply, the highest exit code wins, so a control's rank follows
 * its exit code: NOT_READY (4) > INCOMPLETE (3) > BREAKS (1) > CLEAN (0).
 */
import type { ControlStatus } from '../../manifests/v1/schema.js';
import {
  AthenaQueryError, ConcurrencyError, ConfigError, EvidenceIntegrityError, InputError, InternalError, InterruptedError, ManifestVersionError, SignatureError, StoreError, TransitionRuleError,
} from './errors.js';

/** Exit codes of CONTRACT §7. Published values; never renumbered. */
export const ExitCode = {
  CLEAN: 0,
  BREAKS: 1,
  /** Also 1: a check found that a store, a bag or a provider file does not match its own records. */
  MISMATCH: 1,
  USAGE: 2,
  INCOMPLETE: 3,
  NOT_READY: 4,
  LOCKED: 5,
  TRANSITION_LOST: 6,
  INTERNAL: 70,
  /** Not CONTRACT §7's: a run stopped by SIGINT exits as a shell reports a process the signal ended, 128 + 2. */
  SIGINT: 130,
  /** Not CONTRACT §7's: a run stopped by SIGTERM, 128 + 15. */
  SIGTERM: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit code of a run stopped by `signal` (SIGINT 130, SIGTERM 143). */
export function signalExitCode(signal: 'SIGINT' | 'SIGTERM'): ExitCode {
  return ExitCode[signal];
}

/** What a control status means for the run: exit code, rank, words for people, and whether the schedule runs the window again. */
export interface StatusOutcome {
  readonly exitCode: ExitCode;
  /** Higher outranks lower in the run's overall status (it follows the exit code). */
  readonly rank: number;
  /** A few words for summaries: "breaks open". */
  readonly meaning: string;
  /** True when a scheduled window with a control in this status is not complete: the next schedule call runs it again. */
  readonly rerunBySchedule: boolean;
}

/** The control statuses of CONTRACT §7: their exit codes and ranks. */
export const STATUS_OUTCOMES: Readonly<Record<ControlStatus, StatusOutcome>> = {
  CLEAN: { exitCode: ExitCode.CLEAN, rank: 0, meaning: 'clean', rerunBySchedule: false },
  BREAKS: { exitCode: ExitCode.BREAKS, rank: 1, meaning: 'breaks open', rerunBySchedule: false },
  INCOMPLETE: { exitCode: ExitCode.INCOMPLETE, rank: 2, meaning: 'input quarantined', rerunBySchedule: false },
  NOT_READY: { exitCode: ExitCode.NOT_READY, rank: 3, meaning: 'not ready', rerunBySchedule: true },
};

/** The control statuses from the highest rank to the lowest. */
export const STATUSES_BY_RANK: readonly ControlStatus[] = (Object.keys(STATUS_OUTCOMES) as ControlStatus[]).sort((a, b) => STATUS_OUTCOMES[b].rank - STATUS_OUTCOMES[a].rank);

/** The exit code of one control status. */
export function statusExitCode(status: ControlStatus): ExitCode {
  return STATUS_OUTCOMES[status].exitCode;
}

/** Where several exit codes apply, the highest wins (CONTRACT §7); none: 0. */
export function highestExitCode(codes: readonly ExitCode[]): ExitCode {
  return codes.reduce<ExitCode>((max, c) => (c > max ? c : max), ExitCode.CLEAN);
}

/** One condition a run reports: a status, its exit code and the controls in it (in result order). */
export interface Condition {
  readonly status: ControlStatus;
  readonly exit_code: ExitCode;
  readonly controls: readonly string[];
}

/** A run's outcome: its overall status and exit code, and every condition present (highest first). */
export interface RunOutcome {
  readonly status: ControlStatus;
  readonly exit_code: ExitCode;
  /** Every status other than CLEAN that some control has, highest rank first. */
  readonly conditions: readonly Condition[];
}

/**
 * The run's outcome from its control results: the overall status is the highest-ranked status
 * present (CLEAN when there is none), the exit code that status's, and the conditions name the
 * controls in each status other than CLEAN.
 */
export function runOutcome(results: readonly { readonly control_id: string; readonly status: ControlStatus }[]): RunOutcome {
  const conditions = STATUSES_BY_RANK.filter((s) => s !== 'CLEAN')
    .map((status) => ({ status, exit_code: statusExitCode(status), controls: results.filter((r) => r.status === status).map((r) => r.control_id) }))
    .filter((c) => c.controls.length > 0);
  const status = conditions[0]?.status ?? 'CLEAN';
  return { status, exit_code: statusExitCode(status), conditions };
}

/** An error class and the exit code its errors map to. */
interface ErrorExit {
  readonly error: abstract new (...args: never[]) => Error;
  readonly exitCode: (e: never) => ExitCode;
}

const row = <E extends Error>(error: abstract new (...args: never[]) => E, exitCode: ExitCode | ((e: E) => ExitCode)): ErrorExit =>
  ({ error, exitCode: typeof exitCode === 'number' ? () => exitCode : exitCode });

/** Every error class of core/errors.ts and its exit code (CONTRACT §7). Anything else is internal (70). */
export const ERROR_EXIT_CODES: readonly ErrorExit[] = [
  row(ConfigError, ExitCode.USAGE),
  row(TransitionRuleError, ExitCode.USAGE),
  row(SignatureError, ExitCode.USAGE),
  row(StoreError, ExitCode.USAGE),
  row(InputError, ExitCode.INCOMPLETE),
  row(ConcurrencyError, (e) => (e.kind === 'lock' ? ExitCode.LOCKED : ExitCode.TRANSITION_LOST)),
  row(InternalError, ExitCode.INTERNAL),
  row(ManifestVersionError, ExitCode.INTERNAL),
  row(EvidenceIntegrityError, ExitCode.MISMATCH),
  row(AthenaQueryError, (e) => (e.state === 'DEADLINE' ? ExitCode.INTERNAL : ExitCode.USAGE)),
  row(InterruptedError, (e) => signalExitCode(e.signal)),
];

/** Maps any thrown value to its exit code (ERROR_EXIT_CODES); unknown errors are internal (70). */
export function exitCodeOf(err: unknown): ExitCode {
  const hit = ERROR_EXIT_CODES.find((r) => err instanceof r.error);
  return hit ? hit.exitCode(err as never) : ExitCode.INTERNAL;
}
