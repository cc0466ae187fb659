/**
 * The run report (`report.html`): one static HTML file that an operator can read at 02:00 and an
 * auditor can file. It loads nothing (a Content-Security-Policy of `default-src 'none'` forbids any
 * fetch), has no script, and works with JavaScript off; charts are inline SVG, colours come with
 * text labels. Everything shown comes from the run's manifest and the break logs (CONTRACT §5–§6),
 * and every value is escaped (inputs are hostile).
 *
 * Stable hooks for tests and readers: each run is an `<article class="run" data-run="…">`; each
 * control row is `tr[data-control="RC01"]` with its status in `.status`; sections carry ids
 * `headline`, `owners`, `controls`, `differences-by-kind`, `breaks`, `differences`, `totals`,
 * `watermarks`, `quarantine`, `summary` (provenance and hashes, last); each break row is
 * `tr#break-<id>` with its history, and a difference's break links to it (suffixed `-<n>` for the n-th run after the first).
 */
import { runOutcome } from '../core/outcome.js';
import { BREAK_STATES } from '../breaks/states.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';
import { reckonCommand } from '../core/shell.js';
import { humanDuration } from '../core/duration.js';
import { esc, formatAge, table } from './html.js';
import type { BreakView, RunView, SlaClass } from './run-view.js';

/** Rows shown in a list before the rest is left to the Parquet outputs. */
export const LIST_LIMIT = 500;

/** What `renderReport` needs besides the runs. */
export interface ReportMeta {
  /** ISO-8601 UTC time the page was generated. */
  readonly generated_at: string;
  /** Store location shown in the header (text only). */
  readonly store: string;
  /** Page title; defaults to the run id, or the scope for several runs. */
  readonly title?: string;
  /** reckon version that rendered the page. */
  readonly version?: string;
}

const SLA_LABEL: Readonly<Record<SlaClass, string>> = { ok: 'within SLA', near: '≥ 75 % of SLA', breached: 'SLA breached', unknown: 'age unknown' };
const SLA_COLOUR: Readonly<Record<SlaClass, string>> = { ok: '#2e7d32', near: '#e0a100', breached: '#c62828', unknown: '#8a8a8a' };
const SLA_ORDER: readonly SlaClass[] = ['breached', 'near', 'ok', 'unknown'];

const CSS = `
:root{color-scheme:light}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;padding:16px 24px 48px;color:#1b1b1b;background:#fff;max-width:1400px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:2px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
header.page{border-bottom:3px solid #1b1b1b;margin-bottom:12px;padding-bottom:8px}
.muted{color:#555}.mono,td.num,code{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
table{border-collapse:collapse;margin:4px 0 10px;min-width:40%}th,td{border:1px solid #cfcfcf;padding:3px 8px;text-align:left;vertical-align:top}
thead th{background:#f1f1f1}td.num{text-align:right;white-space:nowrap}td.none{color:#777;font-style:italic}
td,th{overflow-wrap:break-word}.mono,.tok{overflow-wrap:normal;word-break:keep-all;white-space:nowrap}td.num,td .num,.badge,.status,.nowrap{white-space:nowrap}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:6px 0}dl.facts dt{font-weight:600}dl.facts dd{margin:0}
.status{font-weight:700;white-space:nowrap}
.badge{display:inline-block;padding:1px 8px;border-radius:3px;color:#fff;font-weight:700;font-size:12.5px}
.st-CLEAN{background:#2e7d32}.st-BREAKS{background:#c62828}.st-NOT_READY{background:#b26a00}.st-INCOMPLETE{background:#6a1b9a}
.sla-ok{color:#2e7d32}.sla-near{color:#8a6500}.sla-breached{color:#c62828;font-weight:700}.sla-unknown{color:#666}
.wm-ok{color:#2e7d32}.wm-late{color:#c62828;font-weight:700}.wm-none{color:#666}
details{margin:4px 0 10px}summary{cursor:pointer;font-weight:600}
svg text{font:12px system-ui,"DejaVu Sans",sans-serif}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
article.run{margin-top:8px}h2.run-title{font-size:20px;border-bottom:3px solid #1b1b1b}article.run+article.run{border-top:4px double #999;margin-top:36px;padding-top:8px}
section.headline{border:2px solid #1b1b1b;padding:8px 14px;margin:8px 0 4px}.headline .big{font-size:18px;margin:4px 0}.headline .big strong{font-size:22px}
ol.first-steps li{margin:2px 0}tr:target{outline:3px solid #e0a100}ul.history{margin:0;padding-left:16px}
@media print{details{display:block}body{padding:0}}
`;

