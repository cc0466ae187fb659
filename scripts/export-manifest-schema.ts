/** Writes manifests/v1/manifest.schema.json from the zod schema (npm run manifest-schema). */
import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { ManifestV1 } from '../manifests/v1/schema.js';
import { repoPath } from '../pipeline/core/paths.js';

const schema = z.toJSONSchema(ManifestV1, { target: 'draft-2020-12', unrepresentable: 'any' });
writeFileSync(repoPath('manifests/v1/manifest.schema.json'), `${JSON.stringify({ $id: 'https://reckon.invalid/manifests/v1/manifest.schema.json', title: 'reckon run manifest, version 1', ...schema }, null, 2)}\n`);
