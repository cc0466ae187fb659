#!/usr/bin/env node
// Committed shim (mode 755) so that `npx reckon` works right after `npm ci`, whose `prepare`
// step compiles TypeScript into dist/. See FIELD-NOTES "Running the CLI".
//
// The AWS SDK prints an 8-line warning on Node < 22 (its releases after January 2027 need Node 22)
// on every S3 or Athena command. reckon runs on Node 20, 22 and 24 and says this once, in
// `reckon --version` and the README; the SDK's repeat stays off unless the operator set the
// variable themselves (docs/operations.md).
if (process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED === undefined) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
import('../dist/pipeline/cli/main.js').then((m) => m.main(process.argv.slice(2))).then(
  (code) => { process.exitCode = code; },
  (err) => { process.stderr.write(`reckon: internal error: ${err && err.stack ? err.stack : err}\n`); process.exitCode = 70; },
);
