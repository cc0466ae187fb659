#!/usr/bin/env node
// Committed shim (mode 755) so that `npx reckon` works right after `npm ci`, whose `prepare`
// step compiles TypeScript into dist/. See FIELD-NOTES "Running the CLI".
//
// The AWS SDK prints an 8-line warning on Node < 22 (its releases after January 2027 need Node 22)
// on every S3 or Athena command. reckon runs on Node 20, 22 and 24 and says this once, in
// `reckon --version` and the README; the SDK's repeat stays off unless the operator set the
// variable themselves (docs/operations.md).
if (process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED === undefined) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// One listener from the start, so that a signal never meets the default action, which ends the
// process with 130/143 ("stopped, run again") whatever it was doing — also just after a run
// completed and published, once its own handlers are gone. While a command handles signals itself
// (a run, the console) this one leaves them to it; otherwise it exits as the default would, or,
// once the command has returned, with the command's exit code.
const SIGNAL_CODES = { SIGINT: 130, SIGTERM: 143 };
let finished;
for (const s of Object.keys(SIGNAL_CODES)) {
  process.on(s, () => {
    if (finished === undefined && process.listenerCount(s) > 1) return;
    process.exit(finished ?? SIGNAL_CODES[s]);
  });
}
// Once the command has returned, the process exits with its code as soon as stdout and stderr are
// written: Node's own teardown (10-30 ms after a run: DuckDB's threads, the handles) closes every
// listener, and a signal then would still end the process as the default does.
function exitWith(code) {
  finished = code;
  // Also the code of a natural exit, should a stream never drain (stdout a pipe closed early).
  process.exitCode = code;
  const pending = [process.stdout, process.stderr].filter((s) => s.writableLength > 0);
  Promise.all(pending.map((s) => new Promise((r) => s.once('drain', r)))).then(() => process.exit(code));
}
import('../dist/pipeline/cli/main.js').then((m) => m.main(process.argv.slice(2))).then(
  (code) => exitWith(code),
  (err) => { process.stderr.write(`reckon: internal error: ${err && err.stack ? err.stack : err}\n`); process.exitCode = 70; },
);
