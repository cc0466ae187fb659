/**
 * Settings from the environment, parsed once. Every `RECKON_*` variable is read and validated
 * here, at the command line's entry (cli/main.ts), into a frozen Settings object that is passed
 * down; no other module reads the environment (STYLE: parse, then evaluate). A bad value is a
 * ConfigError (exit 2) naming the variable, raised before a run takes any lease; every bad value
 * is named at once. Credentials, region and the SDK's own retries stay the AWS SDK's business
 * (its default chain reads them); reckon reads only the S3 endpoint and checksum switches it acts on.
 *
 *   RECKON_INLINE_TOTAL_KEYS       keyed totals up to this many keys are listed inline (default 10000)
 *   RECKON_DUCKDB_MEMORY_LIMIT     DuckDB's buffer-pool limit, e.g. 2GB, 2.5GB, 3000MB (default 2GB)
 *   RECKON_DUCKDB_STORAGE          memory | file | auto (default auto)
 *   RECKON_S3_ATTEMPTS, RECKON_S3_BACKOFF_BASE_MS, RECKON_S3_BACKOFF_CAP_MS   retries (6, 100, 20000)
 *   RECKON_S3_CONCURRENCY          parallel transfers, 1–64 (default 8)
 *   RECKON_S3_OBJECT_LOCK_DAYS     Object Lock retention in days, 1–36500 (default off)
 *   RECKON_S3_OBJECT_LOCK_PREFIXES locked key prefixes (default manifests/,evidence/)
 *   RECKON_CACHE                   on | off: the delivery cache (default on; load/delivery-cache.ts)
 *   RECKON_CACHE_DIR               where it lives (default `reckon-cache-<uid>` beside the run's scratch folder; the run's user's own)
 *   RECKON_CACHE_MAX_MB            its size bound in MiB, 1–10000000 (default 10240)
 *   RECKON_FAULT_PAUSE             crash tests only: `<phase>` or `<phase>:<ms>` (core/fault.ts)
 *   RECKON_SIGNING_KEY_FILE        a person's OpenSSH key for signing break transitions (`--key` wins);
 *                                  a public key file means: sign with its private half in ssh-agent
 *   RECKON_SIGNING_KEY             the private key's text itself (a CI secret), instead of a file
 *   RECKON_SIGNING_KEY_PASSPHRASE  the passphrase of a protected key; never printed
 *   RECKON_PIPELINE_KEY_FILE       the pipeline's OpenSSH key that signs manifests and evidence bags
 *                                  (the registry's `reconciler`; a .pub file: its private half in ssh-agent)
 *   RECKON_PIPELINE_KEY            that key's text itself (a CI secret), instead of a file
 *   RECKON_PIPELINE_KEY_PASSPHRASE its passphrase; never printed
 *   SSH_AUTH_SOCK                  the ssh-agent socket (pipeline/signing/agent.ts)
 *   AWS_ENDPOINT_URL_S3 (else AWS_ENDPOINT_URL), AWS_REQUEST_CHECKSUM_CALCULATION,
 *   AWS_RESPONSE_CHECKSUM_VALIDATION   an S3-compatible endpoint and whether the SDK's checksum choice stands
 */
import { ConfigError } from './errors.js';
import { Secret } from './secret.js';

/** Retry policy for throttling and transient S3 failures: attempts in all, base and cap of the backoff (ms). */
export interface RetryPolicy {
  readonly attempts: number;
  readonly baseMs: number;
  readonly capMs: number;
}

/** S3 Object Lock for published evidence: COMPLIANCE mode, retained `retainDays` from the write, on keys under `prefixes`. */
export interface ObjectLockPolicy {
  readonly mode: 'COMPLIANCE';
  readonly retainDays: number;
  /** Store-relative key prefixes that are locked, e.g. `manifests/`. */
  readonly prefixes: readonly string[];
}

/** An S3-compatible endpoint, when one is configured (AWS itself otherwise). */
export interface S3Endpoint {
  /** AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL; null for AWS itself. */
  readonly url: string | null;
  /** AWS_REQUEST_CHECKSUM_CALCULATION is set: the SDK's choice stands. */
  readonly requestChecksumSet: boolean;
  /** AWS_RESPONSE_CHECKSUM_VALIDATION is set: the SDK's choice stands. */
  readonly responseChecksumSet: boolean;
}

/** How reckon talks to S3 (store and sources). */
export interface S3Settings {
  readonly retry: RetryPolicy;
  /** Parallel transfers (downloads, part uploads). */
  readonly concurrency: number;
  readonly objectLock: ObjectLockPolicy | null;
  readonly endpoint: S3Endpoint;
}

/** The run phases a crash test can pause at (core/fault.ts). */
export const FAULT_PHASES = ['leased', 'extracting', 'loading', 'computing', 'planned', 'staged', 'signed', 'manifest_written', 'published', 'promoted', 'writing-breaks', 'breaks-written', 'completed'] as const;
export type FaultPhase = (typeof FAULT_PHASES)[number];

/** Where a crash test pauses a run: at `phase`, for `ms` milliseconds or (null) forever. */
export interface FaultPause {
  readonly phase: FaultPhase;
  readonly ms: number | null;
}

