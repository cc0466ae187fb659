/** Commands printed for people to paste (the "next:" lines of summaries and `breaks show`). */

/** A word safe to paste into a POSIX shell: as it is when plain, else single-quoted. */
export function shellWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`;
}

/** `reckon` and its arguments as one line to paste. */
export function reckonCommand(args: readonly string[]): string {
  return ['reckon', ...args.map(shellWord)].join(' ');
}
