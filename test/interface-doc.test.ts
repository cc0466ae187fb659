/**
 * docs/interface.md describes the interface in the project's words; this keeps it in step with
 * what the product runs on: every dataset's columns in order (pipeline/contract/datasets.ts),
 * every control's datasets and difference kinds (controls/rcNN/control.json), and the exit codes
 * (the same table as the README's). The README's command synopsis names exactly the options each
 * command's `--help` names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { reckonIn, ROOT } from './helpers/cli.js';
import { datasetTableDdl } from '../scripts/pg-datasets.js';

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

/** The README's synopsis (the code block under "## The command line"): each command's lines, keyed by the word after `reckon`. */
function synopsis(text: string): Map<string, string> {
  const block = text.slice(text.indexOf('## The command line')).split('```')[1];
  const out = new Map<string, string>();
  let command = '';
  for (const line of block.split('\n')) {
    const m = /^reckon ([a-z]+)/.exec(line);
    if (m) command = m[1];
    if (command) out.set(command, `${out.get(command) ?? ''}${line}\n`);
  }
  return out;
}

/** The `--options` a text names, sorted, without `--help`. */
const optionsIn = (text: string) => [...new Set(text.match(/--[a-z][a-z0-9-]*/g) ?? [])].filter((o) => o !== '--help').sort();

/** The `--help` invocations whose options a README synopsis command must name. */
const HELP: Record<string, string[][]> = {
  run: [['run']], runs: [['runs']], manifest: [['manifest', 'verify']], breaks: [['breaks']], records: [['records']],
  quarantine: [['quarantine']], schedule: [['schedule']], generate: [['generate']], import: [['import']],
  evidence: [['evidence', 'pack'], ['evidence', 'verify']], report: [['report']], athena: [['athena', 'ddl'], ['athena', 'query']], console: [['console']],
};

describe('the README command synopsis', () => {
  it('lists every command, and for each exactly the options its --help names', async () => {
    const readmeCommands = synopsis(readme);
    const top = await reckonIn(['--help']);
    const commands = [...new Set([...top.stdout.matchAll(/^ {2}reckon ([a-z]+)/gm)].map((m) => m[1]))].sort();
    expect(commands).toHaveLength(13);
    expect([...readmeCommands.keys()].sort()).toEqual(commands);
    expect(Object.keys(HELP).sort()).toEqual(commands);
    for (const [command, invocations] of Object.entries(HELP)) {
      let help = '';
      for (const args of invocations) {
        const r = await reckonIn([...args, '--help']);
        expect(r.code, args.join(' ')).toBe(0);
        help += r.stdout;
      }
      expect(optionsIn(readmeCommands.get(command)!), command).toEqual(optionsIn(help));
    }
  });
});

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

  it('gives the same exit codes as the README, which adds the signals\' 128 + n outside the contract', () => {
    const codes = (rows: string[][]) => rows.map((r) => r[0]);
    expect(codes(tableAfter(doc, '| exit code |'))).toEqual(['0', '1', '2', '3', '4', '5', '6', '70']);
    expect(codes(tableAfter(readme, '| code | meaning |'))).toEqual([...codes(tableAfter(doc, '| exit code |')), '130, 143']);
    expect(doc).toContain('130 for SIGINT, 143 for SIGTERM');
  });
});

describe('docs/postgres.md "The tables"', () => {
  it("lists every dataset's table as the tests and the benchmark create it (scripts/pg-datasets.ts)", () => {
    const pgDoc = readFileSync(join(ROOT, 'docs', 'postgres.md'), 'utf8');
    const block = pgDoc.slice(pgDoc.indexOf('## The tables')).split('```')[1];
    const tables = block.split('\n').filter((l) => l.startsWith('CREATE TABLE ') && !l.includes('projection_checkpoint'));
    expect(tables.sort()).toEqual(DATASETS.map((d) => datasetTableDdl(d.name)).sort());
  });
});
