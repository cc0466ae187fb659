/**
 * Interrupts of a run (SIGINT, SIGTERM). The first signal aborts the run's AbortSignal, whose
 * reason is the signal's name: the run interrupts DuckDB's running statement and stops at its next
 * safe point (`checkInterrupt`), where no store write of the run is in flight, then releases what
 * it holds and says what it had published (run/run-window.ts). A second signal exits at once.
 */
import { InterruptedError } from './errors.js';
import { signalExitCode } from './outcome.js';

/** The signals a run stops on. */
export type InterruptSignal = 'SIGINT' | 'SIGTERM';
const SIGNALS: readonly InterruptSignal[] = ['SIGINT', 'SIGTERM'];

/** A signal that is never aborted: a run nobody can interrupt (in-process callers, tests). */
export const NO_INTERRUPT: AbortSignal = new AbortController().signal;

/** The signal `interrupt` was aborted with, or null while no signal arrived. */
export function interruptedBy(interrupt: AbortSignal): InterruptSignal | null {
  return interrupt.aborted && SIGNALS.includes(interrupt.reason as InterruptSignal) ? (interrupt.reason as InterruptSignal) : null;
}

/**
 * A safe point of a run: throws InterruptedError when a signal arrived (the run replaces its
 * message with what it published, run/run-window.ts).
 */
export function checkInterrupt(interrupt: AbortSignal): void {
  const signal = interruptedBy(interrupt);
  if (signal) throw new InterruptedError(signal, `interrupted by ${signal}`);
}

/** Calls `fn` once when a signal arrives (at once if one did); returns the function that stops listening. */
export function onInterrupt(interrupt: AbortSignal, fn: () => void): () => void {
  if (interrupt.aborted) {
    fn();
    return () => undefined;
  }
  interrupt.addEventListener('abort', fn, { once: true });
  return () => interrupt.removeEventListener('abort', fn);
}

/**
 * Runs `fn` with SIGINT and SIGTERM caught (the handlers removed when it settles): the first
 * aborts the AbortSignal `fn` is given; a second exits the process at once with 130 or 143
 * (core/outcome.ts), a line on `stderr` saying that the run's leases are then left as after a kill
 * — unless `completed` gives the outcome of work already finished (a run published and returned):
 * then the second exits at once with that exit code and its line.
 */
export async function withInterrupts<T>(stderr: (text: string) => void, fn: (interrupt: AbortSignal) => Promise<T>, completed?: () => { code: number; line: (signal: InterruptSignal) => string } | undefined): Promise<T> {
  const ac = new AbortController();
  const handler = (signal: InterruptSignal) => {
    if (!ac.signal.aborted) return ac.abort(signal);
    const done = completed?.();
    if (done) {
      stderr(done.line(signal));
      process.exit(done.code);
    }
    stderr(`reckon: a second signal (${signal}): exiting at once; the run's leases are free when its process is gone on this host, at their expiry elsewhere\n`);
    process.exit(signalExitCode(signal));
  };
  for (const s of SIGNALS) process.on(s, handler);
  try {
    return await fn(ac.signal);
  } finally {
    for (const s of SIGNALS) process.off(s, handler);
  }
}
