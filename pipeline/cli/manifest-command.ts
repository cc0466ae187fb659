/** `reckon manifest verify [--store S] [--run RUN_ID] [--json]`: exit 0 when the chain holds, 1 naming the first broken link. */
import { ConfigError } from '../core/errors.js';
import { ExitCode } from '../core/outcome.js';
import { existsSync } from 'node:fs';
import { verifyManifests } from '../publish/verify-chain.js';
import { findManifest } from '../store/manifests.js';
import { openStore } from '../store/open-store.js';
import { parse } from './args.js';
import { localOrRemote, printJson } from './io.js';
import type { CommandContext } from './command.js';

/** Runs `reckon manifest verify` with `argv` (after the subcommand); returns 0 or 1. */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === 'help' || rest.includes('--help')) { io.stdout('reckon manifest verify [--store DIR|s3://…] [--run RUN_ID] [--json]\n'); return 0; }
  if (sub !== 'verify') throw new ConfigError('usage: reckon manifest verify [--store DIR] [--run RUN_ID] [--json]');
  const { values } = parse(rest, { store: { type: 'string' }, run: { type: 'string' }, json: { type: 'boolean' } });
  const location = values.store ?? 'var/reckon';
  if (!location.startsWith('s3://') && !existsSync(localOrRemote(io, location))) throw new ConfigError(`--store ${location}: no store there`);
  const store = await openStore(localOrRemote(io, location));
  if (values.run !== undefined && !(await findManifest(store, values.run))) throw new ConfigError(`--run ${values.run}: no published manifest of that run in ${store.location}`);
  const { checked, problems } = await verifyManifests(store, values.run);
  if (values.json) printJson(io, { ok: problems.length === 0, checked, problems });
  else if (problems.length === 0) io.stdout(`ok: ${checked} manifest(s) verified, chain intact\n`);
  else {
    io.stdout(`FAILED: first broken link: ${problems[0].key}: ${problems[0].problem}\n`);
    for (const p of problems.slice(1)) io.stdout(`  also: ${p.key}: ${p.problem}\n`);
  }
  return problems.length === 0 ? ExitCode.CLEAN : ExitCode.MISMATCH;
}
