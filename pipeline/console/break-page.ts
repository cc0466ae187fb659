/**
 * The break page (issue 22): the difference detail and the records behind it, the observation
 * timeline with links to each run's manifest, the event history with every signature's check and
 * the chain status, the proposals, and the actions this operator may take now — as forms, or with
 * the reason they are unavailable.
 */
import type { LogFinding } from '../breaks/verify-log.js';
import type { DifferenceRecordsRead } from '../inspect/difference-records.js';
import type { RecordRef } from '../../manifests/v1/schema.js';
import type { BreakRecord } from '../breaks/break-store.js';
import type { BreakSummary } from '../breaks/break-summary.js';
import { CLASSIFICATIONS } from '../breaks/states.js';
import { formatAge } from '../report/html.js';
import { esc, field, options, tag } from './layout.js';
import type { NextStep } from './actions.js';
import type { QueueRow } from './row.js';
import type { ManifestEntry, SignatureCheck } from './state.js';

/** What the break page shows, gathered by the app. */
export interface BreakView {
  readonly rec: BreakRecord;
  readonly row: QueueRow;
  readonly checks: ReadonlyMap<string, SignatureCheck[]>;
  readonly chain: { problems: readonly LogFinding[]; notices: readonly LogFinding[] };
  readonly next: NextStep;
  readonly proposals: readonly { key: string; digest: string; version: number; to: string; actor: string; approver: string | null; at: string; note: string | null; status: string; approveWhy: string | null; withdrawWhy: string | null; checks: SignatureCheck[] }[];
  /** The latest observing run's manifest and the records behind the difference in it (inspect/difference-records.ts); null when the store holds no such run. */
  readonly difference: { manifest: ManifestEntry; read: DifferenceRecordsRead } | null;
  readonly runs: readonly string[];
  readonly csrf: string;
  /** A message from the action just made (lost race, refused, done). */
  readonly flash: { tone: 'bad' | 'ok' | 'warn'; text: string } | null;
}

const manifestLink = (key: string | undefined | null) => (key ? `<a class="mono" href="/${esc(key)}">${esc(key.split('/').pop())}</a>` : '-');

function summary(s: BreakSummary, row: QueueRow): string {
  const age = row.age_us === null ? '-' : `${formatAge(row.age_us).human} (${s.age_s} s)`;
  return `<dl class="kv">
<dt>Control</dt><dd>${esc(s.control_id)} · ${esc(s.kind)}</dd><dt>Key</dt><dd class="mono">${esc(s.key)}</dd>
<dt>State</dt><dd>${tag(s.state)} version ${s.version}</dd><dt>Owner</dt><dd>${esc(s.owner ?? '-')}${s.owner_assigned ? '' : ' <span class="why">(control owner; not yet triaged)</span>'}</dd>
<dt>Classification</dt><dd>${esc(s.classification ?? '-')}</dd><dt>Window</dt><dd class="mono">[${esc(s.window?.start)}, ${esc(s.window?.end)})</dd>
<dt>Age</dt><dd>${esc(age)} · as-of <span class="mono">${esc(s.as_of ?? '-')}</span></dd>
<dt>SLA</dt><dd>${s.sla_s === null ? '-' : `${s.sla_s} s`} ${s.sla_breached === null ? '' : s.sla_breached ? tag('breached', 'bad') : tag('within SLA', 'ok')}</dd>
<dt>First seen</dt><dd class="mono">${esc(row.first_seen ?? '-')} (record ${esc(s.first_record_time ?? '-')})</dd><dt>Last observed</dt><dd class="mono">${esc(row.last_observed ?? '-')}</dd></dl>`;
}

const RECORD_HEAD = '<thead><tr><th scope="col">Dataset</th><th scope="col">File</th><th scope="col">Record</th><th scope="col">Record key</th></tr></thead>';

/** One table per side (authority, provider, …), in the order the records were read. */
function recordTables(records: readonly RecordRef[]): string {
  const sides = [...new Set(records.map((r) => r.side))];
  return sides.map((side) => {
    const rows = records.filter((r) => r.side === side).map((r) => `<tr><td>${esc(r.dataset)}</td><td class="mono">${esc(r.file)}</td><td class="num">${esc(r.record_number)}</td><td class="mono">${esc(r.record_key)}</td></tr>`);
    return `<h3>${esc(side)}</h3><table aria-label="Records behind the difference, ${esc(side)} side" data-side="${esc(side)}">${RECORD_HEAD}<tbody>${rows.join('')}</tbody></table>`;
  }).join('');
}

/** Where the records came from and what is not shown, when not every one is listed. */
function recordsNote(v: BreakView, read: DifferenceRecordsRead): string {
  if (read.complete && read.from.state === 'verified') return `<p class="why" id="records-source">${read.records.length} record(s), read from the run's verified difference_records output</p>`;
  const why = read.from.state === 'verified' ? '' : `${read.from.message}; `;
  const count = read.record_count === null ? 'the run kept no record count' : `${read.record_count} record(s) in all, ${read.records.length} listed by the manifest`;
  return `<p class="why" id="records-source">${esc(why)}${esc(count)} (reckon records --break ${esc(v.rec.break_id)} prints what the store holds)</p>`;
}