/** Renders the report for one or more runs. Pure: same input, same bytes. */
export function renderReport(runs: readonly RunView[], meta: ReportMeta): string {
  const title = meta.title ?? (runs.length === 1 ? `reckon run ${runs[0].stored.run_id}` : `reckon evidence: ${runs.length} runs`);
  const parts: string[] = [];
  parts.push('<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="referrer" content="no-referrer">', '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)}</title><style>${CSS}</style></head><body>`);
  parts.push(`<header class="page"><h1>${esc(title)}</h1><div class="muted">Generated ${esc(meta.generated_at)} by reckon${meta.version ? ` ${esc(meta.version)}` : ''} from store <span class="mono">${esc(meta.store)}</span>. Static page: no script, no network; all figures from the run manifests and break logs.</div></header>`);
  if (runs.length === 0) parts.push('<p class="none">No runs in scope.</p>');
  if (runs.length > 1) parts.push(runIndex(runs));
  runs.forEach((r, i) => parts.push(renderRun(r, i === 0 ? '' : `-${i}`, runs.length > 1, meta.store)));
  parts.push('</body></html>');
  return `${parts.join('\n')}\n`;
}

function runIndex(runs: readonly RunView[]): string {
  const rows = runs.map((r) => {
    const m = r.stored.manifest;
    return [`<span class="mono">${esc(m.run_id)}</span>`, esc(`[${m.window.start}, ${m.window.end})`), esc(m.trigger), statusBadge(overallStatus(m)), `<span class="mono">${esc(m.parent_run_id ?? '')}</span>`];
  });
  return `<section id="runs"><h2>Runs in scope</h2>${table(['Run', 'Window (half-open)', 'Trigger', 'Status', 'Rerun of'], rows)}</section>`;
}

/** The run's overall status from its control results, ranked as everywhere else (core/outcome.ts). */
function overallStatus(m: ManifestV1): string {
  return runOutcome(m.results).status;
}

function statusBadge(status: string): string {
  const cls = /^[A-Z_]+$/.test(status) ? ` st-${status}` : '';
  return `<span class="badge${cls}">${esc(status)}</span>`;
}

function renderRun(view: RunView, sfx: string, titled: boolean, store: string): string {
  const m = view.stored.manifest;
  const out: string[] = [`<article class="run" data-run="${esc(m.run_id)}" id="run-${esc(m.run_id)}">`];
  if (titled) out.push(`<h2 class="run-title">Run <span class="mono">${esc(m.run_id)}</span> ${statusBadge(overallStatus(m))}</h2>`);
  out.push(headline(view, sfx), owners(view, sfx, store), controls(view, sfx), differencesByKind(m, sfx), breaks(view, sfx), differences(m, sfx), totals(m, sfx), watermarks(m, sfx), quarantine(m, sfx), notes(m), summary(view, sfx));
  out.push('</article>');
  return out.join('\n');
}

function summary(view: RunView, sfx: string): string {
  const m = view.stored.manifest;
  const code = m.code;
  const facts: [string, string][] = [
    ['Run', `<span class="mono">${esc(m.run_id)}</span> ${statusBadge(overallStatus(m))}`],
    ['Window', `<span class="mono">[${esc(m.window.start)}, ${esc(m.window.end)})</span> <span class="muted">half-open: start ≤ t &lt; end, UTC</span>`],
    ['Trigger', esc(m.trigger)],
    ['Reason', m.reason === null ? '<span class="muted">none</span>' : esc(m.reason)],
    ['Rerun of', m.parent_run_id === null ? '<span class="muted">not a rerun</span>' : `<span class="mono">${esc(m.parent_run_id)}</span>`],
    ['Started / finished', `<span class="mono">${esc(m.started_at)}</span> / <span class="mono">${esc(m.finished_at)}</span>`],
    ['Manifest', `<span class="mono">${esc(view.stored.key)}</span> (sequence ${esc(m.chain.sequence)})`],
    ['Manifest SHA-256', `<span class="mono">${esc(view.stored.sha256)}</span>`],
    ['Previous manifest', m.chain.previous_manifest_sha256 === null ? '<span class="muted">none: first in the chain</span>' : `<span class="mono">${esc(m.chain.previous_manifest_sha256)}</span>`],
    ['Results digest', `<span class="mono">${esc(m.results_digest)}</span>`],
    ['Sources', `<span class="mono">${esc(m.sources.location)}</span>`],
    ['Code', `reckon ${esc(code.version)}${code.commit ? ` <span class="mono">${esc(code.commit)}</span>` : ''}; ${esc(code.sql.length)} SQL files, configuration <span class="mono">${esc(code.config.path ?? 'defaults')}</span> SHA-256 <span class="mono">${esc(code.config.sha256)}</span>`],
    ['Money', `rounding ${esc(m.rounding_mode)}; currency table SHA-256 <span class="mono">${esc(m.currency_table.sha256)}</span>`],
  ];
  return `<section id="summary${sfx}"><h2>Provenance and hashes</h2><dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl></section>`;
}

function controls(view: RunView, sfx: string): string {
  const m = view.stored.manifest;
  const rows = m.results.map((r) => {
    const open = view.breaks.filter((b) => b.control_id === r.control_id && b.state !== 'CLOSED' && b.state !== 'VERIFIED' && b.state !== 'NOT_OPENED').length;
    const breached = view.breaks.filter((b) => b.control_id === r.control_id && b.sla === 'breached' && b.state !== 'CLOSED' && b.state !== 'VERIFIED' && b.state !== 'NOT_OPENED').length;
    const why = [...r.readiness.reasons.map((x) => `not ready: ${x}`), ...(r.quarantined_datasets.length ? [`quarantined input in: ${r.quarantined_datasets.join(', ')}`] : [])];
    const timing = r.differences.filter((d) => d.disposition === 'TIMING').length;
    return `<tr data-control="${esc(r.control_id)}"><th scope="row">${esc(r.control_id)}</th>`
      + `<td class="status"><span class="badge st-${esc(r.status)}">${esc(r.status)}</span></td>`
      + `<td class="mono nowrap">${esc(r.as_of ?? 'none')}</td><td class="num">${esc(r.differences.length)}</td><td class="num">${esc(timing)}</td>`
      + `<td class="num">${esc(open)}</td><td class="num${breached ? ' sla-breached' : ''}">${esc(breached)}</td>`
      + `<td>${why.length ? why.map((w) => esc(w)).join('<br>') : '<span class="muted">ready</span>'}</td>`
      + `<td>${ownerCell(view.owners?.(r.control_id)?.owner_name, view.owners?.(r.control_id)?.owner)}</td></tr>`;
  });
  const head = ['Control', 'Status', 'As-of', 'Differences', 'of which TIMING', 'Open breaks', 'Open and SLA breached', 'Readiness', 'Owner'];
  return `<section id="controls${sfx}"><h2>Controls</h2><table class="controls"><thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}

function differencesByKind(m: ManifestV1, sfx: string): string {
  const rows: string[][] = [];
  for (const r of m.results) {
    const byKind = new Map<string, Map<string, number>>();
    for (const d of r.differences) {
      const k = byKind.get(d.kind) ?? new Map<string, number>();
      k.set(d.disposition, (k.get(d.disposition) ?? 0) + 1);
      byKind.set(d.kind, k);
    }
    for (const [kind, disp] of [...byKind].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const n = [...disp.values()].reduce((a, b) => a + b, 0);
      rows.push([esc(r.control_id), `<span class="mono">${esc(kind)}</span>`, `<span class="num">${esc(n)}</span>`, [...disp].map(([d, c]) => `${esc(d)} ${esc(c)}`).join(', ')]);
    }
  }
  return `<section id="differences-by-kind${sfx}"><h2>Differences by kind</h2>${table(['Control', 'Kind', 'Count', 'Dispositions'], rows, 'class="by-kind"')}</section>`;
}

const AGE_BUCKETS: readonly { label: string; max_s: bigint | null }[] = [
  { label: '≤ 1 min', max_s: 60n }, { label: '≤ 5 min', max_s: 300n }, { label: '≤ 1 h', max_s: 3_600n }, { label: '≤ 6 h', max_s: 21_600n },
  { label: '≤ 1 d', max_s: 86_400n }, { label: '≤ 7 d', max_s: 604_800n }, { label: '> 7 d', max_s: null },
];

function ageBucket(ageUs: bigint | null): string {
  if (ageUs === null) return 'unknown';
  for (const b of AGE_BUCKETS) if (b.max_s === null || ageUs <= b.max_s * 1_000_000n) return b.label;
  return '> 7 d';
}

/** A horizontal stacked-bar chart in inline SVG: one row per label, one segment per SLA class, counts written beside. */
function stackedChart(id: string, caption: string, rows: readonly { label: string; counts: Readonly<Record<SlaClass, number>> }[]): string {
  const labelW = 130, barW = 460, rowH = 26, top = 8;
  const max = Math.max(1, ...rows.map((r) => SLA_ORDER.reduce((a, c) => a + r.counts[c], 0)));
  const height = top + rows.length * rowH + 8;
  const g: string[] = [];
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    const total = SLA_ORDER.reduce((a, c) => a + r.counts[c], 0);
    g.push(`<text x="${labelW - 8}" y="${y + 16}" text-anchor="end">${esc(r.label)}</text>`);
    g.push(`<rect x="${labelW}" y="${y + 3}" width="${barW}" height="${rowH - 8}" fill="#f3f3f3"/>`);
    let x = labelW;
    for (const c of SLA_ORDER) {
      const n = r.counts[c];
      if (n === 0) continue;
      const w = Math.max(2, Math.round((n / max) * barW));
      g.push(`<rect class="seg seg-${c}" x="${x}" y="${y + 3}" width="${w}" height="${rowH - 8}" fill="${SLA_COLOUR[c]}"><title>${esc(`${r.label}: ${n} ${SLA_LABEL[c]}`)}</title></rect>`);
      x += w;
    }
    const detail = SLA_ORDER.filter((c) => r.counts[c] > 0).map((c) => `${r.counts[c]} ${SLA_LABEL[c]}`).join(', ');
    g.push(`<text x="${labelW + barW + 8}" y="${y + 16}">${esc(total)}${detail ? esc(`: ${detail}`) : ''}</text>`);
  });
  const legend = SLA_ORDER.map((c) => `<span><i style="background:${SLA_COLOUR[c]}"></i>${esc(SLA_LABEL[c])}</span>`).join('');
  return `<figure id="${esc(id)}" class="chart"><figcaption><strong>${esc(caption)}</strong></figcaption>`
    + `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${esc(caption)}" width="${labelW + barW + 360}" height="${height}" viewBox="0 0 ${labelW + barW + 360} ${height}">${g.join('')}</svg>`
    + `<div class="legend">${legend}</div></figure>`;
}

function emptyCounts(): Record<SlaClass, number> {
  return { ok: 0, near: 0, breached: 0, unknown: 0 };
}

function breaks(view: RunView, sfx: string): string {
  const bs = view.breaks;
  const states = [...BREAK_STATES, 'NOT_OPENED'] as const;
  const byState = states.map((s) => {
    const counts = emptyCounts();
    for (const b of bs) if (b.state === s) counts[b.sla] += 1;
    return { label: s === 'NOT_OPENED' ? 'TIMING (not opened)' : s, counts };
  }).filter((r, i) => i < BREAK_STATES.length || SLA_ORDER.some((c) => r.counts[c] > 0));
  const bucketLabels = [...AGE_BUCKETS.map((b) => b.label), 'unknown'];
  const byAge = bucketLabels.map((label) => {
    const counts = emptyCounts();
    for (const b of bs) if (ageBucket(b.age_us) === label) counts[b.sla] += 1;
    return { label, counts };
  }).filter((r) => r.label !== 'unknown' || SLA_ORDER.some((c) => r.counts[c] > 0));
  const stateRows = byState.map((r) => [esc(r.label), `<span class="num">${esc(SLA_ORDER.reduce((a, c) => a + r.counts[c], 0))}</span>`, ...SLA_ORDER.map((c) => `<span class="num sla-${c}">${esc(r.counts[c])}</span>`)]);
  // Tokens (ids, kinds, keys, timestamps) never wrap, so related fields share a cell, one per line, to fit the page.
  const listed = bs.slice(0, LIST_LIMIT).map((b) => {
    const age = b.age_us === null ? null : formatAge(b.age_us);
    return [`<a class="mono" href="#${breakAnchor(b.break_id, sfx)}">${esc(b.break_id)}</a><br>${esc(b.control_id)} <span class="mono">${esc(b.kind)}</span>`,
      `<span class="mono">${esc(b.key)}</span>`, ownerCell(b.owner?.owner_name, b.owner?.owner),
      `${esc(b.state === 'NOT_OPENED' ? 'TIMING (not opened)' : b.state)} <span class="tok">v${esc(b.version)}</span><br><span class="muted">this run:</span> ${esc(b.run_disposition)}`,
      `<span class="mono">${esc(b.first_record_time ?? 'unknown')}</span><br>${age ? `<span class="num" title="${esc(age.seconds)} s">${esc(age.human)}</span>` : '<span class="muted">age unknown</span>'}`,
      `<span class="num">${b.sla_s === null ? 'none' : esc(`${b.sla_s} s`)}</span><br><span class="sla-${b.sla}">${esc(SLA_LABEL[b.sla])}</span>`];
  });
  const histories = bs.slice(0, LIST_LIMIT).map((b) => [`<span class="mono">${esc(b.break_id)}</span><br>${esc(b.control_id)} <span class="mono">${esc(b.key)}</span>`, history(b)]);
  const rowIds = bs.slice(0, LIST_LIMIT).map((b) => `id="${breakAnchor(b.break_id, sfx)}"`);
  const more = bs.length > LIST_LIMIT ? `<p class="muted">${esc(bs.length - LIST_LIMIT)} more breaks not listed; see the break store.</p>` : '';
  return `<section id="breaks${sfx}"><h2>Breaks by state and age</h2>`
    + `<p class="muted">${esc(bs.length)} break(s) touched by this run. State is replayed from each break's event log at generation time; age is the control's as-of minus the record time of the break's first observation; an SLA is breached only when the age is strictly greater.</p>`
    + table(['State', 'Breaks', ...SLA_ORDER.map((c) => SLA_LABEL[c])], stateRows, 'class="by-state"')
    + stackedChart(`chart-state${sfx}`, 'Breaks by state, coloured by SLA', byState)
    + stackedChart(`chart-age${sfx}`, 'Breaks by age, coloured by SLA', byAge)
    + `<details${bs.length <= 40 ? ' open' : ''}><summary>Every break (${esc(bs.length)})</summary>`
    + table(['Break, control and kind', 'Key', 'Owner', 'State, version; this run', 'First record time; age', 'SLA'], listed, 'class="break-list"') + more + '</details>'
    + `<h3>Break histories</h3><p class="muted">Each break's event log, oldest first (state change, time, actor); a difference's break links here.</p>`
    + table(['Break', 'Events'], histories, 'class="break-history"', rowIds) + '</section>';
}

function totals(m: ManifestV1, sfx: string): string {
  const blocks = m.results.map((r) => {
    const rows: string[][] = [];
    for (const [name, v] of Object.entries(r.totals)) {
      if (typeof v === 'string') rows.push([`<span class="mono">${esc(name)}</span>`, '', `<span class="num mono">${esc(v)}</span>`]);
      else for (const [dim, x] of Object.entries(v)) rows.push([`<span class="mono">${esc(name)}</span>`, `<span class="mono">${esc(dim)}</span>`, `<span class="num mono">${esc(x)}</span>`]);
    }
    const large = (r as { large_totals?: Record<string, { keys: string; sha256: string }> }).large_totals ?? {};
    for (const [name, t] of Object.entries(large)) {
      rows.push([`<span class="mono">${esc(name)}</span>`, `${esc(t.keys)} keys, listed in the control_totals output`, `<span class="mono">listing SHA-256 ${esc(t.sha256)}</span>`]);
    }
    return `<details${rows.length <= 40 ? ' open' : ''} data-control="${esc(r.control_id)}"><summary>${esc(r.control_id)} ${esc(r.status)}: ${esc(rows.length)} total(s)</summary>${table(['Total', 'Dimension', 'Value (exact)'], rows)}</details>`;
  });
  return `<section id="totals${sfx}"><h2>Control totals</h2>${blocks.join('')}</section>`;
}

function differences(m: ManifestV1, sfx: string): string {
  const blocks = m.results.map((r) => {
    const rows = r.differences.slice(0, LIST_LIMIT).map((d) => [`<span class="mono">${esc(d.kind)}</span><br>${esc(d.disposition)}`, `<span class="mono">${esc(d.key)}</span>`, detailText(d.detail), `<span class="mono">${esc(d.record_time ?? '')}</span>`, d.break_id ? `<a class="mono" href="#${breakAnchor(d.break_id, sfx)}">${esc(d.break_id)}</a>` : '']);
    const more = r.differences.length > LIST_LIMIT ? `<p class="muted">${esc(r.differences.length - LIST_LIMIT)} more in the run's differences output.</p>` : '';
    return `<details${r.differences.length <= 40 ? ' open' : ''}><summary>${esc(r.control_id)}: ${esc(r.differences.length)} difference(s)</summary>${table(['Kind; disposition', 'Key', 'Detail', 'Record time', 'Break (its history)'], rows)}${more}</details>`;
  });
  return `<section id="differences${sfx}"><h2>Differences</h2>${blocks.join('')}</section>`;
}

function watermarks(m: ManifestV1, sfx: string): string {
  const end = m.window.end;
  const rows = Object.entries(m.sources.datasets).sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, d]) => {
    const wm = d.watermark as { source: string; value: string | null; complete?: unknown; sequence?: unknown };
    const cls = wm.value === null ? 'wm-none' : isoNotBefore(wm.value, end) ? 'wm-ok' : 'wm-late';
    const label = wm.value === null ? 'no watermark' : cls === 'wm-ok' ? 'covers the window' : 'before the window end';
    return [`<span class="mono">${esc(name)}</span>`, esc(wm.source), `<span class="mono">${esc(wm.value ?? '')}</span>`, `<span class="${cls}">${esc(label)}</span>`,
      esc(wm.complete === undefined ? '' : String(wm.complete)), esc(wm.sequence === undefined ? '' : String(wm.sequence)),
      `<span class="num">${esc(d.objects.length)}</span>`, `<span class="num">${esc(d.records_read)}</span>`, `<span class="num">${esc(d.records_loaded)}</span>`,
      `<span class="num${d.quarantined ? ' sla-breached' : ''}">${esc(d.quarantined)}</span>`, `<span class="num">${esc(d.duplicates)}</span>`];
  });
  const cut = m.cutoff_mappings.map((c) => [esc(c.timezone), `<span class="mono">${esc(c.local)}</span>`, `<span class="mono">${esc(c.utc)}</span>`, esc(c.rule)]);
  return `<section id="watermarks${sfx}"><h2>Watermarks and inputs</h2>`
    + table(['Dataset', 'Watermark source', 'Watermark', `Against window end ${end}`, 'Complete', 'Sequence', 'Files', 'Read', 'Loaded', 'Quarantined', 'Duplicates'], rows, 'class="watermarks"')
    + `<details><summary>Cutoff mappings used (${esc(cut.length)})</summary>${table(['Time zone', 'Local cutoff', 'UTC', 'Rule'], cut)}</details></section>`;
}

