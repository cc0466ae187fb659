/**
 * zod, configured once for reckon: every schema here (configuration, control definitions, sources
 * files, the manifest) is parsed a handful of times per run, so zod's JIT, which compiles each
 * object schema into a function with `new Function` on its first parse, costs more than it saves
 * (about 60 ms of a sample-day run's CPU, docs/performance.md). Import `z` from here, never from
 * 'zod' directly, so the setting is in force before the first parse.
 */
import { z } from 'zod';

z.config({ jitless: true });

export { z };
