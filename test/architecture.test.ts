/**
 * The layout shows the data flow (docs/architecture.md): every folder under `pipeline/` is one
 * stage, and a stage imports only itself and the stages before it in STAGES. The test reads every
 * import (static, `export … from` and dynamic `import()`) of `pipeline/` and fails on an import
 * that runs against the flow, on a file outside a known stage, and on any import cycle. It also
 * keeps the start of `reckon run` light (issue 20): the modules a run loads before it starts are
 * those its command imports statically, and heavy packages (DuckDB's 120 CommonJS modules, the AWS
 * SDK, Parquet readers, sshpk, …) are loaded only where they are used.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

/** The stages in flow order; side rooms (schedule … generate) and the command line come last. */
export const STAGES = [
  'core', 'contract', 'store', 'signing', 'sources', 'load', 'controls', 'config', 'breaks', 'outputs', 'publish', 'alerts', 'run',
  'schedule', 'report', 'inspect', 'evidence', 'athena', 'import', 'generate', 'console', 'cli',
] as const;

const PIPELINE = join(ROOT, 'pipeline');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Repository-relative paths of the TypeScript files `file` imports by a relative specifier. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom\s+|\bimport\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]);
  return specs.map((s) => relative(ROOT, normalize(join(dirname(file), s))).replace(/\.js$/, '.ts'));
}

const stageOf = (rel: string) => (rel.startsWith('pipeline/') ? rel.split('/')[1] : undefined);

type Graph = ReadonlyMap<string, readonly string[]>;

/** Imports of `graph` that run against the flow (or leave the known stages), as `from -> to`. */
function againstFlow(graph: Graph): string[] {
  const against: string[] = [];
  for (const [file, deps] of graph) {
    const from = STAGES.indexOf(stageOf(file) as never);
    for (const dep of deps) {
      const stage = stageOf(dep);
      if (stage === undefined) continue; // manifests/ (the schema) imports nothing of pipeline/
      const to = STAGES.indexOf(stage as never);
      if (from < 0 || to < 0 || to > from) against.push(`${file} -> ${dep}`);
    }
  }
  return against;
}

/** Every cycle found by a depth-first walk of `graph`, as `a -> b -> a`. */
function cyclesOf(graph: Graph): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (n: string) => {
    state.set(n, 'open');
    path.push(n);
    for (const d of graph.get(n) ?? []) {
      if (!graph.has(d)) continue;
      if (state.get(d) === 'open') cycles.push([...path.slice(path.indexOf(d)), d].join(' -> '));
      else if (!state.has(d)) visit(d);
    }
    path.pop();
    state.set(n, 'done');
  };
  for (const f of [...graph.keys()].sort()) if (!state.has(f)) visit(f);
  return cycles;
}

const graph: Graph = new Map(tsFiles(PIPELINE).map((f) => [relative(ROOT, f), importsOf(f)]));

describe('the pipeline layout', () => {
  it('has only stage folders at the top of pipeline/ (and the reference data folder)', () => {
    const top = readdirSync(PIPELINE, { withFileTypes: true }).map((e) => `${e.name}${e.isDirectory() ? '/' : ''}`);
    expect(top.filter((n) => !n.endsWith('/'))).toEqual([]);
    expect(top.filter((n) => !STAGES.includes(n.slice(0, -1) as never)).sort()).toEqual(['reference/']);
  });

  it('imports go with the flow: a stage imports only itself and earlier stages', () => {
    expect(againstFlow(graph)).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('reads every form of import, and the checks find a backward import, an unknown room and a cycle', () => {
    expect(importsOf(join(PIPELINE, 'cli', 'main.ts'))).toContain('pipeline/core/errors.ts');
    // Dynamic import() counts: main.ts loads each command module lazily.
    expect(importsOf(join(PIPELINE, 'cli', 'main.ts'))).toContain('pipeline/cli/run-command.ts');
    const fake: Graph = new Map([
      ['pipeline/load/a.ts', ['pipeline/breaks/b.ts', 'manifests/v1/schema.ts']],
      ['pipeline/breaks/b.ts', ['pipeline/load/a.ts']],
      ['pipeline/misc/c.ts', []],
      ['pipeline/core/d.ts', ['pipeline/misc/c.ts']],
    ]);
    expect(againstFlow(fake)).toEqual(['pipeline/load/a.ts -> pipeline/breaks/b.ts', 'pipeline/core/d.ts -> pipeline/misc/c.ts']);
    expect(cyclesOf(fake)).toEqual(['pipeline/breaks/b.ts -> pipeline/load/a.ts -> pipeline/breaks/b.ts']);
  });
});

/**
 * The specifiers `file` imports as values at load time: static `import … from` and `export … from`
 * (not `import type`, nor an import whose braces name only types, which TypeScript drops) and bare
 * `import '…'`; dynamic `import()` and `require` load later, only when called.
 */
function valueImportsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)([^'";]*?)\s*from\s+['"]([^'"]+)['"]/gm)) {
    const braces = /^\{([\s\S]*)\}$/.exec(m[1].trim());
    if (braces && braces[1].split(',').map((x) => x.trim()).filter(Boolean).every((x) => x.startsWith('type '))) continue;
    out.push(m[2]);
  }
  for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) out.push(m[1]);
  return out;
}

const staticValueImports = (file: string) => valueImportsOf(readFileSync(file, 'utf8'));

/** The packages (bare specifiers other than node:) that importing `entry` loads, with a file importing each. */
function packagesLoadedBy(entry: string): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of staticValueImports(file)) {
      if (spec.startsWith('.')) visit(normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts'));
      else if (!spec.startsWith('node:') && !packages.has(spec)) packages.set(spec, relative(ROOT, file));
    }
  };
  visit(join(ROOT, entry));
  return packages;
}

describe('a light start (issue 20)', () => {
  it('reckon run loads only the packages every run needs before it starts; the others are loaded where used', () => {
    const loaded = packagesLoadedBy('pipeline/cli/run-command.ts');
    expect([...loaded.keys()].sort()).toEqual(['lossless-json', 'luxon', 'p-limit', 'pino', 'zod']);
  });

  it('@duckdb/node-api is required through core/duckdb.ts only (imported from ES modules, its CommonJS files are lexed first: ~0.3 s)', () => {
    const importers = [...graph.keys()].filter((f) => staticValueImports(join(ROOT, f)).includes('@duckdb/node-api'));
    expect(importers).toEqual([]);
    expect(readFileSync(join(PIPELINE, 'core', 'duckdb.ts'), 'utf8')).toContain("lazyRequire<typeof DuckDB>('@duckdb/node-api')");
    expect(readFileSync(join(PIPELINE, 'core', 'lazy-require.ts'), 'utf8')).toContain('createRequire(import.meta.url)');
  });

  it('tells a value import from a type import and a later one', () => {
    const text = "import type { A } from 'a';\nimport { type B } from 'b';\nimport {\n  type C,\n  D,\n} from 'c';\nimport E from 'e';\nexport { F } from 'f';\nimport 'g';\nconst h = await import('h');\nexport type { I } from 'i';";
    expect(valueImportsOf(text)).toEqual(['c', 'e', 'f', 'g']);
  });
});
