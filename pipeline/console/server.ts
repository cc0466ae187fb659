/**
 * Starts a console (issue 22): the state, the application, an HTTP server bound to 127.0.0.1
 * (unless told otherwise) on the port asked for (0: any free one), the store's verification in
 * the background and a periodic refresh of the index for changes made by others.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { consoleApp } from './app.js';
import { openConsoleState, refreshState, verifyStore, type ConsoleOptions, type ConsoleState } from './state.js';

/** Options of `startConsole`. */
export interface StartOptions extends ConsoleOptions {
  readonly host?: string;
  readonly port?: number;
  /** How often to look for new runs (manifests and their checkpoints), in ms (default 15,000; 0: never). */
  readonly refreshMs?: number;
  /**
   * How often a look also sweeps every break key for changes made by people between runs, in ms
   * (default 120,000; rounded up to a multiple of refreshMs). A break's own page is always current.
   */
  readonly sweepMs?: number;
}

/** A running console. */
export interface RunningConsole {
  readonly url: string;
  readonly state: ConsoleState;
  /** Settles when the first verification of the store is done. */
  readonly verified: Promise<void>;
  close(): Promise<void>;
}

/** Opens the state and listens; throws what openConsoleState throws (a key or registry that cannot be used). */
export async function startConsole(o: StartOptions): Promise<RunningConsole> {
  const state = await openConsoleState(o);
  const host = o.host ?? '127.0.0.1';
  let hosts: string[] = [];
  const app = consoleApp(state, () => hosts);
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: o.port ?? 0 }, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  hosts = [`${host.includes(':') ? `[${host}]` : host}:${port}`, ...(host === '127.0.0.1' ? [`localhost:${port}`] : [])];
  const verified = verifyStore(state).catch((e) => {
    state.verification = { status: 'failed', checked: 0, problems: [{ key: state.store.location, problem: `verification stopped: ${(e as Error).message}` }], notices: 0, ms: 0, at: new Date() };
  });
  let busy = false;
  const refreshMs = o.refreshMs ?? 15_000;
  const sweepEvery = Math.max(1, Math.ceil((o.sweepMs ?? 120_000) / Math.max(refreshMs, 1)));
  let ticks = 0;
  const timer = refreshMs > 0 ? setInterval(() => {
    if (busy) return;
    busy = true;
    ticks += 1;
    refreshState(state, ticks % sweepEvery === 0).catch(() => undefined).finally(() => { busy = false; });
  }, refreshMs) : null;
  timer?.unref();
  return {
    url: `http://${hosts[0]}`, state, verified,
    close: () => new Promise<void>((resolve) => {
      if (timer) clearInterval(timer);
      server.close(() => resolve());
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    }),
  };
}
