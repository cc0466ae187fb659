/**
 * Run configuration (CONTRACT §5 and §1): rounding mode for money conversion, per-control SLAs
 * and parameters, timing rules and owners. Parsed once from JSON or YAML with zod; every problem
 * is reported with its path before failing (ConfigError, exit 2). Evaluation never reads the
 * environment: the frozen Config is passed in.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './errors.js';

/** Rounding modes for price × quantity → minor units; names as in decimal.js. */
export const ROUNDING_MODES = ['HALF_EVEN', 'HALF_UP', 'HALF_DOWN', 'UP', 'DOWN', 'CEIL', 'FLOOR'] as const;
export type RoundingMode = (typeof ROUNDING_MODES)[number];

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

export const ConfigSchema = z.object({
  rounding_mode: z.enum(ROUNDING_MODES).default('HALF_EVEN'),
  controls: z.record(z.string().regex(/^RC[0-9]{2}$/), ControlConfig).default({}),
  timing_rules: z.array(TimingRule).default([]),
}).strict();

export type Config = Readonly<z.infer<typeof ConfigSchema>>;

/** The configuration with its SHA-256 (over the file's bytes, or over `{}` for the defaults). */
export interface LoadedConfig {
  readonly config: Config;
  readonly sha256: string;
  readonly path?: string;
}

/** Loads and validates a configuration file (JSON, or YAML when the `yaml` package is present). */
export async function loadConfig(path?: string): Promise<LoadedConfig> {
  if (!path) {
    return { config: Object.freeze(ConfigSchema.parse({})), sha256: createHash('sha256').update('{}').digest('hex') };
  }
  let bytes: Buffer;
  try { bytes = readFileSync(path); } catch (e) { throw new ConfigError(`cannot read configuration ${path}: ${(e as Error).message}`, path); }
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
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`configuration ${path} is invalid:\n${lines.join('\n')}`, path, parsed.error.issues[0]?.path.join('.'));
  }
  return { config: Object.freeze(parsed.data), sha256: createHash('sha256').update(bytes).digest('hex'), path };
}
