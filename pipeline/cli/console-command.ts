/**
 * `reckon console --store S [--config F] [--key K] [--port P] [--host H]` (issue 22): serves the
 * break console on 127.0.0.1 (unless --host says otherwise) until interrupted. Actions are signed
 * with the operator's key (--key, else RECKON_SIGNING_KEY_FILE / RECKON_SIGNING_KEY / ssh-agent);
 * without one the console is read-only and says so. Prints one line with the URL on stdout.
 */
import { existsSync } from 'node:fs';
import { startConsole } from '../console/server.js';
import { loadConfig } from '../config/config.js';
import { loadControls } from '../controls/definitions.js';
import { ConfigError } from '../core/errors.js';
import { openStore } from '../store/open-store.js';
import { parse } from './args.js';
import { keySource } from './breaks-command.js';
import { localOrRemote } from './io.js';
import type { CommandContext } from './command.js';

const USAGE = `usage: reckon console --store DIR|s3://… [--config FILE] [--key FILE] [--port N] [--host 127.0.0.1]
                      [--actor NAME (unsigned mode only)]

  serves the break console until interrupted; without a signing key it is read-only`;

/** The usage of `reckon console` (`--help`). */
export const usage = (): string => USAGE;

/** Runs `reckon console`; resolves with 0 when the process is interrupted (SIGINT, SIGTERM). */
export async function command(argv: string[], { io, settings }: CommandContext): Promise<number> {
  const { values } = parse(argv, {
    store: { type: 'string' }, config: { type: 'string' }, key: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' },
    actor: { type: 'string' }, help: { type: 'boolean' },
  });
  if (values.help) { io.stdout(`${USAGE}\n`); return 0; }
  const location = values.store ?? 'var/reckon';
  if (!location.startsWith('s3://') && !existsSync(localOrRemote(io, location))) throw new ConfigError(`--store ${location}: no store there`);
  const port = values.port === undefined ? 8080 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--port ${values.port} is not a port number (0 picks a free one)`);
  const controls = await loadControls();
  const config = await loadConfig(values.config, controls, { cwd: io.cwd });
  const s = settings.signing;
  const haveKey = values.key !== undefined || Boolean(s.keyFile) || Boolean(s.keyText);
  const running = await startConsole({
    store: await openStore(localOrRemote(io, location), settings.s3), config, controls,
    key: haveKey ? keySource(values, io, settings) : null, actorName: values.actor, host: values.host, port,
  });
  const who = running.state.actor ? `acting as ${running.state.actor.name} (${running.state.actor.key})` : `read-only: ${running.state.readOnly}`;
  io.stdout(`reckon console: ${running.url} ${who}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => { process.off('SIGINT', stop); process.off('SIGTERM', stop); resolve(); };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await running.close();
  return 0;
}
