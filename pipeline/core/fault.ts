/**
 * Fault-injection seam for crash tests (issue 7): when the settings' fault pause (from
 * `RECKON_FAULT_PAUSE`, core/settings.ts) names a phase, the run announces
 * `reckon-fault: paused at <phase>` on stderr when it reaches it and waits there forever, so a
 * test can SIGKILL the process at exactly that point; `<phase>:<ms>` pauses for ms milliseconds
 * only (to change the world under a running run). Unset, it costs nothing.
 * Phases (core/settings.ts FAULT_PHASES), in run order: leased, extracting (a sources file: every
 * reader of a database waits once the first dataset is read, inside the snapshot), loading,
 * computing, planned, staged, signed (the manifest's signature written, the manifest not yet),
 * manifest_written (between the manifest and its `.sha256`), published, promoted, writing-breaks
 * (after the first break object is written), breaks-written, completed (`reckon run`: the run
 * returned, alerts sent, its summary not yet printed). A pause ends early when the run is
 * interrupted (core/interrupt.ts), so a test can signal a paused run.
 */
import { onInterrupt } from './interrupt.js';
import type { FaultPause, FaultPhase } from './settings.js';

/** Called by a run at each fault point; resolves when the run may go on. */
export type FaultPoints = (phase: FaultPhase) => Promise<void>;

/** Fault points that never pause (normal operation). */
export const NO_FAULTS: FaultPoints = async () => undefined;

/** The fault points for `pause`, announcing a pause through `stderr`; a pause ends when `interrupt` is aborted. */
export function faultPoints(pause: FaultPause | null, stderr: (text: string) => void, interrupt?: AbortSignal): FaultPoints {
  if (pause === null) return NO_FAULTS;
  return async (phase) => {
    if (phase !== pause.phase) return;
    stderr(`reckon-fault: paused at ${phase}\n`);
    await new Promise<void>((resolve) => {
      // Without a time the pause holds the process until it is killed (or interrupted).
      const timer = pause.ms !== null ? setTimeout(done, pause.ms) : setInterval(() => undefined, 60_000);
      const unlisten = interrupt ? onInterrupt(interrupt, done) : () => undefined;
      function done() { clearTimeout(timer); clearInterval(timer); unlisten(); resolve(); }
    });
  };
}