function differenceSection(v: BreakView): string {
  const d = v.difference;
  const last = v.rec.observations[v.rec.observations.length - 1];
  const detail = `<dl class="kv"><dt>Detail</dt><dd>${esc(last?.detail ?? '-')}</dd><dt>Record time</dt><dd class="mono">${esc(last?.record_time ?? '-')}</dd>
<dt>Disposition</dt><dd>${esc(last?.disposition ?? '-')}</dd><dt>In manifest</dt><dd>${d ? manifestLink(d.manifest.key) : '-'}</dd></dl>`;
  const recs = !d
    ? '<p class="why" id="records-none">The store holds no manifest of this break\'s latest observing run, so its records cannot be read.</p>'
    : d.read.records.length === 0
      ? `<p class="why" id="records-none">${d.read.record_count === null ? 'The latest observing run was made before reckon kept the records behind each difference.' : 'No record of the run\'s inputs stands behind this difference (a gap or a missing record is named by its key alone).'}</p>`
      : recordTables(d.read.records) + recordsNote(v, d.read);
  return `<section aria-labelledby="h-diff"><h2 id="h-diff">Difference</h2>${detail}<h2 id="h-records">Records behind it, each side</h2>${recs}</section>`;
}

function timeline(rec: BreakRecord): string {
  const rows = rec.observations.map((o) => `<tr><td class="mono">${esc(o.observed_at)}</td><td class="mono">${esc(o.run_id)}</td><td class="mono">[${esc(o.window.start)}, ${esc(o.window.end)})</td><td>${esc(o.disposition)}</td><td class="mono">${esc(o.as_of ?? '-')}</td><td>${esc(o.detail)}</td><td>${manifestLink(o.manifest_key)}</td></tr>`);
  return `<section aria-labelledby="h-obs"><h2 id="h-obs">Observations across runs</h2><table aria-label="Observations"><thead><tr><th scope="col">Observed</th><th scope="col">Run</th><th scope="col">Window</th><th scope="col">Disposition</th><th scope="col">As-of</th><th scope="col">Detail</th><th scope="col">Manifest</th></tr></thead><tbody>${rows.join('') || '<tr><td colspan="7" class="why">none</td></tr>'}</tbody></table></section>`;
}

function sigList(checks: readonly SignatureCheck[]): string {
  if (!checks.length) return '';
  return `<ul>${checks.map((c) => `<li>${c.ok ? tag('✓ verified', 'ok') : tag('✗ does not verify', 'bad')} ${esc(c.role)} <strong>${esc(c.signer)}</strong> <span class="mono">${esc(c.key)}</span>${c.problem ? ` <span class="why">${esc(c.problem)}</span>` : ''}</li>`).join('')}</ul>`;
}

