/**
 * Progress on long work (issue 19): loading each dataset and evaluating each control report what
 * they are doing on stderr, never on stdout (which carries only the result). On a terminal one
 * live line is rewritten in place (`reckon: loading orders: 120,000 records, 3 files, 4.2 s`),
 * with the elapsed time ticking while DuckDB works; log lines are written above it. Otherwise
 * (a pipe, a log shipper) progress is JSON lines through the run's logger: one when a task starts,
 * at most one every PROGRESS_JSON_MS while it runs, one when it ends. `--quiet` shows none.
 */
import { createLogger, type LogSink, type RunLogger } from './log.js';

/** One piece of work: a dataset being loaded or a control being evaluated. */
export interface ProgressTask {
  /** Counters so far (records read, files): shown at once on a terminal, throttled as JSON lines. */
  update(counts: Readonly<Record<string, number>>): void;
  /** The task is over: the live line is cleared; as JSON, a last line with the elapsed time. */
  done(counts?: Readonly<Record<string, number>>): void;
}

/** Starts tasks; `log` is the run's logger (JSON lines carry its run id). */
export interface ProgressReporter {
  begin(phase: 'load' | 'evaluate', name: string, log: RunLogger): ProgressTask;
}

/** At most one JSON progress line per task this often (ms), besides its first and last. */
export const PROGRESS_JSON_MS = 2_000;
/** The live line's clock ticks this often (ms). */
const TICK_MS = 500;

const NO_TASK: ProgressTask = { update: () => undefined, done: () => undefined };

/** A reporter that shows nothing (`--quiet`, library use, tests). */
export const silentProgress: ProgressReporter = { begin: () => NO_TASK };

/**
 * The one live line of a terminal's stderr. `show` replaces it; `write` puts text above it (the
 * text must end with a newline) and shows the line again; `clear` removes it.
 */
export class TerminalLine {
  private line = '';
  constructor(private readonly sink: Pick<LogSink, 'stderr'>) {}
  show(text: string): void {
    this.sink.stderr(`\r\x1b[K${text}`);
    this.line = text;
  }
  clear(): void {
    if (this.line) this.sink.stderr('\r\x1b[K');
    this.line = '';
  }
  write(text: string): void {
    const line = this.line;
    this.clear();
    this.sink.stderr(text);
    if (line) this.show(line);
  }
}

const words: Readonly<Record<string, string>> = { records_read: 'records', files: 'files', differences: 'differences', quarantined: 'quarantined' };
const counted = (counts: Readonly<Record<string, number>>) => Object.entries(counts).map(([k, n]) => `${n.toLocaleString('en-US')} ${words[k] ?? k}`).join(', ');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The terminal reporter: one live line on `line`, its elapsed time ticking. */
export function terminalProgress(line: TerminalLine, now: () => number = () => performance.now()): ProgressReporter {
  return {
    begin(phase, name) {
      const t0 = now();
      let counts: Readonly<Record<string, number>> = {};
      const draw = () => {
        const c = counted(counts);
        line.show(`reckon: ${phase === 'load' ? 'loading' : 'evaluating'} ${name}${c ? `: ${c}` : ''}, ${seconds(now() - t0)}`);
      };
      draw();
      const timer = setInterval(draw, TICK_MS);
      timer.unref?.();
      return {
        update(c) { counts = c; draw(); },
        done() { clearInterval(timer); line.clear(); },
      };
    },
  };
}

/** The JSON-lines reporter: `progress` lines through the run logger, throttled per task. */
export function jsonProgress(now: () => number = () => performance.now()): ProgressReporter {
  return {
    begin(phase, name, log) {
      const t0 = now();
      let last = t0;
      const key = phase === 'load' ? 'dataset' : 'control';
      const emit = (state: string, c: Readonly<Record<string, number>>) => log.info('progress', { progress: state, phase, [key]: name, ...c, elapsed_ms: Math.round(now() - t0) });
      emit('start', {});
      return {
        update(c) {
          if (now() - last < PROGRESS_JSON_MS) return;
          last = now();
          emit('running', c);
        },
        done(c = {}) { emit('done', c); },
      };
    },
  };
}

/**
 * The logger and progress reporter of a command on `sink`: on a terminal, log lines above one live
 * progress line; otherwise JSON lines for both; with `quiet`, warnings only and no progress.
 */
export function operatorOutput(sink: LogSink, opts: { quiet?: boolean } = {}): { logger: RunLogger; progress: ProgressReporter } {
  if (sink.stderrIsTTY) {
    const line = new TerminalLine(sink);
    return { logger: createLogger(sink, { quiet: opts.quiet, line }), progress: opts.quiet ? silentProgress : terminalProgress(line) };
  }
  return { logger: createLogger(sink, { quiet: opts.quiet }), progress: opts.quiet ? silentProgress : jsonProgress() };
}
