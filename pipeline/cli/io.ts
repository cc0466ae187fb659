/**
 * The command line's only contact with its process: environment, working folder, stdout and
 * stderr. Every command writes through a CliIo, so the CLI runs the same in its own process
 * (`processIo()`, what bin/reckon.js passes) and inside another program or a test
 * (`captureIo()`, which keeps what was written). Nothing else in pipeline/ touches
 * process.stdout, process.stderr or process.env.
 */
import { resolve } from 'node:path';

/** What a command may read from and write to its surroundings. */
export interface CliIo {
  /** The environment the settings are read from (RECKON_*; core/settings.ts). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The folder relative paths on the command line are resolved against. */
  readonly cwd: string;
  /** Writes text to standard output (the summary, `--json`). */
  stdout(text: string): void;
  /** Writes text to standard error (logs, warnings, error lines). */
  stderr(text: string): void;
  /** True when stderr is a terminal: logs are then short progress lines, otherwise JSON lines. */
  readonly stderrIsTTY: boolean;
  /**
   * The file descriptor behind stderr, when there is one (2 for the process): the JSON log sink
   * writes to it synchronously, so log lines are not lost when the process is killed.
   */
  readonly stderrFd?: number;
}

/**
 * The process's own environment, working folder, stdout and stderr. A reader that stops reading
 * (`reckon manifest verify | head -1`) is not a failure of the command: once a stream says EPIPE
 * nothing more is written to it and the command keeps its own exit code (it was an unhandled
 * 'error' event, a stack trace and exit 1 — for `manifest verify`, "the store does not match").
 */
export function processIo(): CliIo {
  const write = closedAware(process.stdout);
  const writeErr = closedAware(process.stderr);
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: write,
    stderr: writeErr,
    stderrIsTTY: process.stderr.isTTY === true,
    stderrFd: 2,
  };
}

/** A writer to `stream` that stops writing once its reader has gone (EPIPE); any other stream error is thrown as before. */
export function closedAware(stream: NodeJS.WritableStream): (text: string) => void {
  let gone = false;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    gone = true;
  });
  return (text) => { if (!gone) stream.write(text); };
}

/** A CliIo that keeps what was written: `out` and `err` hold stdout and stderr so far. */
export interface CapturedIo extends CliIo {
  readonly out: string;
  readonly err: string;
}

/**
 * An in-memory CliIo for running commands inside another program or a test: exactly `env` (the
 * process's own environment is not merged in), `cwd` (default the process's), no terminal.
 */
export function captureIo(env: Readonly<Record<string, string | undefined>> = {}, opts: { cwd?: string; stderrIsTTY?: boolean } = {}): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    env: Object.freeze({ ...env }),
    cwd: opts.cwd ?? process.cwd(),
    stdout: (text) => { out.push(text); },
    stderr: (text) => { err.push(text); },
    stderrIsTTY: opts.stderrIsTTY ?? false,
    get out() { return out.join(''); },
    get err() { return err.join(''); },
  };
}

/** `path` resolved against the command's working folder; `s3://…` locations pass through. */
export function localOrRemote(io: Pick<CliIo, 'cwd'>, location: string): string {
  return location.startsWith('s3://') ? location : resolve(io.cwd, location);
}

/** Writes a JSON document to stdout followed by a newline (two-space indent). */
export function printJson(io: Pick<CliIo, 'stdout'>, doc: unknown): void {
  io.stdout(`${JSON.stringify(doc, null, 2)}\n`);
}
