/**
 * Fault-injection seam for crash tests (issue 7): when `RECKON_FAULT_PAUSE` names a phase, the
 * run announces `reckon-fault: paused at <phase>` on stderr when it reaches it and waits there
 * forever, so a test can SIGKILL the process at exactly that point. Unset, it costs nothing.
 * Phases: leased, loading, computing, staged, published.
 */
export async function faultPoint(phase: string): Promise<void> {
  if (process.env.RECKON_FAULT_PAUSE !== phase) return;
  process.stderr.write(`reckon-fault: paused at ${phase}\n`);
  await new Promise<never>(() => setInterval(() => undefined, 60_000));
}
