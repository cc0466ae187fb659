/**
 * A real HTTP receiver on loopback for alert tests (node:http, started and stopped by the test):
 * it records every request (method, path, headers, JSON body) and answers by its mode — `ok`
 * (202), `fail` (500 to everything) or `hang` (never answers; the client must time out).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: any;
}

export interface Receiver {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly requests: ReceivedRequest[];
  mode: 'ok' | 'fail' | 'hang';
  close(): Promise<void>;
}

/** Starts a receiver on an ephemeral loopback port. */
export async function startReceiver(mode: Receiver['mode'] = 'ok'): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const state = { mode };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try { body = JSON.parse(text); } catch { /* kept as text */ }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      if (state.mode === 'hang') return; // never answer
      res.writeHead(state.mode === 'ok' ? 202 : 500, { 'content-type': 'application/json' });
      res.end(state.mode === 'ok' ? '{"status":"success"}' : '{"error":"receiver down"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get mode() { return state.mode; },
    set mode(m) { state.mode = m; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
