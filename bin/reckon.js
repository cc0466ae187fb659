#!/usr/bin/env node
// Committed shim (mode 755) so that `npx reckon` works right after `npm ci`, whose `prepare`
// step compiles TypeScript into dist/. See FIELD-NOTES "Running the CLI".
import('../dist/pipeline/cli/main.js').then((m) => m.main(process.argv.slice(2))).then(
  (code) => { process.exitCode = code; },
  (err) => { process.stderr.write(`reckon: internal error: ${err && err.stack ? err.stack : err}\n`); process.exitCode = 70; },
);