/** True when ISO-8601 UTC text `a` is at or after `b` (both `YYYY-MM-DDTHH:MM:SS[.f]Z`). */
function isoNotBefore(a: string, b: string): boolean {
  const norm = (s: string) => {
    const m = /^(.{19})(?:\.([0-9]{1,6}))?Z$/.exec(s);
    return m ? `${m[1]}.${(m[2] ?? '').padEnd(6, '0')}` : s;
  };
  return norm(a) >= norm(b);
}

function quarantine(m: ManifestV1, sfx: string): string {
  const q = m.quarantine;
  const rows = q.entries.slice(0, LIST_LIMIT).map((e) => {
    const x = e as Record<string, unknown>;
    return [`<span class="mono">${esc(x.dataset)}</span>`, `<span class="mono">${esc(x.file)}</span>`, `<span class="num">${esc(x.row)}</span>`, `<span class="num">${esc(x.line)}</span>`,
      `<span class="mono">${esc(x.column)}</span>`, `<span class="mono">${esc(x.rule)}</span>`, esc(x.message), `<code>${esc(typeof x.raw === 'string' ? x.raw.slice(0, 400) : x.raw)}</code>`];
  });
  const note = q.count > q.listed ? `<p class="muted">${esc(q.count)} quarantined, ${esc(q.listed)} listed in the manifest; the quarantine output holds every entry.</p>` : '';
  return `<section id="quarantine${sfx}"><h2>Quarantine</h2><p><strong class="${q.count ? 'sla-breached' : 'sla-ok'}">${esc(q.count)}</strong> record(s) or file(s) quarantined.</p>${note}`
    + table(['Dataset', 'File', 'Row', 'Line', 'Column', 'Rule', 'Message', 'Raw text'], rows, 'class="quarantine"') + '</section>';
}

