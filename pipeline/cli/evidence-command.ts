/**
 * `reckon evidence pack|verify` (CONTRACT §7): compliance evidence packages as BagIt bags.
 *
 *   reckon evidence pack (--run RUN_ID | --break BREAK_ID | --window S/E [--control C])
 *                        --out FILE.zip|DIR [--store S] [--include-inputs] [--organization ORG] [--json]
 *   (--run latest: the last published run; --store defaults to ./var/reckon like every command)
 *   reckon evidence verify FILE|DIR [--signers FILE | --config FILE] [--json]
 *   (--signers / --config: the registry you trust; the bag must be signed by its pipeline key)
 *
 * Exit codes: pack 0 written; 1 the store does not match its own records (nothing written);
 * 2 usage, unknown run/break, empty window or an existing --out. verify 0 valid; 1 a problem,
 * the first one named on stdout; 2 usage or a path that does not exist.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { ExitCode } from '../core/outcome.js';
import { packEvidence, type EvidenceScope } from '../evidence/pack.js';
import { verifyEvidence } from '../evidence/verify.js';
import { resolveRunId } from '../store/manifests.js';
import { openStore } from '../store/open-store.js';
import { windowForRange } from '../contract/window.js';
import { loadConfig, pipelineKeyPath, registryPath } from '../config/config.js';
import { loadRegistry, type SignerRegistry } from '../signing/registry.js';
import { loadControls } from '../controls/definitions.js';
import type { Settings } from '../core/settings.js';
import { loadSigningKey, type SigningKey } from '../signing/signing-key.js';
import { parse } from './args.js';
import { trustedRegistry } from './trusted-registry.js';
import { localOrRemote, printJson, type CliIo } from './io.js';
import type { CommandContext } from './command.js';

const PACK_USAGE = `reckon evidence pack (--run RUN_ID|latest | --break BREAK_ID | --window START/END [--control RC01])
                     --out FILE.zip|DIR [--store DIR] [--include-inputs] [--organization ORG] [--config FILE] [--json]`;
const VERIFY_USAGE = 'reckon evidence verify FILE.zip|DIR [--signers FILE | --config FILE] [--json]';
const USAGE = `usage: ${PACK_USAGE}\n       ${VERIFY_USAGE}`;

/** The usage of `reckon evidence …`: the subcommand's, or both. */
export function usage(argv: string[]): string {
  return argv[0] === 'pack' ? `usage: ${PACK_USAGE}` : argv[0] === 'verify' ? `usage: ${VERIFY_USAGE}` : USAGE;
}

/** Runs `reckon evidence` with `argv` (after the subcommand); returns the exit code. */
export async function command(argv: string[], { io, settings }: CommandContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'pack') return pack(rest, io, settings);
  if (sub === 'verify') return verify(rest, io);
  if (sub === 'help') { io.stdout(`${USAGE}\n`); return 0; }
  throw new ConfigError(USAGE);
}

async function pack(argv: string[], io: CliIo, settings: Settings): Promise<number> {
  const { values } = parse(argv, {
    config: { type: 'string' }, run: { type: 'string' }, break: { type: 'string' }, window: { type: 'string' }, control: { type: 'string' },
    store: { type: 'string' }, out: { type: 'string' }, 'include-inputs': { type: 'boolean' }, organization: { type: 'string' }, json: { type: 'boolean' },
  });
  const given = [values.run, values.break, values.window].filter((v) => v !== undefined).length;
  if (given !== 1) throw new ConfigError(`exactly one of --run, --break or --window is required\n${USAGE}`);
  if (values.control !== undefined && values.window === undefined) throw new ConfigError('--control narrows --window only');
  if (!values.out) throw new ConfigError(`--out is required\n${USAGE}`);
  const control = values.control?.trim().toUpperCase() ?? null;
  if (control !== null && !/^RC[0-9]{2}$/.test(control)) throw new ConfigError(`--control '${values.control}' is not a control id (RC01…)`);
  // The same default store as every other command.
  const location = localOrRemote(io, values.store ?? 'var/reckon');
  if (!location.startsWith('s3://')) {
    const isDir = await stat(location).then((s) => s.isDirectory(), () => false);
    if (!isDir) throw new ConfigError(`--store ${location} is not a folder`);
  }
  const store = await openStore(location);
  const scope: EvidenceScope = values.run !== undefined ? { kind: 'run', runId: await resolveRunId(store, values.run) }
    : values.break !== undefined ? { kind: 'break', breakId: values.break }
      : { kind: 'window', window: windowForRange(values.window!), control };
  const organization = values.organization ?? 'reckon';
  if (/[\r\n]/.test(organization) || organization.trim() === '') throw new ConfigError('--organization must be one non-empty line');
  const out = resolve(io.cwd, values.out);
  const pipelineKey = await packKey(values.config, io, settings);
  const trusted = values.config === undefined ? null : await configRegistry(values.config, io);
  const r = await packEvidence({ scope, store, out, includeInputs: Boolean(values['include-inputs']), organization, pipelineKey, trusted });
  if (values.json) printJson(io, { ok: true, out, kind: r.target.kind, external_identifier: r.externalIdentifier, payload_oxum: r.oxum, payload_files: r.payloadFiles, runs: r.runs, breaks: r.breaks });
  else io.stdout(`evidence ${r.externalIdentifier} written to ${out} (${r.target.kind}): ${r.runs.length} run(s), ${r.breaks.length} break(s), Payload-Oxum ${r.oxum}\n`);
  return 0;
}

