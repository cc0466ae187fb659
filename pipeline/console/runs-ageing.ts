/**
 * The runs page and the ageing page (issue 22). Runs: the latest runs per window, each control's
 * status, the chain verification, the report and evidence downloads. Ageing: counts by age bucket
 * × state, per control and per owner, and SLA breaches over the last runs, drawn as SVG on the
 * server (no script, no external asset).
 */
import { BREAK_STATES, type BreakState } from '../breaks/states.js';
import { esc, tag } from './layout.js';
import { AGE_BUCKETS, ageBucket, queryString, parseQuery } from './queue.js';
import type { QueueRow } from './row.js';
import type { ManifestEntry, StoreVerification } from './state.js';

const statusTone = (s: string) => (s === 'CLEAN' ? 'ok' : s === 'BREAKS' || s === 'FAILED' ? 'bad' : 'warn');

/** The runs page body: windows newest first, up to `perWindow` runs each, newest first. */
export function runsPage(manifests: readonly ManifestEntry[], v: StoreVerification, perWindow = 5): string {
  const problemsBy = new Map<string, number>();
  for (const p of v.problems) problemsBy.set(p.key, (problemsBy.get(p.key) ?? 0) + 1);
  const byWindow = new Map<string, ManifestEntry[]>();
  for (const m of manifests) {
    const w = `${m.manifest.window.start}/${m.manifest.window.end}`;
    byWindow.set(w, [...(byWindow.get(w) ?? []), m]);
  }
  const chain = v.status === 'running' ? tag('verifying…', 'warn') : v.status === 'ok' ? tag(`chain intact: ${v.checked} manifest(s) verified`, 'ok') : tag(`FAILED: ${v.problems.length} problem(s)`, 'bad');
  const sections = [...byWindow].sort(([a], [b]) => (a < b ? 1 : -1)).map(([w, ms]) => {
    const rows = ms.slice(-perWindow).reverse().map((m) => {
      const d = m.manifest;
      const controls = d.results.map((r) => `${esc(r.control_id)} ${tag(r.status, statusTone(r.status))}`).join(' ');
      const check = problemsBy.get(m.key) ? tag(`${problemsBy.get(m.key)} problem(s)`, 'bad') : v.status === 'ok' ? tag('verified', 'ok') : v.status === 'running' ? '…' : tag('verified', 'ok');
      return `<tr><td class="mono">${d.chain.sequence}</td><td class="mono"><a href="/${esc(m.key)}">${esc(d.run_id)}</a></td><td class="mono">${esc(d.started_at)}</td><td>${esc(d.trigger)}</td><td>${controls}</td><td>${check}</td>
<td><a href="/runs/${esc(d.run_id)}/report">report</a> · <a href="/evidence?run=${esc(d.run_id)}">evidence (zip)</a></td></tr>`;
    });
    const [start, end] = w.split('/');
    return `<h2>Window <span class="mono">[${esc(start)}, ${esc(end)})</span> · <a href="/evidence?window=${esc(encodeURIComponent(w))}">evidence for the window (zip)</a></h2>
<table><thead><tr><th scope="col">Seq</th><th scope="col">Run</th><th scope="col">Started</th><th scope="col">Trigger</th><th scope="col">Controls</th><th scope="col">Manifest check</th><th scope="col">Downloads</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  });
  return `<h1>Runs</h1><p>Manifest chain: ${chain}</p>${sections.join('') || '<p class="why">no published runs</p>'}`;
}

const STATE_COLOURS: Readonly<Record<BreakState, string>> = { OPEN: '#d1242f', TRIAGED: '#bf8700', CONTAINED: '#8250df', CORRECTED: '#0969da', VERIFIED: '#1a7f37', CLOSED: '#8c959f' };

/** A stacked bar chart: one bar per category, one segment per state; `title` labels the SVG. */
export function stackedBars(title: string, cats: readonly { label: string; counts: Readonly<Record<string, number>> }[]): string {
  const w = 640, barH = 20, gap = 8, left = 170, top = 10;
  const max = Math.max(1, ...cats.map((c) => BREAK_STATES.reduce((n, s) => n + (c.counts[s] ?? 0), 0)));
  const h = top + cats.length * (barH + gap) + 10;
  const bars = cats.map((c, i) => {
    const y = top + i * (barH + gap);
    let x = left;
    const segs = BREAK_STATES.map((s) => {
      const n = c.counts[s] ?? 0;
      if (!n) return '';
      const sw = ((w - left - 60) * n) / max;
      const r = `<rect x="${x.toFixed(1)}" y="${y}" width="${Math.max(sw, 1).toFixed(1)}" height="${barH}" fill="${STATE_COLOURS[s]}"><title>${esc(`${c.label}: ${n} ${s}`)}</title></rect>`;
      x += sw;
      return r;
    }).join('');
    const total = BREAK_STATES.reduce((n, s) => n + (c.counts[s] ?? 0), 0);
    return `<text x="${left - 6}" y="${y + 14}" text-anchor="end">${esc(c.label)}</text>${segs}<text x="${(x + 4).toFixed(1)}" y="${y + 14}">${total}</text>`;
  }).join('');
  return `<svg role="img" aria-label="${esc(title)}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" xmlns="http://www.w3.org/2000/svg">${bars}</svg>`;
}

/** A column chart of SLA breaches per run (oldest left). */
export function breachColumns(title: string, runs: readonly { label: string; breached: number; total: number }[]): string {
  const w = 640, h = 180, bottom = 150, left = 40;
  const max = Math.max(1, ...runs.map((r) => r.total));
  const cw = Math.max(8, Math.min(60, (w - left - 10) / Math.max(1, runs.length) - 6));
  const cols = runs.map((r, i) => {
    const x = left + i * (cw + 6);
    const th = ((bottom - 20) * r.total) / max, bh = ((bottom - 20) * r.breached) / max;
    return `<rect x="${x}" y="${(bottom - th).toFixed(1)}" width="${cw}" height="${th.toFixed(1)}" fill="#d0d7de"><title>${esc(`${r.label}: ${r.total} observed`)}</title></rect>
<rect x="${x}" y="${(bottom - bh).toFixed(1)}" width="${cw}" height="${bh.toFixed(1)}" fill="#d1242f"><title>${esc(`${r.label}: ${r.breached} past SLA`)}</title></rect>
<text x="${x + cw / 2}" y="${(bottom - th - 4).toFixed(1)}" text-anchor="middle">${r.breached} of ${r.total}</text><text x="${x + cw / 2}" y="${bottom + 14}" text-anchor="middle">${esc(r.label)}</text>`;
  }).join('');
  return `<svg role="img" aria-label="${esc(title)}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" xmlns="http://www.w3.org/2000/svg"><line x1="${left - 4}" y1="${bottom}" x2="${w}" y2="${bottom}" stroke="#8c959f"/>${cols}</svg>`;
}

function legend(): string {
  return `<p class="legend" aria-hidden="true">${BREAK_STATES.map((s) => `<span><i style="background:${STATE_COLOURS[s]}"></i>${s}</span>`).join('')}</p>`;
}

/** Counts of rows by `by` × state. */
function countBy(rows: readonly QueueRow[], by: (r: QueueRow) => string): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const k = by(r);
    const c = out.get(k) ?? {};
    c[r.state] = (c[r.state] ?? 0) + 1;
    out.set(k, c);
  }
  return out;
}

function countTable(caption: string, first: string, m: Map<string, Record<string, number>>, link: (k: string) => string, keepOrder = false): string {
  const rows = (keepOrder ? [...m] : [...m].sort(([a], [b]) => (a < b ? -1 : 1))).map(([k, c]) => `<tr><th scope="row"><a href="/${esc(link(k))}">${esc(k)}</a></th>${BREAK_STATES.map((s) => `<td class="num">${c[s] ?? 0}</td>`).join('')}<td class="num">${BREAK_STATES.reduce((n, s) => n + (c[s] ?? 0), 0)}</td></tr>`);
  return `<table aria-label="${esc(caption)}"><thead><tr><th scope="col">${esc(first)}</th>${BREAK_STATES.map((s) => `<th scope="col">${s}</th>`).join('')}<th scope="col">total</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The ageing page body over every row and the published runs (the last `lastRuns` of them). */
export function ageingPage(rows: readonly QueueRow[], manifests: readonly ManifestEntry[], lastRuns = 12): string {
  const none = parseQuery(new URLSearchParams());
  const labels = new Map<string, string>([...AGE_BUCKETS.map((b) => [b.id, b.label] as [string, string]), ['unknown', 'unknown']]);
  const byBucket = countBy(rows, (r) => ageBucket(r.age_us));
  const buckets = [...labels].filter(([id]) => byBucket.has(id) || id !== 'unknown').map(([id, label]) => ({ label, counts: byBucket.get(id) ?? {} }));
  const recent = manifests.slice(-lastRuns);
  const perRun = new Map(recent.map((m) => [m.manifest.run_id, { breached: 0, total: 0 }]));
  for (const r of rows) for (const o of r.observations) {
    const c = perRun.get(o.run_id);
    if (!c) continue;
    c.total += 1;
    if (o.breached) c.breached += 1;
  }
  const runs = recent.map((m) => ({ label: `#${m.manifest.chain.sequence}`, ...perRun.get(m.manifest.run_id)! }));
  const bucketTable = countTable('Breaks by age bucket and state', 'Age', new Map([...labels].filter(([id]) => byBucket.has(id)).map(([id, l]) => [l, byBucket.get(id)!])), (l) => queryString(none, { age: [...labels].find(([, x]) => x === l)?.[0] ?? null }), true);
  return `<h1>Ageing</h1>
<h2 id="h-bucket">Breaks by age and state</h2>${legend()}${stackedBars('Breaks by age bucket, stacked by state', buckets)}${bucketTable}
<h2>Per control</h2>${stackedBars('Breaks per control, stacked by state', [...countBy(rows, (r) => r.control_id)].sort(([a], [b]) => (a < b ? -1 : 1)).map(([label, counts]) => ({ label, counts })))}
${countTable('Breaks per control and state', 'Control', countBy(rows, (r) => r.control_id), (k) => queryString(none, { control: k }))}
<h2>Per owner</h2>${countTable('Breaks per owner and state', 'Owner', countBy(rows, (r) => r.owner ?? '-'), (k) => queryString(none, { owner: k }))}
<h2>SLA breaches over the last ${runs.length} run(s)</h2><p class="legend"><span><i style="background:#d1242f"></i>past SLA at that run's as-of</span><span><i style="background:#d0d7de"></i>breaks observed by the run</span></p>
${breachColumns('Breaks past SLA per run', runs)}
<table aria-label="SLA breaches per run"><thead><tr><th scope="col">Run</th><th scope="col">Observed</th><th scope="col">Past SLA</th></tr></thead><tbody>${recent.map((m, i) => `<tr><td class="mono">${esc(runs[i].label)} ${esc(m.manifest.run_id)}</td><td class="num">${runs[i].total}</td><td class="num">${runs[i].breached}</td></tr>`).join('')}</tbody></table>`;
}
