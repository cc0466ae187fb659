/**
 * Run configuration (CONTRACT §5 and §1): rounding mode for money conversion, per-control SLAs
 * (`sla_s`, `sla_s_by_kind`), owners, contacts, paging routes and runbooks (per control and per
 * difference kind, over the defaults of the control definitions), parameters, timing rules, and
 * where alerts go (`alerts.routes`). Parsed once from JSON or YAML with zod, then checked against
 * the control definitions (unknown controls, difference kinds, routes and runbooks are errors,
 * not silently ignored); every problem is reported with its path, all at once, before failing
 * (ConfigError, exit 2). Evaluation never reads the environment: the frozen Config is passed in
 * (route URLs named by environment variable are resolved by the command line, alert-routes.ts).
 *
 * Example (JSON or the same in YAML):
 *   { "rounding_mode": "HALF_EVEN",
 *     "controls": { "RC03": { "sla_s": 60, "sla_s_by_kind": { "RESERVATION_MISMATCH": 600 }, "owner": "ledger-ops",
 *                             "route": "ledger-pager", "by_kind": { "RESERVATION_MISMATCH": { "owner": "treasury" } } } },
 *     "runbooks": { "RBK07": { "link": "https://wiki.example/rbk07" } },
 *     "alerts": { "routes": { "ledger-pager": { "format": "pagerduty", "routing_key_env": "PD_LEDGER_KEY" } } },
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
import { z } from '../core/zod.js';
import { ConfigError } from '../core/errors.js';
import { ROUNDING_MODES } from '../contract/money.js';
import { OwnershipFields, ROUTE_NAME, RunbookSchema, type ControlDefinition } from '../controls/definitions.js';
import { AlertsConfig } from './alerts-config.js';

/** Owner, contact, route and runbook overrides: a runbook given here is a whole runbook (id, title, link, first step). */
const OwnershipOverride = z.object(OwnershipFields).partial().strict();

const ControlConfig = z.object({
  sla_s: z.number().int().nonnegative().optional(),
  sla_s_by_kind: z.record(z.string(), z.number().int().nonnegative()).optional(),
  ...OwnershipOverride.shape,
  by_kind: z.record(z.string(), OwnershipOverride).optional(),
  params: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
}).strict();

/** A change to a runbook wherever it is used, by id: a link to your own wiki, say. */
const RunbookPatch = RunbookSchema.omit({ id: true }).partial().strict();

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
  runbooks: z.record(z.string(), RunbookPatch).default({}),
  alerts: AlertsConfig.default(AlertsConfig.parse({})),
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
  // Every mistake at once: the schema's, and those against the control definitions of whatever
  // parts of the document have the right shape (a bad SLA does not hide an unknown control).
  const schemaIssues = parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const issues = [...schemaIssues, ...configIssuesAgainstControls(parsed.success ? parsed.data : looseView(doc), controls)]
    .filter((i, n, all) => all.findIndex((j) => j.path === i.path && j.message === i.message) === n);
  if (issues.length) {
    const lines = issues.map((i) => `  ${i.path || '(root)'}: ${i.message}`);
    throw new ConfigError(`configuration ${path} is invalid (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`, path, issues[0].path);
  }
  return { config: Object.freeze(parsed.data!), sha256: createHash('sha256').update(bytes).digest('hex'), path, dir: dirname(absolute) };
}

