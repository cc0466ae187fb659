/**
 * Run configuration (CONTRACT §5 and §1): rounding mode for money conversion, per-control SLAs
 * (`sla_s`, `sla_s_by_kind`), owners and parameters, and timing rules. Parsed once from JSON or
 * YAML with zod, then checked against the control definitions (unknown controls and difference
 * kinds are errors, not silently ignored); every problem is reported with its path before failing
 * (ConfigError, exit 2). Evaluation never reads the environment: the frozen Config is passed in.
 *
 * Example (JSON or the same in YAML):
 *   { "rounding_mode": "HALF_EVEN",
 *     "controls": { "RC03": { "sla_s": 60, "sla_s_by_kind": { "RESERVATION_MISMATCH": 600 }, "owner": "ledger-ops" } },
 *     "timing_rules": [ { "control": "RC02", "kind": "FILL_MISSING_VENUE", "max_age_s": 300 } ],
 *     "signing": { "registry": "signers/allowed_signers", "closed_needs_approval": true,
 *                  "roles": { "olivia": { "owns": ["RC06"], "approves": [] }, "amy": { "approves": ["*"] } } },
 *     "limits": { "max_file_bytes": 68719476736, "max_file_records": 100000000, "max_file_quarantined": 1000000 } }
 *
 * `signing` (issue 17, docs/breaks.md): the signer registry (an allowed_signers file, relative to
 * the configuration file) that people's break transitions are signed against; `unsigned: true`
 * instead runs without signatures, and only when said so; CLOSED countersigned like CONTAINED and
 * CORRECTED when `closed_needs_approval`; how long a proposal may wait for its countersignature;
 * which controls each signer may own and approve (absent: any).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { ROUNDING_MODES } from '../contract/money.js';
import type { ControlDefinition } from '../controls/definitions.js';

const ControlConfig = z.object({
  sla_s: z.number().int().nonnegative().optional(),
  sla_s_by_kind: z.record(z.string(), z.number().int().nonnegative()).optional(),
  owner: z.string().min(1).optional(),
  params: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
}).strict();

const TimingRule = z.object({
  control: z.string().regex(/^RC[0-9]{2}$/),
  kind: z.string().min(1),
  max_age_s: z.number().int().nonnegative(),
}).strict();

/** Controls a signer may own or approve: control ids, or `*` for every control. */
const ControlList = z.array(z.union([z.literal('*'), z.string().regex(/^RC[0-9]{2}$/)]));

const SigningRoles = z.object({ owns: ControlList.default([]), approves: ControlList.default([]) }).strict();

/** Seven days: how long a proposal waits for its countersignature by default. */
export const PROPOSAL_MAX_AGE_S = 7 * 24 * 3600;

const SigningConfig = z.object({
  registry: z.string().min(1).optional(),
  /** The pipeline's private key file (relative to the configuration file); RECKON_PIPELINE_KEY_FILE / RECKON_PIPELINE_KEY win. */
  pipeline_key: z.string().min(1).optional(),
  unsigned: z.boolean().default(false),
  closed_needs_approval: z.boolean().default(false),
  proposal_max_age_s: z.number().int().positive().default(PROPOSAL_MAX_AGE_S),
  roles: z.record(z.string().min(1), SigningRoles).optional(),
}).strict().refine((s) => !(s.unsigned && s.registry), { message: 'unsigned: true and a registry exclude each other: sign against the registry, or say unsigned' });

/** Per-file reading bounds (contract/limits.ts); each absent one takes its default. */
const Limits = z.object({
  max_file_bytes: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  max_file_records: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  max_file_quarantined: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
}).strict();

export const ConfigSchema = z.object({
  rounding_mode: z.enum(ROUNDING_MODES).default('HALF_EVEN'),
  limits: Limits.optional(),
  controls: z.record(z.string().regex(/^RC[0-9]{2}$/), ControlConfig).default({}),
  timing_rules: z.array(TimingRule).default([]),
  signing: SigningConfig.default({ unsigned: false, closed_needs_approval: false, proposal_max_age_s: PROPOSAL_MAX_AGE_S }),
}).strict();

export type Config = Readonly<z.infer<typeof ConfigSchema>>;

/** The configuration with its SHA-256 (over the file's bytes, or over `{}` for the defaults). */
export interface LoadedConfig {
  readonly config: Config;
  readonly sha256: string;
  readonly path?: string;
  /** The folder of the configuration file (absolute): `signing.registry` is relative to it. */
  readonly dir?: string;
}

/** The signing part of a configuration (`signing`). */
export type SigningConfig = Config['signing'];

/** The absolute path of the configured signer registry, or null when none is configured. */
export function registryPath(loaded: LoadedConfig): string | null {
  const r = loaded.config.signing.registry;
  return r ? resolve(loaded.dir ?? '.', r) : null;
}

/** The absolute path of the configured pipeline key file, or null when none is configured. */
export function pipelineKeyPath(loaded: LoadedConfig): string | null {
  const k = loaded.config.signing.pipeline_key;
  return k ? resolve(loaded.dir ?? '.', k) : null;
}

/** The configuration of no file: every default, with the SHA-256 of `{}`. */
export function defaultConfig(): LoadedConfig {
  return { config: Object.freeze(ConfigSchema.parse({})), sha256: createHash('sha256').update('{}').digest('hex') };
}

/**
 * Loads and validates a configuration file (JSON, or YAML by its extension) against the control
 * definitions `controls` (configIssuesAgainstControls); no `path` gives defaultConfig(). A relative
 * `path` is read from `opts.cwd` (default the process's) and recorded as given. Throws ConfigError
 * (exit 2) listing every problem with its path.
 */
