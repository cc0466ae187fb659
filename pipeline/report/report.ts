/**
 * `reckon report`: renders one run's report page from a store (CONTRACT §6 manifest plus the break
 * logs of §5) and writes it once to a file. The page itself is built by `render-report.ts`.
 */
import { open } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { repoPath } from '../core/paths.js';
import type { ObjectStore } from '../store/object-store.js';
import { renderReport } from './render-report.js';
import { loadRunView, type RunView } from './run-view.js';

/** reckon's package version, shown in generated pages and bags. */
export function reckonVersion(): string {
  try {
    return (JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch { return 'unknown'; }
}

/** Renders the report of runs already loaded. `now` is the generation time (ISO-8601 UTC). */
export function reportHtml(runs: readonly RunView[], store: ObjectStore, now: Date = new Date(), title?: string): string {
  return renderReport(runs, { generated_at: now.toISOString(), store: store.location, version: reckonVersion(), title });
}

/**
 * Renders the report of `runId` and writes it to `outPath`, refusing to replace an existing file
 * (EEXIST is rethrown). Throws ConfigError (exit 2) when the store has no such run.
 */
export async function writeRunReport(store: ObjectStore, runId: string, outPath: string): Promise<{ bytes: number; run: RunView }> {
  const run = await loadRunView(store, runId);
  const html = reportHtml([run], store);
  const fh = await open(outPath, 'wx');
  try { await fh.writeFile(html, 'utf8'); } finally { await fh.close(); }
  return { bytes: Buffer.byteLength(html), run };
}
