/**
 * The shared suite: checks against the shared specification folder that sits beside the
 * repository on the project's own machines (`../shared`: the public conformance cases and the
 * provider-format corpus). A user's clone has no such folder, so these checks are never part of
 * `npm test`; `npm run test:shared` runs them (vitest.shared.config.ts), and every describe block
 * here is skipped, saying why, when the folder is absent. The main suite covers the same rules on
 * fixtures it builds itself.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** `../shared` beside the repository. */
export const SHARED = resolve(ROOT, '..', 'shared');

/** Whether the shared folder is there. */
export const HAS_SHARED = existsSync(join(SHARED, 'conformance')) && existsSync(join(SHARED, 'corpus'));

/** Why a shared check did not run. */
export const SKIPPED_BECAUSE = `skipped: no shared folder at ${SHARED}`;

/**
 * `describe` when ../shared is there; otherwise the block's tests are not even collected and one
 * skipped test says why.
 */
export function describeShared(name: string, fn: () => void): void {
  if (HAS_SHARED) describe(name, fn);
  else describe(name, () => { it.skip(SKIPPED_BECAUSE, () => {}); });
}

/** Absolute path of a provider-format corpus file, e.g. `corpus('camt053/genkgo-v4.xml')`. */
export function corpus(rel: string): string {
  return join(SHARED, 'corpus', 'provider-formats', rel);
}
