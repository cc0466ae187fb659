/** Text helpers of the command line's human output. */

/** Control characters (a newline in a file name, a NUL in a value) shown as \xNN, so that one entry is one line. */
export function oneLine(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
