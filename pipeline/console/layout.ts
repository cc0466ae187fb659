/**
 * The console's page frame: one server-rendered HTML page with its CSS inline, no script and no
 * external asset (it works offline and under `default-src 'none'`). Every value goes through
 * `esc` (report/html.ts); URLs the console builds are its own paths with escaped query values.
 */
import { esc } from '../report/html.js';

export { esc };

/** What every page shows in its header: who acts, whether the console writes, how the store verified. */
export interface Frame {
  readonly title: string;
  /** The signer the console acts as, or null (read-only). */
  readonly actor: { name: string; key: string } | null;
  /** Why the console does not write, or null when it does. */
  readonly readOnly: string | null;
  readonly store: string;
  readonly verification: { status: 'running' | 'ok' | 'failed'; problems: number };
  /** Which navigation entry is current. */
  readonly nav: 'queue' | 'runs' | 'ageing' | 'verify' | 'break';
}

const CSS = `
:root{color-scheme:light;--fg:#1b1f24;--mut:#57606a;--bd:#d0d7de;--bg:#fff;--hd:#f6f8fa;--bad:#b42318;--badbg:#fef3f2;--ok:#116329;--okbg:#ecfdf3;--warn:#8a4b00;--warnbg:#fff8e6;--ac:#0550ae}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--ac)}a:focus,button:focus,input:focus,select:focus,textarea:focus,summary:focus{outline:3px solid #f59e0b;outline-offset:1px}
.skip{position:absolute;left:-999px;top:0}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:9}
header{display:flex;gap:16px;align-items:center;padding:8px 16px;background:#24292f;color:#fff;flex-wrap:wrap}
header a{color:#fff;text-decoration:none;padding:4px 8px;border-radius:4px}header a[aria-current=page]{background:#57606a}
header .who{margin-left:auto;font-size:13px}main{padding:12px 16px}h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:20px 0 8px}
.banner{padding:8px 12px;border-radius:6px;margin:0 0 12px;border:1px solid}.bad{color:var(--bad);background:var(--badbg);border-color:#fda29b}
.ok{color:var(--ok);background:var(--okbg);border-color:#abefc6}.warn{color:var(--warn);background:var(--warnbg);border-color:#fedf89}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid var(--bd);padding:4px 6px;text-align:left;vertical-align:top}
th{background:var(--hd);position:sticky;top:0}td.num{text-align:right;font-variant-numeric:tabular-nums}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.tag{display:inline-block;padding:0 6px;border-radius:10px;font-size:12px;border:1px solid var(--bd)}.tag.bad,.tag.ok,.tag.warn{border-width:1px}
form.filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:flex-end;margin-bottom:10px;padding:8px;background:var(--hd);border-radius:6px}
form.filters label,.field label{display:block;font-size:12px;color:var(--mut)}input,select,textarea,button{font:inherit}
input[type=text],select,textarea{padding:3px 6px;border:1px solid var(--bd);border-radius:4px;background:#fff}button{padding:4px 10px;border:1px solid #8c959f;border-radius:4px;background:#f6f8fa;cursor:pointer}
button.primary{background:#1f883d;color:#fff;border-color:#1a7f37}.pager{display:flex;gap:8px;align-items:center;margin:8px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px}.card{border:1px solid var(--bd);border-radius:6px;padding:10px}
.field{margin:6px 0}.why{color:var(--mut);font-style:italic}dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}dl.kv dt{color:var(--mut)}
pre{white-space:pre-wrap;word-break:break-all;background:var(--hd);padding:8px;border-radius:6px;font-size:12px}
svg text{font:11px system-ui,sans-serif}.legend span{display:inline-block;margin-right:10px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
`;

const NAV: readonly [Frame['nav'], string, string][] = [['queue', '/', 'Queue'], ['runs', '/runs', 'Runs'], ['ageing', '/ageing', 'Ageing'], ['verify', '/verify', 'Store check']];

/** A whole page: `body` is HTML the caller built (escaping its values). */
export function page(f: Frame, body: string): string {
  const nav = NAV.map(([id, href, label]) => `<a href="${href}"${f.nav === id ? ' aria-current="page"' : ''}>${label}</a>`).join('');
  const who = f.actor ? `acting as <strong>${esc(f.actor.name)}</strong> <span class="mono">${esc(f.actor.key)}</span>` : '<strong>read-only</strong>';
  const banners = [
    f.readOnly ? `<p class="banner warn" role="status">Read-only console: ${esc(f.readOnly)}. Nothing can be changed here; actions are shown with why they are unavailable.</p>` : '',
    f.verification.status === 'failed' ? `<p class="banner bad" role="alert"><strong>This store fails verification</strong>: ${f.verification.problems} problem(s). Actions are refused until it verifies. <a href="/verify">See what failed</a>.</p>` : '',
    f.verification.status === 'running' ? '<p class="banner warn" role="status">The store is being verified; actions wait until it verifies.</p>' : '',
  ].join('');
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(f.title)} · reckon console</title><style>${CSS}</style></head><body>
<a class="skip" href="#main">Skip to content</a>
<header><strong>reckon console</strong><nav aria-label="Main">${nav}</nav><span class="who">${who} · store <span class="mono">${esc(f.store)}</span></span></header>
<main id="main" tabindex="-1">${banners}${body}</main></body></html>`;
}

/** A tag for a state or status: `bad`, `ok`, `warn` or plain. */
export function tag(text: string, tone: 'bad' | 'ok' | 'warn' | '' = ''): string {
  return `<span class="tag${tone ? ` ${tone}` : ''}">${esc(text)}</span>`;
}

/** `<option>`s of `values` with `current` selected; `any` adds a first empty option. */
export function options(values: readonly (string | readonly [string, string])[], current: string | null, any?: string): string {
  const opts = values.map((v) => (typeof v === 'string' ? [v, v] : v) as readonly [string, string]);
  return `${any !== undefined ? `<option value="">${esc(any)}</option>` : ''}${opts.map(([v, l]) => `<option value="${esc(v)}"${v === current ? ' selected' : ''}>${esc(l)}</option>`).join('')}`;
}

/** A labelled field: `control` is the input's HTML and must carry `id="${id}"`. */
export function field(id: string, label: string, control: string): string {
  return `<div class="field"><label for="${esc(id)}">${esc(label)}</label>${control}</div>`;
}