async function verify(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' }, signers: { type: 'string' }, config: { type: 'string' } }, true);
  if (positionals.length !== 1) throw new ConfigError(`verify takes one bag (a folder or a .zip)\n${USAGE}`);
  const path = resolve(io.cwd, positionals[0]);
  if (!(await stat(path).then(() => true, () => false))) throw new ConfigError(`${path} does not exist`);
  const trusted = await trustedRegistry(values.signers, values.config, io.cwd);
  const r = await verifyEvidence(path, { trusted });
  if (values.json) printJson(io, { ok: r.ok, bag: path, problems: r.problems, payload_files: r.payloadFiles, payload_bytes: r.payloadBytes, manifests: r.manifests, breaks: r.breaks, signed: r.signed ?? false, trusted_registry: r.trustedRegistry ?? null });
  else if (r.ok) io.stdout(`ok: ${path} is a valid bag: ${r.payloadFiles} payload file(s), ${r.payloadBytes} bytes, ${r.manifests} manifest(s) linked into the chain, ${r.breaks} break log(s) consistent; ${signingLine(r)}\n`);
  else {
    io.stdout(`FAILED: ${r.problems[0]}\n`);
    for (const p of r.problems.slice(1, 20)) io.stdout(`  also: ${p}\n`);
    if (r.problems.length > 20) io.stdout(`  … and ${r.problems.length - 20} more\n`);
  }
  return r.ok ? ExitCode.CLEAN : ExitCode.MISMATCH;
}

/** How the bag's signing was judged, for the `ok:` line. */
function signingLine(r: { signed?: boolean; trustedRegistry?: string | null }): string {
  if (!r.signed) return 'NOT signed (its manifests are unsigned): a consistent rewrite of the bag cannot be detected';
  if (r.trustedRegistry) return `manifests and tag manifest signed by the pipeline key of the registry you gave (${r.trustedRegistry.slice(0, 12)}…)`;
  return 'manifests and tag manifest signed by the pipeline, as the bag\'s own registry says: give --signers FILE (or --config) to anchor the key outside the bag';
}

/** The signer registry `--config` names, trusted when packing (null when it names none: an unsigned store). */
async function configRegistry(config: string, io: CliIo): Promise<SignerRegistry | null> {
  const path = registryPath(await loadConfig(config, await loadControls(), { cwd: io.cwd }));
  return path ? loadRegistry(path) : null;
}

/** The pipeline's key for signing a bag: RECKON_PIPELINE_KEY_FILE / RECKON_PIPELINE_KEY, else the `--config`'s signing.pipeline_key; null when none is given. */
async function packKey(config: string | undefined, io: CliIo, settings: Settings): Promise<SigningKey | null> {
  const p = settings.signing.pipeline;
  const file = p.keyFile ?? (p.keyText || config === undefined ? null : pipelineKeyPath(await loadConfig(config, await loadControls(), { cwd: io.cwd })));
  if (!file && !p.keyText) return null;
  return loadSigningKey({ file, text: p.keyText, passphrase: p.passphrase, agentSocket: settings.signing.agentSocket, variable: 'RECKON_PIPELINE_KEY' });
}
