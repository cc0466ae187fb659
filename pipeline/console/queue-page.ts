/**
 * The queue page (issue 22): the filter form (a GET form, so the filter is the URL), the sortable
 * table of one page of breaks, paging, the CSV link of the same filter, and the bulk triage form
 * (checkbox per row carrying the version the page saw).
 */
import { BREAK_STATES, CLASSIFICATIONS } from '../breaks/states.js';
import { formatAge } from '../report/html.js';
import { esc, field, options, tag } from './layout.js';
import { AGE_BUCKETS, PAGE_SIZES, pageOf, queryString, select, slaDueUs, type QueueQuery, type SortKey } from './queue.js';
import type { QueueRow } from './row.js';
import { formatMicros } from '../contract/values.js';

/** What the queue page needs besides the rows. */
export interface QueueContext {
  readonly controls: readonly string[];
  readonly kinds: readonly string[];
  readonly owners: readonly string[];
  /** Signers who may be made owner at triage (bulk form); empty when the console is read-only. */
  readonly ownerChoices: readonly string[];
  readonly csrf: string;
  /** Why bulk triage is unavailable, or null. */
  readonly cannotWrite: string | null;
}

function filterForm(q: QueueQuery, c: QueueContext): string {
  const text = (id: string, name: string, v: string | null, label: string) => field(id, label, `<input type="text" id="${id}" name="${name}" value="${esc(v ?? '')}">`);
  const sel = (id: string, name: string, html: string, label: string) => field(id, label, `<select id="${id}" name="${name}">${html}</select>`);
  return `<form class="filters" method="get" action="/" role="search" aria-label="Filter breaks">
${sel('f-state', 'state', options(BREAK_STATES, q.state, 'any'), 'State')}
${sel('f-control', 'control', options(c.controls, q.control, 'any'), 'Control')}
${sel('f-kind', 'kind', options(c.kinds, q.kind, 'any'), 'Kind')}
${sel('f-owner', 'owner', options(c.owners, q.owner, 'any'), 'Owner')}
${sel('f-sla', 'sla', options([['breached', 'past SLA'], ['ok', 'within SLA']], q.sla, 'any'), 'SLA')}
${sel('f-age', 'age', options([...AGE_BUCKETS.map((b) => [b.id, b.label] as const), ['unknown', 'unknown']], q.age, 'any'), 'Age')}
${text('f-q', 'q', q.q, 'Key contains')}
<div class="field"><input type="checkbox" id="f-pending" name="pending" value="1"${q.pending ? ' checked' : ''}><label for="f-pending" style="display:inline">pending approval</label></div>
${sel('f-sort', 'sort', options([['age', 'age'], ['sla_due', 'SLA due'], ['control', 'control'], ['state', 'state'], ['owner', 'owner'], ['key', 'key'], ['first_seen', 'first seen'], ['last_observed', 'last observed']], q.sort), 'Sort by')}
${sel('f-dir', 'dir', options([['desc', 'descending'], ['asc', 'ascending']], q.dir), 'Order')}
${sel('f-size', 'size', options(PAGE_SIZES.map(String), String(q.size)), 'Per page')}
<button type="submit" class="primary">Apply</button> <a href="/">Clear</a>
</form>`;
}

function slaCell(r: QueueRow): string {
  const due = slaDueUs(r);
  const dueText = due === null ? '-' : formatMicros(due);
  if (r.sla_breached === null) return `<span class="mono">${esc(dueText)}</span>`;
  return `<span class="mono">${esc(dueText)}</span> ${r.sla_breached ? tag('breached', 'bad') : tag('ok', 'ok')}`;
}

