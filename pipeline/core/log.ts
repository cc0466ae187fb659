/**
 * Operator logging (issue 7). Logs never go to stdout (stdout carries the summary or `--json`).
 * On a TTY, stderr shows short progress lines; otherwise stderr carries JSON lines (pino) with
 * `run_id`, and `control` and `window` where they apply, for log shippers. `--quiet` keeps only
 * warnings and errors.
 */
import pino from 'pino';

/** A small logger interface the pipeline uses. */
export interface RunLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): RunLogger;
}

/**
 * Where log lines go: the command's stderr (cli/io.ts CliIo fits). With `stderrFd`, JSON lines are
 * written to that descriptor synchronously (pino); without, through `stderr`.
 */
export interface LogSink {
  stderr(text: string): void;
  readonly stderrIsTTY: boolean;
  readonly stderrFd?: number;
}

/**
 * Creates the run logger on `sink`: TTY progress, JSON lines (pino), or quiet (`quiet`: warnings
 * only). On a terminal, `line` is the live progress line (core/progress.ts) log lines go above.
 */
export function createLogger(sink: LogSink, opts: { quiet?: boolean; json?: boolean; base?: Record<string, unknown>; line?: { write(text: string): void } } = {}): RunLogger {
  const tty = sink.stderrIsTTY && !opts.json;
  if (tty) return ttyLogger(opts.line ? { stderr: (t) => opts.line!.write(t) } : sink, opts.quiet ?? false, opts.base ?? {});
  const destination = sink.stderrFd !== undefined ? pino.destination({ fd: sink.stderrFd, sync: true }) : { write: (line: string) => sink.stderr(line) };
  const p = pino({ level: opts.quiet ? 'warn' : 'info', base: opts.base ?? {}, timestamp: pino.stdTimeFunctions.isoTime }, destination);
  const wrap = (l: pino.Logger): RunLogger => ({
    info: (msg, f) => l.info(f ?? {}, msg),
    warn: (msg, f) => l.warn(f ?? {}, msg),
    child: (f) => wrap(l.child(f)),
  });
  return wrap(p);
}

function ttyLogger(sink: Pick<LogSink, 'stderr'>, quiet: boolean, base: Record<string, unknown>): RunLogger {
  const prefix = (f: Record<string, unknown>) => (f.control ? `${f.control} ` : '');
  const make = (ctx: Record<string, unknown>): RunLogger => ({
    info: (msg, f) => { if (!quiet) sink.stderr(`reckon: ${prefix({ ...ctx, ...f })}${msg}\n`); },
    warn: (msg, f) => sink.stderr(`reckon: warning: ${prefix({ ...ctx, ...f })}${msg}\n`),
    child: (f) => make({ ...ctx, ...f }),
  });
  return make(base);
}

/** A logger that drops everything (library use and tests). */
export const silentLogger: RunLogger = { info: () => undefined, warn: () => undefined, child: () => silentLogger };
