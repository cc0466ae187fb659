/** `reckon manifest verify [--store S] [--run RUN_ID] [--signers FILE | --config FILE] [--json]`: exit 0 when the chain holds, 1 naming the first broken link. */
import { ConfigError } from '../core/errors.js';
import { ExitCode } from '../core/outcome.js';
import { existsSync } from 'node:fs';
import { pendingRollForwards, pendingText } from '../publish/staging.js';
import { verifyManifests, type BreakLogReport } from '../publish/verify-chain.js';
import { findManifest } from '../store/manifests.js';
import { openStore } from '../store/open-store.js';
import { trustedRegistry } from './trusted-registry.js';
import { parse } from './args.js';
import { localOrRemote, printJson } from './io.js';
import type { CommandContext } from './command.js';

/** One line on what the break-log check covered. */
function breakLine(c: BreakLogReport['counts']): string {
  const parts = [`${c.breaks} break log(s), ${c.events} event(s): ${c.signed} signed (${c.countersigned} countersigned), ${c.by_run} by runs`];
  if (c.unsigned) parts.push(`${c.unsigned} UNSIGNED by configuration`);
  if (c.legacy) parts.push(`${c.legacy} legacy object(s) from before signing`);
  parts.push(`${c.observations} observation(s), ${c.proposals} proposal(s), ${c.signatures} signature(s) checked`);
  return parts.join(', ');
}

/** Runs `reckon manifest verify` with `argv` (after the subcommand); returns 0 or 1. */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'help') { io.stdout(`${usage()}\n`); return 0; }
  if (sub !== 'verify') throw new ConfigError(usage());
  const { values } = parse(rest, { store: { type: 'string' }, run: { type: 'string' }, signers: { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' } });
  const trusted = await trustedRegistry(values.signers, values.config, io.cwd);
  const location = values.store ?? 'var/reckon';
  if (!location.startsWith('s3://') && !existsSync(localOrRemote(io, location))) throw new ConfigError(`--store ${location}: no store there`);
  const store = await openStore(localOrRemote(io, location));
  if (values.run !== undefined && !(await findManifest(store, values.run))) throw new ConfigError(`--run ${values.run}: no published manifest of that run in ${store.location}`);
  const { checked, problems, breaks, notices, inputsChanged, signed, unsigned } = await verifyManifests(store, values.run, { trusted });
  const pending = (await pendingRollForwards(store)).filter((p) => values.run === undefined || p.run_id === values.run);
  if (values.json) printJson(io, { ok: problems.length === 0, checked, signed, unsigned, trusted_registry: trusted?.sha256 ?? null, problems, notices, inputs_changed: inputsChanged, breaks, pending_roll_forward: pending });
  else {
    // First, so that a reader sees why outputs and breaks are missing before the chain's verdict.
    for (const p of pending) io.stdout(`${pendingText(p, location, values.config && localOrRemote(io, values.config))}\n`);
    const signing = unsigned ? `${signed} signed, ${unsigned} NOT signed` : `${signed} signed by the pipeline`;
    if (problems.length === 0) io.stdout(`ok: ${checked} manifest(s) verified (${signing}), chain intact; ${breakLine(breaks.counts)}\n`);
    else {
      io.stdout(`FAILED: first broken link: ${problems[0].key}: ${problems[0].problem}\n`);
      for (const p of problems.slice(1)) io.stdout(`  also: ${p.key}: ${p.problem}\n`);
    }
    for (const n of notices) io.stdout(`  note: ${n.key}: ${n.problem}\n`);
    for (const n of inputsChanged) io.stdout(`  note: ${n.key}: ${n.problem}\n`);
    for (const n of breaks.notices.slice(0, 20)) io.stdout(`  note: ${n.key}: ${n.problem}\n`);
    if (breaks.notices.length > 20) io.stdout(`  … and ${breaks.notices.length - 20} more notes (--json lists them all)\n`);
  }
  return problems.length === 0 ? ExitCode.CLEAN : ExitCode.MISMATCH;
}

/** The usage of `reckon manifest verify` (`--help`). */
export const usage = (): string => 'usage: reckon manifest verify [--store DIR|s3://…] [--run RUN_ID] [--signers FILE | --config FILE] [--json]';