/** One configuration problem: dotted path into the document and what is wrong there. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/** The parts of a configuration checked against the control definitions; a document that failed the schema is read this far. */
export interface ConfigView {
  readonly controls: Readonly<Record<string, {
    readonly params?: Readonly<Record<string, unknown>>;
    readonly sla_s_by_kind?: Readonly<Record<string, unknown>>;
    readonly by_kind?: Readonly<Record<string, { readonly route?: unknown; readonly runbook?: unknown }>>;
    readonly route?: unknown;
  }>>;
  readonly timing_rules: readonly { readonly control?: unknown; readonly kind?: unknown }[];
  readonly runbooks: Readonly<Record<string, unknown>>;
  readonly alerts: { readonly routes: Readonly<Record<string, unknown>>; readonly default_route?: unknown };
  readonly signing: { readonly roles?: Readonly<Record<string, { readonly owns: readonly unknown[]; readonly approves: readonly unknown[] }>> };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const objectOr = (v: unknown): Record<string, unknown> => (isObject(v) ? v : {});

/** The checkable parts of a document that failed the schema: objects where objects belong, nothing else. */
function looseView(doc: unknown): ConfigView {
  const d = objectOr(doc);
  const controls = Object.fromEntries(Object.entries(objectOr(d.controls)).filter(([, v]) => isObject(v)).map(([id, v]) => {
    const c = v as Record<string, unknown>;
    const byKind = Object.fromEntries(Object.entries(objectOr(c.by_kind)).map(([k, o]) => [k, objectOr(o)]));
    return [id, { params: objectOr(c.params), sla_s_by_kind: objectOr(c.sla_s_by_kind), by_kind: byKind, route: c.route }];
  }));
  const rules = Array.isArray(d.timing_rules) ? d.timing_rules.map(objectOr) : [];
  const alerts = objectOr(d.alerts);
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  const roles = Object.fromEntries(Object.entries(objectOr(objectOr(d.signing).roles)).map(([name, r]) => [name, { owns: list(objectOr(r).owns), approves: list(objectOr(r).approves) }]));
  return {
    controls, timing_rules: rules, runbooks: objectOr(d.runbooks), alerts: { routes: objectOr(alerts.routes), default_route: alerts.default_route },
    signing: { roles },
  };
}

/**
 * Checks a configuration against the control definitions: every control id under `controls` and
 * in `timing_rules` must exist; every kind in `sla_s_by_kind`, `by_kind` and `timing_rules` must be
 * one the control emits; parameters must be the control's, of its type; a route named in the
 * configuration must be one of `alerts.routes`; `runbooks` may change only runbooks the
 * definitions or the configuration name. Returns every problem with its path (none: []).
 */
export function configIssuesAgainstControls(config: ConfigView, controls: readonly ControlDefinition[]): ConfigIssue[] {
  const byId = new Map(controls.map((c) => [c.control_id, c]));
  const known = controls.map((c) => c.control_id).join(', ');
  const issues: ConfigIssue[] = [];
  const kindIssue = (path: string, def: ControlDefinition, kind: string) => {
    if (!def.difference_kinds.includes(kind)) issues.push({ path, message: `${def.control_id} emits no difference kind ${kind}; its kinds: ${def.difference_kinds.join(', ')}` });
  };
  for (const [id, cfg] of Object.entries(config.controls)) {
    const def = byId.get(id);
    if (!def) { issues.push({ path: `controls.${id}`, message: `unknown control; known: ${known}` }); continue; }
    for (const [name, value] of Object.entries(cfg.params ?? {})) {
      const known = def.params[name];
      if (known === undefined) issues.push({ path: `controls.${id}.params.${name}`, message: `${id} has no parameter ${name}; its parameters: ${Object.keys(def.params).join(', ') || 'none'}` });
      else if (typeof known !== typeof value) issues.push({ path: `controls.${id}.params.${name}`, message: `must be a ${typeof known} like the default ${JSON.stringify(known)}` });
      else if (typeof value === 'number' && !(Number.isSafeInteger(value) && value >= 0)) issues.push({ path: `controls.${id}.params.${name}`, message: 'must be a whole number of seconds, 0 or more' });
    }
    for (const kind of Object.keys(cfg.sla_s_by_kind ?? {})) kindIssue(`controls.${id}.sla_s_by_kind.${kind}`, def, kind);
    for (const kind of Object.keys(cfg.by_kind ?? {})) kindIssue(`controls.${id}.by_kind.${kind}`, def, kind);
  }
  for (const [name, roles] of Object.entries(config.signing.roles ?? {})) {
    for (const part of ['owns', 'approves'] as const) {
      roles[part].forEach((c, i) => {
        if (typeof c === 'string' && c !== '*' && !byId.has(c)) issues.push({ path: `signing.roles.${name}.${part}.${i}`, message: `unknown control ${c}; known: ${known}` });
      });
    }
  }
  config.timing_rules.forEach((r, i) => {
    if (typeof r.control !== 'string' || typeof r.kind !== 'string') return;
    const def = byId.get(r.control);
    if (!def) issues.push({ path: `timing_rules.${i}.control`, message: `unknown control ${r.control}; known: ${known}` });
    else kindIssue(`timing_rules.${i}.kind`, def, r.kind);
  });
  issues.push(...routeIssues(config), ...runbookIssues(config, controls));
  return issues;
}

/** Routes the configuration names that `alerts.routes` does not define (a typo would silence a team's alerts). */
function routeIssues(config: ConfigView): ConfigIssue[] {
  const routes = Object.keys(config.alerts.routes);
  const issues: ConfigIssue[] = [];
  const check = (path: string, name: unknown) => {
    if (typeof name === 'string' && !routes.includes(name)) issues.push({ path, message: `no route ${name} in alerts.routes; routes: ${routes.join(', ') || 'none'}` });
  };
  for (const [id, cfg] of Object.entries(config.controls)) {
    check(`controls.${id}.route`, cfg.route);
    for (const [kind, o] of Object.entries(cfg.by_kind ?? {})) check(`controls.${id}.by_kind.${kind}.route`, o.route);
  }
  check('alerts.default_route', config.alerts.default_route);
  return issues;
}

/** `runbooks` entries naming a runbook that no definition and no configured owner uses. */
function runbookIssues(config: ConfigView, controls: readonly ControlDefinition[]): ConfigIssue[] {
  const ids = new Set<string>();
  const add = (r: unknown) => { if (isObject(r) && typeof r.id === 'string') ids.add(r.id); };
  for (const c of controls) { add(c.runbook); for (const o of Object.values(c.by_kind)) add(o.runbook); }
  for (const c of Object.values(config.controls)) { add((c as { runbook?: unknown }).runbook); for (const o of Object.values(c.by_kind ?? {})) add(o.runbook); }
  return Object.keys(config.runbooks).filter((id) => !ids.has(id))
    .map((id) => ({ path: `runbooks.${id}`, message: `no control uses a runbook ${id}; runbooks: ${[...ids].sort().join(', ')}` }));
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
