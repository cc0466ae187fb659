/**
 * Small HTML building helpers for the run report. Every value that reaches the page goes through
 * `esc` (text and attribute values alike): inputs are hostile, so ids, details, file names and raw
 * quarantined text may hold markup, quotes or control characters. Nothing here emits a URL.
 */

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/**
 * Escapes any value for HTML text or a double-quoted attribute. `null`/`undefined` become an
 * empty string; control characters other than tab and newline are shown as `\xNN` so that they
 * are visible rather than silently swallowed by the HTML parser.
 */
export function esc(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? value : typeof value === 'bigint' ? value.toString() : String(value);
  return s
    .replace(/[&<>"'`]/g, (c) => ENTITIES[c])
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A table: header cells (already plain text) and rows of cells (raw HTML, callers escape); `rowAttrs[i]` (escaped by the caller) goes on row i. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], attrs = '', rowAttrs: readonly string[] = []): string {
  const head = `<thead><tr>${headers.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead>`;
  const body = rows.length === 0
    ? `<tbody><tr><td colspan="${headers.length}" class="none">none</td></tr></tbody>`
    : `<tbody>${rows.map((r, i) => `<tr${rowAttrs[i] ? ` ${rowAttrs[i]}` : ''}>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</tbody>`;
  return `<table${attrs ? ` ${attrs}` : ''}>${head}${body}</table>`;
}

/**
 * Seconds of an age in microseconds as exact decimal text (`50700`, `0.25`), and a short human
 * form (`14 h 5 min`). Ages are bigint microseconds so that SLA comparisons stay exact (CONTRACT §3).
 */
export function formatAge(ageUs: bigint): { seconds: string; human: string } {
  const neg = ageUs < 0n;
  const abs = neg ? -ageUs : ageUs;
  const whole = abs / 1_000_000n;
  const frac = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  const seconds = `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
  const d = whole / 86_400n, h = (whole % 86_400n) / 3_600n, m = (whole % 3_600n) / 60n, s = whole % 60n;
  const parts = d > 0n ? [`${d} d`, `${h} h`] : h > 0n ? [`${h} h`, `${m} min`] : m > 0n ? [`${m} min`, `${s} s`] : [`${seconds} s`];
  return { seconds, human: `${neg ? '−' : ''}${parts.join(' ')}` };
}
