/**
 * Who holds a lease, the publish lock or a staging folder, and whether that holder is still
 * alive (issue 7, issue 18). A holder is named by host, pid and, on Linux, the kernel's boot id
 * and the process start time (`/proc/<pid>/stat` field 22): a pid alone is reused after a crash
 * (quickly in a container, whose pids start again at 1 on every restart), and a reused pid must not
 * keep a dead run's lease held until its expiry.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** The identity of a process holding something in the store. `boot_id`/`start_ticks` are absent where /proc is not available. */
export interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly boot_id?: string;
  readonly start_ticks?: string;
}

function readProc(path: string): string | undefined {
  try { return readFileSync(path, 'utf8'); } catch { return undefined; }
}

/** Start time of `pid` in clock ticks since boot, from /proc (undefined where unknown). */
function startTicks(pid: number): string | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  // Fields after the command name (which may hold spaces and parentheses): state is field 3, start time field 22.
  const rest = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return rest?.[19];
}

const BOOT_ID = readProc('/proc/sys/kernel/random/boot_id')?.trim();

/** This process as a holder. */
export function thisProcess(): Holder {
  const ticks = startTicks(process.pid);
  return { pid: process.pid, host: hostname(), ...(BOOT_ID ? { boot_id: BOOT_ID } : {}), ...(ticks ? { start_ticks: ticks } : {}) };
}

/**
 * Whether `h` may still be running: always true for a holder on another host (the caller waits
 * for its expiry); on this host false when the host rebooted since (another boot id), the pid is
 * gone, or the pid now belongs to a process started at another time (a reused pid).
 */
export function holderAlive(h: { pid?: unknown; host?: unknown; boot_id?: unknown; start_ticks?: unknown }): boolean {
  if (h.host !== hostname()) return true;
  if (typeof h.pid !== 'number' || !Number.isSafeInteger(h.pid) || h.pid <= 0) return false;
  if (typeof h.boot_id === 'string' && BOOT_ID && h.boot_id !== BOOT_ID) return false;
  try { process.kill(h.pid, 0); } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (typeof h.start_ticks === 'string') {
    const now = startTicks(h.pid);
    if (now !== undefined && now !== h.start_ticks) return false;
  }
  return true;
}
