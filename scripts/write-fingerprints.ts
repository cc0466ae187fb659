/**
 * Build step (`npm run build`, `prepare`): computes the code fingerprint once, so that a run
 * stats the compiled files against the memo it leaves (dist/code-fingerprint.json) instead of
 * hashing them all (core/tree-digest.ts), and reads the controls once, so that the table check's
 * parse-tree names are in their memo (dist/sql-names.json, controls/names-memo.ts) and a run opens
 * no DuckDB to parse the control SQL. A run that finds either memo stale (a bare `tsc`, an edited
 * file) computes what changed and refreshes it, so skipping this step costs time, never correctness.
 */
import { loadControls } from '../pipeline/controls/definitions.js';
import { NAMES_MEMO } from '../pipeline/controls/names-memo.js';
import { CODE_MEMO, codeFingerprint } from '../pipeline/publish/fingerprint.js';

process.stdout.write(`code fingerprint ${await codeFingerprint()} (${CODE_MEMO})\n`);
process.stdout.write(`${(await loadControls()).length} controls read, their SQL names kept (${NAMES_MEMO})\n`);
