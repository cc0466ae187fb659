/**
 * Settings parsed once (core/settings.ts): every RECKON_* variable is read and validated at the
 * command line's entry into a frozen object; a bad value is a ConfigError (exit 2) naming the
 * variable, before a run takes any lease; evaluation never reads the environment.
 */
import { existsSync } from 'node:fs';
import { inspect } from 'node:util';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../pipeline/core/errors.js';
import { DEFAULT_SETTINGS, parseSettings } from '../pipeline/core/settings.js';
import { ROOT, reckonIn, scratchDir } from './helpers/cli.js';

describe('parseSettings', () => {
  it('gives the defaults for an empty environment, frozen all the way down', () => {
    expect(parseSettings({})).toEqual({
      inlineTotalKeys: 10_000,
      duckdb: { memoryLimit: '2GB', storage: 'auto' },
      s3: {
        retry: { attempts: 6, baseMs: 100, capMs: 20_000 }, concurrency: 8, objectLock: null,
        endpoint: { url: null, requestChecksumSet: false, responseChecksumSet: false },
      },
      cache: { enabled: true, dir: null, maxBytes: 10_240 * 1024 * 1024 },
      faultPause: null,
      signing: { keyFile: null, keyText: null, passphrase: null, agentSocket: null, pipeline: { keyFile: null, keyText: null, passphrase: null } },
    });
    expect(Object.isFrozen(DEFAULT_SETTINGS) && Object.isFrozen(DEFAULT_SETTINGS.s3.retry) && Object.isFrozen(DEFAULT_SETTINGS.duckdb)).toBe(true);
  });

  it('reads every variable it knows', () => {
    const s = parseSettings({
      RECKON_INLINE_TOTAL_KEYS: '2', RECKON_DUCKDB_MEMORY_LIMIT: '2.5GB', RECKON_DUCKDB_STORAGE: 'file',
      RECKON_S3_ATTEMPTS: '3', RECKON_S3_BACKOFF_BASE_MS: '5', RECKON_S3_BACKOFF_CAP_MS: '50', RECKON_S3_CONCURRENCY: '64',
      RECKON_S3_OBJECT_LOCK_DAYS: '30', RECKON_S3_OBJECT_LOCK_PREFIXES: 'manifests/, evidence/ ,breaks/', RECKON_FAULT_PAUSE: 'computing:4000',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_SUPPORTED',
      RECKON_CACHE: 'off', RECKON_CACHE_DIR: '/var/cache/reckon', RECKON_CACHE_MAX_MB: '5',
    });
    expect(s).toEqual({
      inlineTotalKeys: 2,
      duckdb: { memoryLimit: '2.5GB', storage: 'file' },
      s3: {
        retry: { attempts: 3, baseMs: 5, capMs: 50 }, concurrency: 64,
        objectLock: { mode: 'COMPLIANCE', retainDays: 30, prefixes: ['manifests/', 'evidence/', 'breaks/'] },
        endpoint: { url: 'http://127.0.0.1:9', requestChecksumSet: true, responseChecksumSet: false },
      },
      cache: { enabled: false, dir: '/var/cache/reckon', maxBytes: 5 * 1024 * 1024 },
      faultPause: { phase: 'computing', ms: 4000 },
      signing: { keyFile: null, keyText: null, passphrase: null, agentSocket: null, pipeline: { keyFile: null, keyText: null, passphrase: null } },
    });
    expect(parseSettings({ AWS_ENDPOINT_URL_S3: 'http://a', AWS_ENDPOINT_URL: 'http://b', RECKON_FAULT_PAUSE: 'published' }).s3.endpoint.url).toBe('http://a');
    expect(parseSettings({ RECKON_FAULT_PAUSE: 'published' }).faultPause).toEqual({ phase: 'published', ms: null });
  });

  const bad: [string, string, string][] = [
    ['RECKON_INLINE_TOTAL_KEYS', '0', "RECKON_INLINE_TOTAL_KEYS '0' must be a positive integer"],
    ['RECKON_DUCKDB_MEMORY_LIMIT', '2 GB', "RECKON_DUCKDB_MEMORY_LIMIT '2 GB' must be a size such as 2GB, 2.5GB or 3000MB"],
    ['RECKON_DUCKDB_STORAGE', 'disk', "RECKON_DUCKDB_STORAGE 'disk' must be memory, file or auto"],
    ['RECKON_S3_ATTEMPTS', '0', "RECKON_S3_ATTEMPTS='0' must be an integer ≥ 1"],
    ['RECKON_S3_BACKOFF_CAP_MS', '1.5', "RECKON_S3_BACKOFF_CAP_MS='1.5' must be an integer ≥ 1"],
    ['RECKON_S3_CONCURRENCY', '65', "RECKON_S3_CONCURRENCY='65' must be an integer from 1 to 64"],
    ['RECKON_S3_OBJECT_LOCK_DAYS', '36501', "RECKON_S3_OBJECT_LOCK_DAYS='36501' must be a whole number of days from 1 to 36500"],
    ['RECKON_CACHE', 'yes', "RECKON_CACHE 'yes' must be on or off"],
    ['RECKON_CACHE_DIR', 'var/cache', "RECKON_CACHE_DIR 'var/cache' must be an absolute path"],
    ['RECKON_CACHE_MAX_MB', '0', "RECKON_CACHE_MAX_MB '0' must be a whole number of MiB from 1 to 10000000"],
    ['RECKON_FAULT_PAUSE', 'lunch', "RECKON_FAULT_PAUSE 'lunch' must be a phase (leased, extracting, loading, computing, planned, staged, signed, manifest_written, published, promoted, writing-breaks, breaks-written, completed), optionally with :<ms>"],
    ['RECKON_FAULT_PAUSE', 'staged:soon', "RECKON_FAULT_PAUSE 'staged:soon' must be a phase (leased, extracting, loading, computing, planned, staged, signed, manifest_written, published, promoted, writing-breaks, breaks-written, completed), optionally with :<ms>"],
  ];
  for (const [name, value, message] of bad) {
    it(`refuses ${name}=${value} with a ConfigError naming it`, () => {
      const e = (() => { try { parseSettings({ [name]: value }); return undefined; } catch (err) { return err; } })();
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as Error).message).toBe(message);
    });
  }

  it('reads the signing key settings and never prints a key or passphrase', () => {
    const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n';
    const s = parseSettings({ RECKON_SIGNING_KEY: key, RECKON_SIGNING_KEY_PASSPHRASE: 'hunter2', SSH_AUTH_SOCK: '/tmp/agent.sock' });
    expect(s.signing.keyText?.reveal()).toBe(key);
    expect(s.signing.passphrase?.reveal()).toBe('hunter2');
    expect(s.signing.agentSocket).toBe('/tmp/agent.sock');
    const printed = [JSON.stringify(s), String(s.signing.keyText), `${s.signing.passphrase}`, inspect(s, { depth: 9 })].join('\n');
    expect(printed).not.toContain('OPENSSH');
    expect(printed).not.toContain('hunter2');
    expect(printed).toContain('[redacted]');
    expect(parseSettings({ RECKON_SIGNING_KEY_FILE: 'keys/olivia' }).signing.keyFile).toBe('keys/olivia');
    expect(() => parseSettings({ RECKON_SIGNING_KEY_FILE: 'k', RECKON_SIGNING_KEY: key })).toThrow('RECKON_SIGNING_KEY_FILE and RECKON_SIGNING_KEY are both set: give the key one way');
  });

  it('names every bad variable at once', () => {
    expect(() => parseSettings({ RECKON_DUCKDB_STORAGE: 'disk', RECKON_S3_CONCURRENCY: '0', RECKON_S3_OBJECT_LOCK_DAYS: '7', RECKON_S3_OBJECT_LOCK_PREFIXES: '_staging/' }))
      .toThrow("RECKON_DUCKDB_STORAGE 'disk' must be memory, file or auto; RECKON_S3_CONCURRENCY='0' must be an integer from 1 to 64; "
        + 'RECKON_S3_OBJECT_LOCK_PREFIXES must name published prefixes (not `_…` scratch keys, no leading `/`)');
  });
});

