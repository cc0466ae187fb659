/**
 * Where a run's DuckDB keeps its tables (pipeline/engine.ts): the bundled sample day run with its
 * tables in a database file must give exactly the results of the run in memory (same results
 * digest, same differences), the manifest must say which storage and memory limit were used, and
 * a bad setting is a configuration error (exit 2) before anything is loaded, and a run DuckDB cannot
 * fit in its memory limit says so (exit 70) in words an operator can act on. The settings are
 * environment variables, which the CLI reads from its CliIo: the runs are in process (reckonHere).
 */
import { join } from 'node:path';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { estimateLoadBytes, explainOutOfMemory, openEngine, type Engine } from '../pipeline/load/engine.js';
import { ConfigError, InternalError } from '../pipeline/core/errors.js';
import { ROOT, reckonHere, scratchDir } from './helpers/cli.js';

const DAY = join(ROOT, 'fixtures', 'sample-day', 'sources');
const run = (store: string, env: NodeJS.ProcessEnv) =>
  reckonHere(['run', '--date', '2026-11-02', '--sources', DAY, '--store', store, '--json', '--quiet'], { env });

describe('DuckDB storage of a run', () => {
  const tmp = scratchDir('reckon-engine-');
  afterAll(() => tmp.cleanup());

  it('a database file gives the same results as memory, and the manifest records the choice', async () => {
    const mem = await run(join(tmp.dir, 'mem'), { RECKON_DUCKDB_STORAGE: 'memory' });
    const file = await run(join(tmp.dir, 'file'), { RECKON_DUCKDB_STORAGE: 'file', RECKON_DUCKDB_MEMORY_LIMIT: '1GB' });
    expect(mem.code, mem.stderr).toBe(1);
    expect(file.code, file.stderr).toBe(1);
    expect(file.json.results_digest).toBe(mem.json.results_digest);
    const keys = (r: typeof mem) => r.json.controls.flatMap((c: { differences: { kind: string; key: string }[] }) => c.differences.map((d) => `${d.kind} ${d.key}`));
    expect(keys(file)).toEqual(keys(mem));
    const runtime = (r: typeof mem) => JSON.parse(readFileSync(r.json.manifest.path, 'utf8')).runtime;
    expect([runtime(mem).duckdb_storage, runtime(mem).duckdb_memory_limit]).toEqual(['memory', '2GB']);
    expect([runtime(file).duckdb_storage, runtime(file).duckdb_memory_limit]).toEqual(['file', '1GB']);
  });

  it('auto keeps the small sample day in memory (its estimate is far below 4 GiB)', async () => {
    const estimate = await estimateLoadBytes(DAY, ['orders', 'ledger_postings']);
    expect(estimate).toBeGreaterThan(0);
    expect(estimate).toBeLessThan(4 * 1024 ** 3);
    const auto = await run(join(tmp.dir, 'auto'), {});
    expect(JSON.parse(readFileSync(auto.json.manifest.path, 'utf8')).runtime.duckdb_storage).toBe('memory');
  });

  it('out of memory: exit 70 naming what the run was doing and the setting to raise, no manifest', async () => {
    const store = join(tmp.dir, 'oom');
    const r = await run(store, { RECKON_DUCKDB_MEMORY_LIMIT: '1MB' });
    expect(r.code).toBe(70);
    expect(r.json.error.type).toBe('InternalError');
    expect(r.json.error.message).toMatch(/^DuckDB ran out of memory while loading \(memory_limit 1MB, tables in memory, /);
    expect(r.json.error.message).toContain('Raise RECKON_DUCKDB_MEMORY_LIMIT');
    // DuckDB's own advice (SET statements) does not apply to a reckon run and is left out.
    expect(r.json.error.message).not.toContain('Possible solutions');
    expect(existsSync(join(store, 'manifests'))).toBe(false);
  });

  it('out of memory: a full spill folder asks for disk space; other errors pass unchanged', () => {
    const engine = { storage: 'file', estimated_bytes: 25 * 1024 ** 3, memory_limit: '2GB' } as Engine;
    const spill = explainOutOfMemory(new Error('Out of Memory Error: failed to offload data block of size 256.0 KiB (18.6 GiB/18.6 GiB used).\nThis limit was set by the \'max_temp_directory_size\' setting.\n\nPossible solutions:\n* Increasing the memory limit'), 'evaluating RC03', engine);
    expect(spill).toBeInstanceOf(InternalError);
    expect((spill as Error).message).toBe('DuckDB ran out of memory while evaluating RC03 (memory_limit 2GB, tables in file, records estimated at 25.0 GiB in memory): ' +
      "Out of Memory Error: failed to offload data block of size 256.0 KiB (18.6 GiB/18.6 GiB used). This limit was set by the 'max_temp_directory_size' setting. " +
      "No manifest was written and the window's leases are released. DuckDB could not spill to its temp folder: free space where TMPDIR points " +
      '(a 10M-order day spills tens of GB) and rerun the window; docs/operations.md "Sizing a large day".');
    const config = new ConfigError('Out of Memory Error in a file name');
    expect(explainOutOfMemory(config, 'loading', engine)).toBe(config);
    const other = new Error('Binder Error: no such column');
    expect(explainOutOfMemory(other, 'loading', engine)).toBe(other);
  });

  it('tables in memory never checkpoint automatically; a database file keeps DuckDB\'s 16 MiB threshold', async () => {
    const threshold = async (storage: 'memory' | 'file') => {
      const dir = join(tmp.dir, `ckpt-${storage}`);
      mkdirSync(dir, { recursive: true });
      const engine = await openEngine(dir, 1024, { storage, memoryLimit: '1GB' });
      try {
        const conn = await engine.instance.connect();
        const r = await conn.runAndReadAll("SELECT current_setting('checkpoint_threshold')");
        conn.closeSync();
        return [engine.storage, r.getRows()[0][0]];
      } finally {
        engine.instance.closeSync();
      }
    };
    expect(await threshold('memory')).toEqual(['memory', '931.3 GiB']);
    expect(await threshold('file')).toEqual(['file', '16.0 MiB']);
  });

  it('refuses bad settings with exit 2 naming the variable', async () => {
    for (const [name, value] of [['RECKON_DUCKDB_STORAGE', 'disk'], ['RECKON_DUCKDB_MEMORY_LIMIT', '2 GB'], ['RECKON_DUCKDB_MEMORY_LIMIT', '-1GB']]) {
      const r = await run(join(tmp.dir, 'bad'), { [name]: value });
      expect([name, value, r.code]).toEqual([name, value, 2]);
      expect(r.json.error.message).toContain(name);
    }
  });
});
