/**
 * Build step (`npm run build`, `prepare`): computes the code fingerprint once, so that a run
 * stats the compiled files against the memo it leaves (dist/code-fingerprint.json) instead of
 * hashing them all (core/tree-digest.ts). A run that finds the memo stale (a bare `tsc`) hashes
 * what changed and refreshes it, so skipping this step costs time, never correctness.
 */
import { CODE_MEMO, codeFingerprint } from '../pipeline/publish/fingerprint.js';

process.stdout.write(`code fingerprint ${await codeFingerprint()} (${CODE_MEMO})\n`);
