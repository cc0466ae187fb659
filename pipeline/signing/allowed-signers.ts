/**
 * The `allowed_signers` line format that `ssh-keygen -Y verify` and git's SSH signing read
 * (ssh-keygen(1) ALLOWED SIGNERS): `principals [options] keytype base64-key [comment]`, `#`
 * comments and blank lines ignored, fields split on white space except inside double quotes.
 * This module only tokenizes; registry.ts decides what reckon accepts.
 */

/** One signer line as written. `options` maps a lower-case option name to its value (true when it has none). */
export interface AllowedSignerLine {
  readonly line: number;
  readonly principals: string;
  readonly options: ReadonlyMap<string, string | true>;
  readonly keyType: string;
  readonly key: string;
  readonly comment: string;
}

/** A line that does not have the format, with its 1-based number. */
export interface LineProblem {
  readonly line: number;
  readonly message: string;
}

/** Splits on white space outside double quotes; quotes are kept in the tokens. Null for an unclosed quote. */
function tokens(text: string): string[] | null {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    if (!quoted && /\s/.test(ch)) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (quoted) return null;
  if (cur) out.push(cur);
  return out;
}

const unquote = (s: string) => (s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s);
const isKeyType = (s: string) => /^(ssh-|ecdsa-|sk-|rsa-)/.test(s);

/** `a,b="x,y",c` → options, splitting on commas outside quotes. Null when an option is malformed. */
function options(field: string): Map<string, string | true> | null {
  const out = new Map<string, string | true>();
  let cur = '';
  let quoted = false;
  const parts: string[] = [];
  for (const ch of field) {
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) { parts.push(cur); cur = ''; } else cur += ch;
  }
  parts.push(cur);
  for (const p of parts) {
    const m = /^([A-Za-z-]+)(?:=(.*))?$/.exec(p);
    if (!m) return null;
    out.set(m[1].toLowerCase(), m[2] === undefined ? true : unquote(m[2]));
  }
  return out;
}

/** Tokenizes an allowed_signers text into its signer lines and the lines that do not parse. */
export function parseAllowedSigners(text: string): { lines: AllowedSignerLine[]; problems: LineProblem[] } {
  const lines: AllowedSignerLine[] = [];
  const problems: LineProblem[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    const body = raw.trim();
    if (body === '' || body.startsWith('#')) return;
    const t = tokens(body);
    if (!t) { problems.push({ line, message: 'a double quote is not closed' }); return; }
    const [principals, second, ...rest] = t;
    let opts: Map<string, string | true> = new Map();
    let keyType = second;
    let after = rest;
    if (second !== undefined && !isKeyType(second)) {
      const parsed = options(second);
      if (!parsed) { problems.push({ line, message: `options '${second}' are not comma-separated name or name="value"` }); return; }
      opts = parsed;
      [keyType, ...after] = rest;
    }
    const [key, ...comment] = after;
    if (!keyType || !key) { problems.push({ line, message: 'expected: principal [options] key-type base64-key [comment]' }); return; }
    lines.push({ line, principals: unquote(principals), options: opts, keyType, key, comment: comment.join(' ') });
  });
  return { lines, problems };
}