function notes(m: ManifestV1): string {
  if (m.notes.length === 0) return '';
  return `<section class="notes"><h2>Notes</h2><ul>${m.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></section>`;
}

/** The id of a break's row in the break list (its history), per run. */
function breakAnchor(breakId: string, sfx: string): string {
  return esc(`break-${breakId}${sfx}`);
}

function ownerCell(name: string | undefined, id: string | undefined): string {
  if (!id) return '<span class="muted">unknown</span>';
  return name && name !== id ? `${esc(name)} <span class="mono muted">${esc(id)}</span>` : `<span class="mono">${esc(id)}</span>`;
}

/** A break's event log, oldest first: state change, time, actor. */
function history(b: BreakView): string {
  if (b.events.length === 0) return '<span class="muted">not opened (TIMING)</span>';
  const items = b.events.map((e) => `<li><span class="tok">${esc(e.from_state ?? 'new')} → ${esc(e.to_state)}</span> <span class="mono">${esc(e.at)}</span> <span class="tok">${esc(e.actor)}</span></li>`);
  return `<ul class="history">${items.join('')}</ul>`;
}

/** Open (neither CLOSED nor VERIFIED, and opened) breaks of a run. */
function isOpen(b: BreakView): boolean {
  return b.state !== 'CLOSED' && b.state !== 'VERIFIED' && b.state !== 'NOT_OPENED';
}

