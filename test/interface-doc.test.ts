/**
 * docs/interface.md describes the interface in the project's words; this keeps it in step with
 * what the product runs on: every dataset's columns in order (pipeline/contract/datasets.ts),
 * every control's datasets and difference kinds (controls/rcNN/control.json), and the exit codes
 * (the same table as the README's).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { ROOT } from './helpers/cli.js';

const doc = readFileSync(join(ROOT, 'docs', 'interface.md'), 'utf8');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The rows of the markdown table that follows `heading` (cells trimmed, header and rule dropped). */
function tableAfter(text: string, heading: string): string[][] {
  const lines = text.slice(text.indexOf(heading)).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(l.replace(/\\\|/g, '\u0000').split('|').slice(1, -1).map((c) => c.trim().replace(/\u0000/g, '|')));
  }
  return rows;
}

/** The column names a cell of the datasets table lists: each comma-separated item's first backquoted word(s). */
function columnsOf(cell: string): string[] {
  return cell.split(/,\s+/).flatMap((item) => [...item.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
}

describe('docs/interface.md', () => {
  it('lists every dataset with exactly its columns, in contract order', () => {
    const rows = tableAfter(doc, 'The datasets (');
    expect(rows.map((r) => r[0].replace(/`/g, ''))).toEqual(DATASETS.map((d) => d.name));
    for (const [name, cols] of rows) expect(columnsOf(cols), name).toEqual(DATASETS.find((d) => `\`${d.name}\`` === name)!.columns.map((c) => c.name));
  });

  it('lists the datasets each control reads, and every difference kind with its control', async () => {
    const reads = tableAfter(doc, 'Each control reads a fixed set');
    const controls = await loadControls();
    expect(reads).toEqual(controls.map((c) => [c.control_id, c.reads.join(', ')]));
    for (const c of controls) {
      const section = doc.slice(doc.indexOf(`**${c.control_id} `), doc.indexOf('\n\n**', doc.indexOf(`**${c.control_id} `) + 1));
      const kinds = tableAfter(section, '| kind |').flatMap((r) => [...r[0].matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]));
      expect(kinds, c.control_id).toEqual(c.difference_kinds);
    }
  });

  it('gives the same exit codes as the README', () => {
    const codes = (rows: string[][]) => rows.map((r) => r[0]);
    expect(codes(tableAfter(doc, '| exit code |'))).toEqual(['0', '1', '2', '3', '4', '5', '6', '70']);
    expect(codes(tableAfter(readme, '| code | meaning |'))).toEqual(codes(tableAfter(doc, '| exit code |')));
  });
});
