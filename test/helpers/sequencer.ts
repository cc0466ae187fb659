/**
 * The order vitest starts the test files in (vitest.config.ts `sequence.sequencer`): longest first.
 * A file's expected time is its entry in SLOW_FILES (test/helpers/slow-files.ts, measured in a
 * whole `npm test`); files not listed come after every listed one, larger files first. Vitest's own
 * order needs a duration cache, which a fresh clone or CI does not have, and without one it could
 * start a long file last and leave the other worker idle meanwhile; longest-first (the LPT rule)
 * keeps the two workers' finishing times within about the shortest listed file of each other.
 */
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { SLOW_FILES } from './slow-files.js';

/** `file`'s expected milliseconds from SLOW_FILES (`test/x.test.ts` relative to `root`), or undefined. */
export function expectedMs(root: string, file: string): number | undefined {
  return SLOW_FILES[relative(root, file).split('\\').join('/')];
}

/** Sorts test files longest first: listed files by expected time, then the others by size. */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const size = (f: string) => { try { return statSync(f).size; } catch { return 0; } };
    const key = (s: TestSpecification) => ({ ms: expectedMs(root, s.moduleId) ?? -1, size: size(s.moduleId), id: s.moduleId });
    return files.map((s) => ({ s, k: key(s) }))
      .sort((a, b) => b.k.ms - a.k.ms || b.k.size - a.k.size || (a.k.id < b.k.id ? -1 : a.k.id > b.k.id ? 1 : 0))
      .map((x) => x.s);
  }
}