/** What the page leads with: the run's status, its breaks (new, reopened, past SLA) and who must act. */
function headline(view: RunView, sfx: string): string {
  const m = view.stored.manifest;
  const open = view.breaks.filter(isOpen);
  const count = (d: string) => view.breaks.filter((b) => b.run_disposition === d).length;
  const past = open.filter((b) => b.sla === 'breached').length;
  const byOwner = new Map<string, number>();
  for (const b of open) byOwner.set(b.owner?.owner ?? 'unknown', (byOwner.get(b.owner?.owner ?? 'unknown') ?? 0) + 1);
  const owners = [...byOwner].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).map(([o, n]) => `<span class="tok">${esc(o)} ${esc(n)}</span>`).join(', ');
  return `<section id="headline${sfx}" class="headline"><div class="big">${statusBadge(overallStatus(m))} <strong>${esc(open.length)}</strong> open break(s): `
    + `<strong>${esc(count('OPENED'))}</strong> new, <strong>${esc(count('REOPENED'))}</strong> reopened, <strong>${esc(count('REOBSERVED'))}</strong> re-observed, `
    + `<strong class="${past ? 'sla-breached' : ''}">${esc(past)}</strong> past SLA; ${esc(count('TIMING'))} timing.</div>`
    + `<div>By owner: ${owners || '<span class="muted">none</span>'}. Window <span class="mono">[${esc(m.window.start)}, ${esc(m.window.end)})</span>, run <span class="mono">${esc(m.run_id)}</span>, quarantined ${esc(m.quarantine.count)}.</div></section>`;
}