export async function loadConfig(path: string | undefined, controls: readonly ControlDefinition[], opts: { cwd?: string } = {}): Promise<LoadedConfig> {
  if (!path) return defaultConfig();
  let bytes: Buffer;
  const absolute = resolve(opts.cwd ?? '.', path);
  try { bytes = readFileSync(absolute); } catch (e) { throw new ConfigError(`cannot read configuration ${path}: ${(e as Error).message}`, path); }
  let doc: unknown;
  try {
    if (/\.ya?ml$/i.test(path)) {
      const yaml = await import('yaml').catch(() => { throw new ConfigError('YAML configuration needs the yaml package', path); });
      doc = yaml.parse(bytes.toString('utf8'));
    } else doc = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`configuration ${path} is not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'JSON'}: ${(e as Error).message}`, path);
  }
  const parsed = ConfigSchema.safeParse(doc);
  const issues = parsed.success
    ? configIssuesAgainstControls(parsed.data, controls)
    : parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  if (issues.length) {
    const lines = issues.map((i) => `  ${i.path || '(root)'}: ${i.message}`);
    throw new ConfigError(`configuration ${path} is invalid:\n${lines.join('\n')}`, path, issues[0].path);
  }
  return { config: Object.freeze(parsed.data!), sha256: createHash('sha256').update(bytes).digest('hex'), path, dir: dirname(absolute) };
}

/** One configuration problem: dotted path into the document and what is wrong there. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * Checks a parsed configuration against the control definitions: every control id under
 * `controls` and in `timing_rules` must exist, and every kind in `sla_s_by_kind` and
 * `timing_rules` must be one the control emits. Returns every problem with its path (none: []).
 */
export function configIssuesAgainstControls(config: Config, controls: readonly ControlDefinition[]): ConfigIssue[] {
  const byId = new Map(controls.map((c) => [c.control_id, c]));
  const known = controls.map((c) => c.control_id).join(', ');
  const issues: ConfigIssue[] = [];
  for (const [id, cfg] of Object.entries(config.controls)) {
    const def = byId.get(id);
    if (!def) { issues.push({ path: `controls.${id}`, message: `unknown control; known: ${known}` }); continue; }
    for (const [name, value] of Object.entries(cfg.params ?? {})) {
      const known = def.params[name];
      if (known === undefined) issues.push({ path: `controls.${id}.params.${name}`, message: `${id} has no parameter ${name}; its parameters: ${Object.keys(def.params).join(', ') || 'none'}` });
      else if (typeof known !== typeof value) issues.push({ path: `controls.${id}.params.${name}`, message: `must be a ${typeof known} like the default ${JSON.stringify(known)}` });
      else if (typeof value === 'number' && !(Number.isSafeInteger(value) && value >= 0)) issues.push({ path: `controls.${id}.params.${name}`, message: 'must be a whole number of seconds, 0 or more' });
    }
    for (const kind of Object.keys(cfg.sla_s_by_kind ?? {})) {
      if (!def.difference_kinds.includes(kind)) issues.push({ path: `controls.${id}.sla_s_by_kind.${kind}`, message: `${id} emits no difference kind ${kind}; its kinds: ${def.difference_kinds.join(', ')}` });
    }
  }
  for (const [name, roles] of Object.entries(config.signing.roles ?? {})) {
    for (const part of ['owns', 'approves'] as const) {
      roles[part].forEach((c, i) => {
        if (c !== '*' && !byId.has(c)) issues.push({ path: `signing.roles.${name}.${part}.${i}`, message: `unknown control ${c}; known: ${known}` });
      });
    }
  }
  config.timing_rules.forEach((r, i) => {
    const def = byId.get(r.control);
    if (!def) issues.push({ path: `timing_rules.${i}.control`, message: `unknown control ${r.control}; known: ${known}` });
    else if (!def.difference_kinds.includes(r.kind)) issues.push({ path: `timing_rules.${i}.kind`, message: `${r.control} emits no difference kind ${r.kind}; its kinds: ${def.difference_kinds.join(', ')}` });
  });
  return issues;
}

/**
 * The break SLA in seconds for a difference kind of a control (CONTRACT §5). The most specific
 * setting wins, configuration before definition at each level: the configuration's
 * `sla_s_by_kind[kind]`, the definition's `sla_s_by_kind[kind]`, the configuration's `sla_s`, the
 * definition's `sla_s` (defaults: RC01 120, RC02 60, RC03 0 with RESERVATION_MISMATCH 300, RC04
 * 86400, RC05 300, RC06 3600). Null when the control is unknown.
 */
export function slaSeconds(config: Config, def: ControlDefinition | undefined, kind: string): number | null {
  const cfg = config.controls[def?.control_id ?? ''];
  return cfg?.sla_s_by_kind?.[kind] ?? def?.sla_s_by_kind[kind] ?? cfg?.sla_s ?? def?.sla_s ?? null;
}

/** True when `signer` may own (`owns`) or approve (`approves`) breaks of `controlId`: always when no roles are configured. */
export function signerMay(config: Config, signer: string, part: 'owns' | 'approves', controlId: string): boolean {
  const roles = config.signing.roles;
  if (!roles) return true;
  const mine = Object.entries(roles).find(([name]) => name.trim().toLowerCase() === signer.trim().toLowerCase())?.[1];
  return mine !== undefined && mine[part].some((c) => c === '*' || c === controlId);
}

/** The owner a control's breaks are routed to before triage: the configuration's, else the definition's. */
export function controlOwner(config: Config, def: ControlDefinition | undefined): string | null {
  return config.controls[def?.control_id ?? '']?.owner ?? def?.owner ?? null;
}