function rowHtml(r: QueueRow, canSelect: boolean): string {
  const age = r.age_us === null ? '-' : formatAge(r.age_us);
  const pick = canSelect && r.state === 'OPEN'
    ? `<input type="checkbox" name="pick" value="${esc(`${r.break_id}:${r.version}`)}" id="pick-${esc(r.break_id)}" aria-label="select ${esc(r.break_id)} (${esc(r.kind)} ${esc(r.key)})">`
    : '';
  return `<tr><td>${pick}</td><td><a class="mono" href="/breaks/${esc(r.break_id)}">${esc(r.break_id)}</a></td><td>${esc(r.control_id)}</td><td>${esc(r.kind)}</td>
<td class="mono">${esc(r.key)}</td><td>${tag(r.state)}${r.pending.length ? ` ${tag(`awaiting ${r.pending[0].approver ?? 'approval'}`, 'warn')}` : ''}</td>
<td>${esc(r.owner ?? '-')}${r.owner_assigned ? '' : ' <span class="why">(not triaged)</span>'}</td>
<td class="num" title="${esc(typeof age === 'string' ? age : `${age.seconds} s`)}">${esc(typeof age === 'string' ? age : age.human)}</td><td>${slaCell(r)}</td>
<td class="mono">${esc(r.first_seen ?? '-')}</td><td class="mono">${esc(r.last_observed ?? '-')}</td><td>${esc(r.detail ?? '')}</td></tr>`;
}

function head(q: QueueQuery, label: string, key: SortKey | null): string {
  if (!key) return `<th scope="col">${esc(label)}</th>`;
  const on = q.sort === key;
  const dir = on && q.dir === 'desc' ? 'asc' : 'desc';
  const aria = on ? ` aria-sort="${q.dir === 'asc' ? 'ascending' : 'descending'}"` : '';
  return `<th scope="col"${aria}><a href="/${esc(queryString(q, { sort: key, dir, page: 1 }))}">${esc(label)}${on ? (q.dir === 'asc' ? ' ▲' : ' ▼') : ''}</a></th>`;
}

function bulkForm(c: QueueContext): string {
  if (c.cannotWrite) return `<p class="why">Bulk triage unavailable: ${esc(c.cannotWrite)}</p>`;
  return `<fieldset class="card"><legend>Triage and assign the selected OPEN breaks (each event signed on its own)</legend>
<input type="hidden" name="csrf" value="${esc(c.csrf)}">
${field('b-owner', 'Owner', `<select id="b-owner" name="owner" required>${options(c.ownerChoices, null, 'choose…')}</select>`)}
${field('b-class', 'Classification', `<select id="b-class" name="classification" required>${options(CLASSIFICATIONS, null, 'choose…')}</select>`)}
${field('b-note', 'Note', '<input type="text" id="b-note" name="note">')}
<button type="submit" class="primary">Triage selected</button></fieldset>`;
}

/** The queue page body for `rows` (the whole index, already in the query's sort order) under query `q`. */
export function queuePage(rows: readonly QueueRow[], q: QueueQuery, c: QueueContext): string {
  const chosen = select(rows, q, true);
  const { rows: shown, page, pages } = pageOf(chosen, q);
  const qs = queryString(q);
  const heads = [head(q, '', null), head(q, 'Break', null), head(q, 'Control', 'control'), head(q, 'Kind', null), head(q, 'Key', 'key'), head(q, 'State', 'state'),
    head(q, 'Owner', 'owner'), head(q, 'Age', 'age'), head(q, 'SLA due', 'sla_due'), head(q, 'First seen', 'first_seen'), head(q, 'Last observed', 'last_observed'), head(q, 'Difference', null)];
  const pager = `<nav class="pager" aria-label="Pages">${page > 1 ? `<a href="/${esc(queryString(q, { page: page - 1 }))}" rel="prev">← previous</a>` : ''}
<span>page ${page} of ${pages}</span>${page < pages ? `<a href="/${esc(queryString(q, { page: page + 1 }))}" rel="next">next →</a>` : ''}</nav>`;
  const body = shown.length === 0 ? `<tr><td colspan="${heads.length}" class="why">no breaks match this filter</td></tr>` : shown.map((r) => rowHtml(r, !c.cannotWrite)).join('');
  return `<h1>Break queue</h1>${filterForm(q, c)}
<p><strong id="match-count">${chosen.length}</strong> of ${rows.length} break(s) match · <a href="/queue.csv${esc(qs)}">Download this view as CSV</a></p>
<form method="post" action="/bulk">
<table aria-label="Breaks"><thead><tr>${heads.join('')}</tr></thead><tbody>${body}</tbody></table>${pager}
${bulkForm(c)}</form>`;
}