describe('settings at the command line', () => {
  const tmp = scratchDir('reckon-settings-');
  afterAll(() => tmp.cleanup());

  it('a bad value exits 2 naming the variable, before the run opens its store or takes a lease', async () => {
    const store = join(tmp.dir, 'store');
    const r = await reckonIn(['run', '--date', '2026-11-02', '--sources', join(ROOT, 'fixtures', 'sample-day', 'sources'), '--store', store, '--json'], { env: { RECKON_S3_CONCURRENCY: 'many' } });
    expect([r.code, r.json.error.type, r.json.error.message]).toEqual([2, 'ConfigError', "RECKON_S3_CONCURRENCY='many' must be an integer from 1 to 64"]);
    expect(r.stderr).toBe("reckon: ConfigError: RECKON_S3_CONCURRENCY='many' must be an integer from 1 to 64\n");
    expect(existsSync(store)).toBe(false);
  });

  it('reads the environment of the io it is given, not the process’s', async () => {
    process.env.RECKON_DUCKDB_STORAGE = 'disk';
    try {
      const r = await reckonIn(['runs', '--store', join(tmp.dir, 'none'), '--json']);
      expect(r.json.error.message).toBe(`--store ${join(tmp.dir, 'none')}: no store there`);
    } finally {
      delete process.env.RECKON_DUCKDB_STORAGE;
    }
  });
});