/** DuckDB storage: tables in memory, in a database file, or chosen by the estimated load size. */
export type StorageSetting = 'memory' | 'file' | 'auto';

/**
 * Where a person's signing key comes from (pipeline/signing/keys.ts). The key text and the
 * passphrase are Secrets: they print as `[redacted]` in any log, error or snapshot.
 */
export interface SigningSettings {
  /** RECKON_SIGNING_KEY_FILE: an OpenSSH private key file, or a public key file whose private half ssh-agent holds. */
  readonly keyFile: string | null;
  /** RECKON_SIGNING_KEY: the private key's own text. */
  readonly keyText: Secret | null;
  /** RECKON_SIGNING_KEY_PASSPHRASE: the passphrase of a protected private key. */
  readonly passphrase: Secret | null;
  /** SSH_AUTH_SOCK: the ssh-agent socket, or null when none is set. */
  readonly agentSocket: string | null;
  /** The pipeline's key (RECKON_PIPELINE_KEY_FILE, RECKON_PIPELINE_KEY, RECKON_PIPELINE_KEY_PASSPHRASE): signs manifests and bags. */
  readonly pipeline: { readonly keyFile: string | null; readonly keyText: Secret | null; readonly passphrase: Secret | null };
}

/** The delivery cache: on or off, its folder (null: `reckon-cache-<uid>` beside the run's scratch folder), its bound in bytes. */
export interface CacheSettings {
  readonly enabled: boolean;
  readonly dir: string | null;
  readonly maxBytes: number;
}

/** Every setting reckon takes from the environment, validated and frozen. */
export interface Settings {
  /** Keyed totals up to this many keys are listed inline (manifest, `--json`); larger ones are LargeTotals. */
  readonly inlineTotalKeys: number;
  readonly duckdb: { readonly memoryLimit: string; readonly storage: StorageSetting };
  readonly s3: S3Settings;
  readonly cache: CacheSettings;
  /** Crash tests only; null in normal operation. */
  readonly faultPause: FaultPause | null;
  readonly signing: SigningSettings;
}

/** Keyed totals up to this many keys are listed inline by default. */
export const INLINE_TOTAL_KEYS = 10_000;
/** DuckDB's buffer-pool limit by default; it spills to the run's temp folder beyond it. */
export const DUCKDB_MEMORY_LIMIT = '2GB';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads one variable: `dflt` when it is unset or empty, else `parse(value)`; when that is
 * undefined the value is bad, and `problem(value)` (naming the variable) is pushed to `problems`.
 */
function read<T>(env: Env, name: string, dflt: T, parse: (v: string) => T | undefined, problem: (v: string) => string, problems: string[]): T {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  const parsed = parse(v);
  if (parsed === undefined) problems.push(problem(v));
  return parsed ?? dflt;
}

/** Whole numbers from `min` to `max`, else undefined. */
const whole = (min: number, max: number) => (v: string): number | undefined => (/^[0-9]+$/.test(v) && Number(v) >= min && Number(v) <= max ? Number(v) : undefined);

function s3Settings(env: Env, problems: string[]): S3Settings {
  const int = (name: string, dflt: number) => read(env, name, dflt, whole(1, Number.MAX_SAFE_INTEGER), (v) => `${name}='${v}' must be an integer ≥ 1`, problems);
  const retry = { attempts: int('RECKON_S3_ATTEMPTS', 6), baseMs: int('RECKON_S3_BACKOFF_BASE_MS', 100), capMs: int('RECKON_S3_BACKOFF_CAP_MS', 20_000) };
  const concurrency = read(env, 'RECKON_S3_CONCURRENCY', 8, whole(1, 64), (v) => `RECKON_S3_CONCURRENCY='${v}' must be an integer from 1 to 64`, problems);
  const endpoint = {
    url: env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || null,
    requestChecksumSet: Boolean(env.AWS_REQUEST_CHECKSUM_CALCULATION),
    responseChecksumSet: Boolean(env.AWS_RESPONSE_CHECKSUM_VALIDATION),
  };
  return { retry, concurrency, objectLock: objectLock(env, problems), endpoint };
}

function objectLock(env: Env, problems: string[]): ObjectLockPolicy | null {
  const days = read<number | null>(env, 'RECKON_S3_OBJECT_LOCK_DAYS', null, whole(1, 36_500), (v) => `RECKON_S3_OBJECT_LOCK_DAYS='${v}' must be a whole number of days from 1 to 36500`, problems);
  if (days === null) return null;
  const prefixes = (env.RECKON_S3_OBJECT_LOCK_PREFIXES ?? 'manifests/,evidence/').split(',').map((p) => p.trim()).filter(Boolean);
  if (prefixes.some((p) => p.startsWith('_') || p.startsWith('/'))) problems.push('RECKON_S3_OBJECT_LOCK_PREFIXES must name published prefixes (not `_…` scratch keys, no leading `/`)');
  return { mode: 'COMPLIANCE', retainDays: days, prefixes };
}

/** Delivery cache size bound by default: 10 GiB. */
export const CACHE_MAX_MB = 10_240;

