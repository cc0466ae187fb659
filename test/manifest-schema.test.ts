/**
 * The manifest schema is versioned (STYLE: artifacts are versioned schemas): an example manifest of
 * every version is kept here and must still read; an unknown version is rejected, not guessed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../manifests/v1/schema.js';
import { ROOT } from './helpers/cli.js';

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

  it('the exported JSON Schema is current', () => {
    const schema = JSON.parse(readFileSync(join(ROOT, 'manifests/v1/manifest.schema.json'), 'utf8'));
    expect(schema.title).toBe('reckon run manifest, version 1');
    expect(schema.required).toEqual(expect.arrayContaining(['manifest_version', 'run_id', 'window', 'results', 'results_digest', 'chain', 'outputs']));
  });
});
