/**
 * Fault-injection seam for crash tests (issue 7): when `RECKON_FAULT_PAUSE` names a phase, the
 * run announces `reckon-fault: paused at <phase>` on stderr when it reaches it and waits there
 * forever, so a test can SIGKILL the process at exactly that point. Unset, it costs nothing.
 * Phases: leased, loading, computing, staged, published. `<phase>:<ms>` pauses for ms milliseconds only.
 */
export async function faultPoint(phase: string): Promise<void> {
  const [at, ms] = (process.env.RECKON_FAULT_PAUSE ?? '').split(':');
  if (at !== phase) return;
  process.stderr.write(`reckon-fault: paused at ${phase}\n`);
  // `<phase>:<ms>` pauses that long and goes on (to change the world under a running run).
  if (ms !== undefined && /^[0-9]{1,7}$/.test(ms)) return new Promise<void>((resolve) => setTimeout(resolve, Number(ms)));
  await new Promise<never>(() => setInterval(() => undefined, 60_000));
}
