/**
 * @duckdb/node-api, loaded with `require` when first asked for. The package is CommonJS spread
 * over about 120 modules: imported from an ES module, Node's loader lexes every one of them for
 * its named exports before loading them as CommonJS anyway, about 0.3 s of CPU on every run
 * (measured here: 530 ms against 230 ms through `require`). Types come from the package as usual
 * (`import type`); values through `duckdb()`. Commands that never open DuckDB never load it.
 */
import type * as DuckDB from '@duckdb/node-api';
import { lazyRequire } from './lazy-require.js';

/** The @duckdb/node-api module (loaded on the first call). */
export const duckdb = lazyRequire<typeof DuckDB>('@duckdb/node-api');
