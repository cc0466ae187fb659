/**
 * Large keyed totals (controls.ts LargeTotal): a keyed total with more keys than the inline limit
 * leaves the manifest and `--json` for the `control_totals` output, and the run records its key
 * count and the SHA-256 of its listing. The bundled sample day is run twice by the real CLI: with
 * the default limit (everything inline) and with RECKON_INLINE_TOTAL_KEYS=2. The second run's
 * inline totals plus the rows of its control_totals Parquet file must equal the first run's
 * totals exactly, and the digests must be those of the listings rebuilt from the first run.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, reckon, scratchDir, type CliResult, reckonHere } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';

type Totals = Record<string, string | Record<string, string>>;
const DAY = join(ROOT, 'fixtures', 'sample-day', 'sources');

/** The listing of a keyed total: `key TAB value` lines in byte order of the key, joined by LF. */
function listingSha256(entries: Record<string, string>): string {
  const keys = Object.keys(entries).sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
  return createHash('sha256').update(keys.map((k) => `${k}\t${entries[k]}`).join('\n'), 'utf8').digest('hex');
}

function findFile(dir: string, name: string): string {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) { const f = findFile(p, name); if (f) return f; } else if (e.name === name) return p;
  }
  return '';
}

describe('keyed totals beyond the inline limit', () => {
  const tmp = scratchDir('reckon-large-totals-');
  let inline: CliResult;
  let large: CliResult;

  beforeAll(async () => {
    inline = await reckonHere(['run', '--date', '2026-11-02', '--sources', DAY, '--store', join(tmp.dir, 'a'), '--json', '--quiet']);
    large = await reckonHere(['run', '--date', '2026-11-02', '--sources', DAY, '--store', join(tmp.dir, 'b'), '--json', '--quiet'], { env: { RECKON_INLINE_TOTAL_KEYS: '2' } });
  });
  afterAll(() => tmp.cleanup());

  it('moves exactly the keyed totals with more than 2 keys out of --json, with their key count and listing digest', () => {
    expect(inline.code, inline.stderr).toBe(1);
    expect(large.code, large.stderr).toBe(1);
    let moved = 0;
    for (const c of inline.json.controls) {
      const other = large.json.controls.find((x: any) => x.control_id === c.control_id);
      for (const [name, v] of Object.entries(c.totals as Totals)) {
        if (typeof v === 'object' && Object.keys(v).length > 2) {
          moved += 1;
          expect(other.totals[name]).toBeUndefined();
          expect(other.large_totals[name]).toEqual({ keys: String(Object.keys(v).length), sha256: listingSha256(v) });
        } else {
          expect(other.totals[name]).toEqual(v);
          expect(other.large_totals?.[name]).toBeUndefined();
        }
      }
    }
    expect(moved).toBeGreaterThan(0);
    // The default run lists every total inline.
    expect(inline.json.controls.every((c: any) => c.large_totals === undefined)).toBe(true);
  });

  it('writes every entry of a large total to the control_totals output, exact, and the manifest verifies', async () => {
    const file = findFile(join(tmp.dir, 'b', 'outputs', 'control_totals'), 'part-00000.parquet');
    const rows = await withDuck(async (conn) => (await conn.runAndReadAll(`SELECT control_id, total_name, dim, value_text, value_integer::VARCHAR AS vi FROM read_parquet('${file}') ORDER BY 1, 2, 3`)).getRowObjectsJson());
    const fromOutput = new Map<string, Record<string, string>>();
    for (const r of rows) {
      if (r.dim === null) continue;
      const k = `${r.control_id}/${r.total_name}`;
      const m = fromOutput.get(k) ?? {};
      m[String(r.dim)] = String(r.value_text);
      fromOutput.set(k, m);
      if (!String(r.value_text).includes('.')) expect(String(r.vi)).toBe(String(BigInt(String(r.value_text))));
    }
    for (const c of inline.json.controls) {
      for (const [name, v] of Object.entries(c.totals as Totals)) {
        if (typeof v === 'object') expect(fromOutput.get(`${c.control_id}/${name}`)).toEqual(v);
      }
    }
    const verify = await reckonHere(['manifest', 'verify', '--store', join(tmp.dir, 'b')]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('refuses a limit that is not a positive integer (exit 2)', async () => {
    const r = await reckonHere(['run', '--date', '2026-11-02', '--sources', DAY, '--store', join(tmp.dir, 'c'), '--quiet'], { env: { RECKON_INLINE_TOTAL_KEYS: '0' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('RECKON_INLINE_TOTAL_KEYS');
  });
});