/** Who must act and how: per owning team its open breaks, past SLA, oldest age, contact, route, runbooks and first steps. */
function owners(view: RunView, sfx: string, store: string): string {
  const teams = new Map<string, BreakView[]>();
  for (const b of view.breaks.filter(isOpen)) if (b.owner) teams.set(b.owner.owner, [...(teams.get(b.owner.owner) ?? []), b]);
  const rows = [...teams].sort(([a, x], [b, y]) => y.filter((v) => v.sla === 'breached').length - x.filter((v) => v.sla === 'breached').length || (a < b ? -1 : 1)).map(([id, bs]) => {
    const o = bs[0].owner!;
    const oldest = bs.reduce<bigint | null>((acc, b) => (b.age_us !== null && (acc === null || b.age_us > acc) ? b.age_us : acc), null);
    const runbooks = new Map(bs.map((b) => [b.owner!.runbook.id, b.owner!.runbook]));
    const steps = [...runbooks.values()].map((r) => `<li><strong class="tok">${esc(r.id)}</strong> ${esc(r.title)} (<span class="mono">${esc(r.link)}</span>): ${esc(r.first_step)}</li>`).join('');
    const next = reckonCommand(['breaks', 'list', '--owner', id, '--store', store]);
    return [ownerCell(o.owner_name, id), esc(o.contact), `<span class="mono">${esc(o.route)}</span>`, `<span class="num">${esc(bs.length)}</span>`,
      `<span class="num">${esc(bs.filter((b) => b.run_disposition === 'OPENED').length)}</span>`, `<span class="num${bs.some((b) => b.sla === 'breached') ? ' sla-breached' : ''}">${esc(bs.filter((b) => b.sla === 'breached').length)}</span>`,
      `<span class="num">${oldest === null ? 'unknown' : esc(humanDuration(oldest))}</span>`, `<ol class="first-steps">${steps}</ol><code>${command(next)}</code>`];
  });
  return `<section id="owners${sfx}"><h2>Owners and first steps</h2>`
    + table(['Owner', 'Contact', 'Route', 'Open breaks', 'New', 'Past SLA', 'Oldest', 'Runbook: first step, then'], rows, 'class="owners"') + '</section>';
}

/** A command to paste, each word kept whole (wrapping only between words). */
function command(text: string): string {
  return text.split(' ').map((w) => `<span class="tok">${esc(w)}</span>`).join(' ');
}

/** A difference's detail, its timestamps kept whole. */
function detailText(detail: string): string {
  return esc(detail).replace(/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?/g, (t) => `<span class="tok">${t}</span>`);
}