function cacheSettings(env: Env, problems: string[]): CacheSettings {
  const enabled = read(env, 'RECKON_CACHE', true, (v) => (v === 'on' ? true : v === 'off' ? false : undefined), (v) => `RECKON_CACHE '${v}' must be on or off`, problems);
  const dir = read<string | null>(env, 'RECKON_CACHE_DIR', null, (v) => (v.startsWith('/') ? v : undefined), (v) => `RECKON_CACHE_DIR '${v}' must be an absolute path`, problems);
  const mb = read(env, 'RECKON_CACHE_MAX_MB', CACHE_MAX_MB, whole(1, 10_000_000), (v) => `RECKON_CACHE_MAX_MB '${v}' must be a whole number of MiB from 1 to 10000000`, problems);
  return { enabled, dir, maxBytes: mb * 1024 * 1024 };
}

/** `<phase>` or `<phase>:<ms>`, else undefined. */
function faultPause(v: string): FaultPause | undefined {
  const [phase, ms, ...rest] = v.split(':');
  if (!(FAULT_PHASES as readonly string[]).includes(phase) || rest.length || (ms !== undefined && !/^[0-9]{1,7}$/.test(ms))) return undefined;
  return { phase: phase as FaultPhase, ms: ms === undefined ? null : Number(ms) };
}

function duckdbSettings(env: Env, problems: string[]): Settings['duckdb'] {
  const memoryLimit = read(env, 'RECKON_DUCKDB_MEMORY_LIMIT', DUCKDB_MEMORY_LIMIT, (v) => (/^[1-9][0-9]{0,5}(\.[0-9]{1,2})?(MB|GB)$/.test(v) ? v : undefined),
    (v) => `RECKON_DUCKDB_MEMORY_LIMIT '${v}' must be a size such as 2GB, 2.5GB or 3000MB`, problems);
  // Unset means auto; set, even to the empty string, it must be one of the three.
  const storage = env.RECKON_DUCKDB_STORAGE ?? 'auto';
  if (storage === 'memory' || storage === 'file' || storage === 'auto') return { memoryLimit, storage };
  problems.push(`RECKON_DUCKDB_STORAGE '${storage}' must be memory, file or auto`);
  return { memoryLimit, storage: 'auto' };
}

function signingSettings(env: Env, problems: string[]): SigningSettings {
  const keyFile = env.RECKON_SIGNING_KEY_FILE || null;
  const keyText = env.RECKON_SIGNING_KEY ? new Secret(env.RECKON_SIGNING_KEY) : null;
  if (keyFile && keyText) problems.push('RECKON_SIGNING_KEY_FILE and RECKON_SIGNING_KEY are both set: give the key one way');
  if (env.RECKON_PIPELINE_KEY_FILE && env.RECKON_PIPELINE_KEY) problems.push('RECKON_PIPELINE_KEY_FILE and RECKON_PIPELINE_KEY are both set: give the key one way');
  const pipeline = {
    keyFile: env.RECKON_PIPELINE_KEY_FILE || null,
    keyText: env.RECKON_PIPELINE_KEY ? new Secret(env.RECKON_PIPELINE_KEY) : null,
    passphrase: env.RECKON_PIPELINE_KEY_PASSPHRASE ? new Secret(env.RECKON_PIPELINE_KEY_PASSPHRASE) : null,
  };
  return {
    pipeline,
    keyFile, keyText,
    passphrase: env.RECKON_SIGNING_KEY_PASSPHRASE ? new Secret(env.RECKON_SIGNING_KEY_PASSPHRASE) : null,
    agentSocket: env.SSH_AUTH_SOCK || null,
  };
}

/**
 * Parses the settings from `env` (the command's environment, cli/io.ts). Returns them frozen;
 * throws one ConfigError (exit 2) naming every variable whose value is bad.
 */
export function parseSettings(env: Env): Settings {
  const problems: string[] = [];
  const inlineTotalKeys = read(env, 'RECKON_INLINE_TOTAL_KEYS', INLINE_TOTAL_KEYS, (v) => (/^[1-9][0-9]{0,8}$/.test(v) ? Number(v) : undefined),
    (v) => `RECKON_INLINE_TOTAL_KEYS '${v}' must be a positive integer`, problems);
  const duckdb = duckdbSettings(env, problems);
  const s3 = s3Settings(env, problems);
  const cache = cacheSettings(env, problems);
  const pause = read<FaultPause | null>(env, 'RECKON_FAULT_PAUSE', null, faultPause,
    (v) => `RECKON_FAULT_PAUSE '${v}' must be a phase (${FAULT_PHASES.join(', ')}), optionally with :<ms>`, problems);
  const signing = signingSettings(env, problems);
  if (problems.length) throw new ConfigError(problems.join('; '));
  return deepFreeze({ inlineTotalKeys, duckdb, s3, cache, faultPause: pause, signing });
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !(v instanceof Secret)) for (const x of Object.values(v)) deepFreeze(x);
  return Object.freeze(v);
}

/** The settings of an empty environment: every default, no endpoint, no fault pause (library use and tests). */
export const DEFAULT_SETTINGS: Settings = parseSettings({});
