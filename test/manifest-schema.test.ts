/**
 * The manifest schema is versioned (STYLE: artifacts are versioned schemas): an example manifest of
 * every version is kept here and must still read; an unknown version is rejected, not guessed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ControlStatus, Disposition, parseManifest, Trigger } from '../manifests/v1/schema.js';
import { ManifestVersionError } from '../pipeline/core/errors.js';
import { exitCodeOf } from '../pipeline/core/outcome.js';
import { findManifest } from '../pipeline/store/manifests.js';
import { LocalObjectStore } from '../pipeline/store/local-store.js';
import { ROOT, scratchDir } from './helpers/cli.js';

describe('manifest schema v1', () => {
  const example = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/manifest-v1-example.json'), 'utf8'));

  it('reads the kept example manifest of version 1', () => {
    const m = parseManifest(example);
    expect(m.manifest_version).toBe(1);
    expect(m.window).toEqual({ start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' });
    expect(m.results.map((r) => [r.control_id, r.status])).toEqual(['RC01', 'RC02', 'RC03', 'RC04', 'RC05', 'RC06'].map((c) => [c, 'BREAKS']));
  });

  it('rejects an unknown version instead of guessing', () => {
    expect(() => parseManifest({ ...example, manifest_version: 2 })).toThrow(/unknown manifest version 2/);
  });

  it('names the version expected and the one found in a typed error (exit 70), also when read from a store', async () => {
    const refusal = (doc: unknown) => { try { parseManifest(doc); return undefined; } catch (e) { return e; } };
    for (const [found, text] of [[2, '2'], ['1', '"1"'], [undefined, 'undefined'], [null, 'null']] as const) {
      const e = refusal({ ...example, manifest_version: found });
      expect(e).toBeInstanceOf(ManifestVersionError);
      expect([(e as ManifestVersionError).expected, (e as ManifestVersionError).found, (e as Error).message]).toEqual([1, found, `unknown manifest version ${text}; this reckon reads version 1`]);
      expect(exitCodeOf(e)).toBe(70);
    }
    expect(refusal(null)).toBeInstanceOf(ManifestVersionError);
    const tmp = scratchDir('reckon-manifest-version-');
    try {
      const store = new LocalObjectStore(tmp.dir);
      await store.putOnce(`manifests/00000001-${example.run_id}.json`, JSON.stringify({ ...example, manifest_version: 3 }));
      const e = await findManifest(store, example.run_id).catch((err: unknown) => err);
      expect([e instanceof ManifestVersionError, (e as ManifestVersionError).found]).toEqual([true, 3]);
    } finally { tmp.cleanup(); }
  });

  it('derives the result types from the schema: every disposition, status and trigger is an enum value', () => {
    expect(ControlStatus.options).toEqual(['CLEAN', 'BREAKS', 'NOT_READY', 'INCOMPLETE']);
    expect(Disposition.options).toEqual(['OPENED', 'REOBSERVED', 'REOPENED', 'TIMING', 'PROVISIONAL']);
    expect(Trigger.options).toEqual(['manual', 'scheduled-nightly', 'scheduled-intraday', 'incident']);
    const m = parseManifest(example);
    expect(new Set(m.results.flatMap((r) => r.differences.map((d) => d.disposition)))).toEqual(new Set(['REOBSERVED']));
    expect(() => parseManifest({ ...example, results: [{ ...example.results[0], differences: [{ ...example.results[0].differences[0], disposition: 'LOST' }] }] })).toThrow(/disposition/);
  });

  it('the exported JSON Schema is current', () => {
    const schema = JSON.parse(readFileSync(join(ROOT, 'manifests/v1/manifest.schema.json'), 'utf8'));
    expect(schema.title).toBe('reckon run manifest, version 1');
    expect(schema.required).toEqual(expect.arrayContaining(['manifest_version', 'run_id', 'window', 'results', 'results_digest', 'chain', 'outputs']));
  });
});