function history(v: BreakView): string {
  const chain = v.chain.problems.length
    ? `<div class="banner bad" role="alert" id="chain-status"><strong>This break fails verification</strong><ul>${v.chain.problems.map((p) => `<li><span class="mono">${esc(p.key)}</span>: ${esc(p.problem)}</li>`).join('')}</ul></div>`
    : `<p class="banner ok" id="chain-status">Chain intact: ${v.rec.events.length} event(s), each naming the SHA-256 of the one before; head <span class="mono">${esc(v.rec.head_sha256.slice(0, 16))}…</span></p>`;
  const rows = v.rec.stored.map(({ event: e, object: o }) => {
    const proof = o.format === 'legacy' ? 'legacy (before signing)' : e.proof === 'manifest' ? `by the run, bound to ${manifestLink(o.binding?.manifest_key)}` : e.proof === 'unsigned' ? 'UNSIGNED (signing.unsigned)' : 'signed';
    const ev = Object.entries(e.evidence).filter(([, x]) => x !== null && x !== '').map(([k, x]) => `${esc(k)}=<span class="mono">${esc(x)}</span>`).join(' ');
    return `<tr><td class="num">v${e.version}</td><td class="mono">${esc(e.at)}</td><td>${esc(e.from_state ?? '-')} → ${esc(e.to_state)}</td><td>${esc(e.actor)}</td><td>${ev}</td><td>${proof}${sigList(v.checks.get(o.key) ?? [])}<div class="mono">sha256 ${esc(o.digest.slice(0, 16))}…</div></td></tr>`;
  });
  return `<section aria-labelledby="h-events"><h2 id="h-events">Event history</h2>${chain}<table aria-label="Events"><thead><tr><th scope="col">V</th><th scope="col">At</th><th scope="col">Transition</th><th scope="col">Actor</th><th scope="col">Evidence</th><th scope="col">Proof</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}

function proposals(v: BreakView): string {
  if (!v.proposals.length) return '<section aria-labelledby="h-prop"><h2 id="h-prop">Proposals</h2><p class="why">none</p></section>';
  const cards = v.proposals.map((p) => {
    const hidden = `<input type="hidden" name="csrf" value="${esc(v.csrf)}"><input type="hidden" name="expected_version" value="${v.rec.version}"><input type="hidden" name="version" value="${p.version}"><input type="hidden" name="proposal" value="${esc(p.digest)}">`;
    const approve = p.approveWhy ? `<p class="why">Approve unavailable: ${esc(p.approveWhy)}</p>` : `<form method="post" action="/breaks/${esc(v.rec.break_id)}/approve">${hidden}<button type="submit" class="primary">Approve ${esc(p.to)} (countersign)</button></form>`;
    const wid = `w-note-${p.digest.slice(0, 8)}`;
    const withdraw = p.withdrawWhy ? `<p class="why">Withdraw unavailable: ${esc(p.withdrawWhy)}</p>` : `<form method="post" action="/breaks/${esc(v.rec.break_id)}/withdraw">${hidden}${field(wid, 'Why withdraw', `<input type="text" id="${wid}" name="note">`)}<button type="submit">Withdraw</button></form>`;
    return `<div class="card proposal" data-status="${esc(p.status)}"><p><strong>${esc(p.to)}</strong> for version ${p.version}, proposed by <strong>${esc(p.actor)}</strong> at <span class="mono">${esc(p.at)}</span> for approver <strong>${esc(p.approver ?? '-')}</strong>: ${tag(p.status.toUpperCase(), p.status === 'pending' ? 'warn' : '')}</p>
${p.note ? `<p>Note: ${esc(p.note)}</p>` : ''}${sigList(p.checks)}${approve}${withdraw}</div>`;
  });
  return `<section aria-labelledby="h-prop"><h2 id="h-prop">Proposals</h2><div class="grid">${cards.join('')}</div></section>`;
}

function stepFields(v: BreakView): string {
  const n = v.next;
  const text = (id: string, name: string, label: string, req = false) => field(id, label, `<input type="text" id="${id}" name="${name}"${req ? ' required' : ''}>`);
  const parts: string[] = [];
  if (n.to === 'TRIAGED') {
    parts.push(field('a-owner', 'Owner', `<select id="a-owner" name="owner" required>${options(n.owners, null, 'choose…')}</select>`));
    parts.push(field('a-class', 'Classification', `<select id="a-class" name="classification" required>${options(CLASSIFICATIONS, null, 'choose…')}</select>`));
  }
  if (n.dual) parts.push(field('a-approver', 'Approver (countersigns)', `<select id="a-approver" name="approver" required>${options(n.approvers, null, 'choose…')}</select>`));
  if (n.to === 'VERIFIED') parts.push(field('a-evidence', 'Proving run (a run after CORRECTED that no longer observes it)', `<select id="a-evidence" name="evidence_ref" required>${options(v.runs, null, 'choose…')}</select>`));
  if (n.to === 'CORRECTED') parts.push(text('a-ref', 'evidence_ref', 'Evidence reference (ticket, change)'));
  if (n.to === 'CLOSED') parts.push(text('a-reason', 'reason', 'Reason', true), text('a-root', 'root_cause', 'Root cause', true), text('a-prev', 'prevention', 'Prevention', true));
  parts.push(text('a-note', 'note', 'Note'));
  return parts.join('');
}

function actionsSection(v: BreakView): string {
  const n = v.next;
  let body: string;
  if (!n.to || n.why) body = `<p class="why" id="action-why">${n.to ? `${esc(n.to)} unavailable` : 'No next step'}: ${esc(n.why ?? '')}</p>`;
  else {
    const verb = n.dual ? `Propose ${n.to} (lands when the approver countersigns)` : `Move to ${n.to}`;
    body = `<form method="post" action="/breaks/${esc(v.rec.break_id)}/advance" aria-label="${esc(verb)}"><input type="hidden" name="csrf" value="${esc(v.csrf)}">
<input type="hidden" name="expected_version" value="${v.rec.version}"><input type="hidden" name="to" value="${esc(n.to)}">${stepFields(v)}<button type="submit" class="primary">${esc(verb)}</button></form>`;
  }
  return `<section aria-labelledby="h-act"><h2 id="h-act">Actions now</h2>${body}</section>`;
}

/** The break page body. */
export function breakPage(v: BreakView): string {
  const flash = v.flash ? `<p class="banner ${v.flash.tone}" role="${v.flash.tone === 'ok' ? 'status' : 'alert'}" id="flash">${esc(v.flash.text)}</p>` : '';
  const s = v.row;
  return `${flash}<h1>Break <span class="mono">${esc(s.break_id)}</span></h1>
<p><a href="/">← queue</a> · <a href="/evidence?break=${esc(s.break_id)}">Download evidence package (zip)</a></p>
<div class="grid"><div class="card">${summary(s, v.row)}</div><div class="card">${actionsSection(v)}</div></div>
${differenceSection(v)}${proposals(v)}${history(v)}${timeline(v.rec)}`;
}
