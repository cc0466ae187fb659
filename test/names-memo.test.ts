/**
 * The table check's names memo (pipeline/controls/names-memo.ts, issue 20): a statement's
 * parse-tree names are kept by the SHA-256 of its text under the parser's key, so a run parses the
 * control SQL once per build. Names from the memo are the names a fresh parse gives (readable and
 * refused statements alike); an entry of another shape, or a memo of another parser key, is
 * parsed again; a memo that cannot be written costs only the parsing.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../pipeline/core/digest.js';
import { SqlNames } from '../pipeline/controls/parse-tree.js';
import { scratchDir } from './helpers/cli.js';

const tmp = scratchDir('reckon-names-memo-');
afterAll(() => tmp.cleanup());

const STATEMENTS = [
  'CREATE OR REPLACE TEMP TABLE rc92_x AS WITH w AS (SELECT * FROM executions) SELECT dec_text(1), * FROM w, range(3)',
  'SELECT 1 FROM executions WHERE fill_qty > (SELECT max(ordered_qty) FROM orders)',
  'DELETE FROM executions',
  'SELECT FROM WHERE',
];

/** What a parser reads of STATEMENTS with the memo at `path`, and how many it had DuckDB parse. */
async function readWith(path: string): Promise<{ names: unknown[]; parsed: number }> {
  const parser = new SqlNames(path);
  try {
    const names = (await parser.read(STATEMENTS)).map((n) => (n instanceof Error ? { refused: n.reason } : n));
    return { names, parsed: parser.parsed };
  } finally {
    parser.close();
  }
}

describe('the table check names memo', () => {
  const first = join(tmp.dir, 'first.json');
  let fresh: Awaited<ReturnType<typeof readWith>>;

  it('parses what it lacks and keeps it; the same names come back from the memo', async () => {
    fresh = await readWith(first);
    expect(fresh.parsed).toBe(STATEMENTS.length);
    expect(fresh.names[0]).toMatchObject({ tables: ['executions', 'w'], ctes: ['w'], creates: { type: 'TABLE', name: 'rc92_x', temporary: true } });
    expect(fresh.names[2]).toEqual({ refused: 'only queries and CREATE … AS <query> can be checked' });
    expect((fresh.names[3] as { refused: string }).refused).toMatch(/^DuckDB cannot parse it/);
    // The same process reads the memo it wrote once; another process reads the file.
    expect(await readWith(first)).toEqual({ names: fresh.names, parsed: 0 });
    const copy = join(tmp.dir, 'copy.json');
    copyFileSync(first, copy);
    expect(await readWith(copy)).toEqual({ names: fresh.names, parsed: 0 });
  });

  it('parses again an entry of another shape, and everything under another parser key', async () => {
    const doc = JSON.parse(readFileSync(first, 'utf8')) as { parsers: Record<string, Record<string, unknown>> };
    const [key] = Object.keys(doc.parsers);
    const edited = join(tmp.dir, 'edited.json');
    writeFileSync(edited, JSON.stringify({ parsers: { [key]: { ...doc.parsers[key], [sha256Hex(STATEMENTS[1])]: { tables: 'executions' } } } }));
    expect(await readWith(edited)).toEqual({ names: fresh.names, parsed: 1 });
    const other = join(tmp.dir, 'other-key.json');
    writeFileSync(other, JSON.stringify({ parsers: { [`not-${key}`]: doc.parsers[key] } }));
    expect(await readWith(other)).toEqual({ names: fresh.names, parsed: STATEMENTS.length });
    // Both keys are kept, the parser's own last.
    expect(Object.keys((JSON.parse(readFileSync(other, 'utf8')) as typeof doc).parsers)).toEqual([`not-${key}`, key]);
  });

  it('works without a memo it can write', async () => {
    expect(await readWith(join(tmp.dir, 'no-such-folder', 'memo.json'))).toEqual({ names: fresh.names, parsed: STATEMENTS.length });
  });
});
