/**
 * The console's routes (issue 22), a Hono application over one ConsoleState:
 *
 *   GET  /                      the queue (filters in the query string)
 *   GET  /queue.csv             the filtered view as CSV
 *   POST /bulk                  bulk triage and assignment (one signed event per break)
 *   GET  /breaks/:id            the break page
 *   POST /breaks/:id/advance    the next step (or its proposal)
 *   POST /breaks/:id/approve    countersign a proposal
 *   POST /breaks/:id/withdraw   withdraw one's own proposal
 *   GET  /runs, /runs/:id/report, /manifests/:name, /evidence?run=|break=|window=
 *   GET  /ageing
 *   GET  /verify, POST /verify  the store's verification (re-run on request)
 *
 * Safety: every POST needs the CSRF token of the form (an HMAC of the browser's cookie under this
 * process's secret) and an Origin of this console; requests naming another Host are refused (DNS
 * rebinding); every page is sent with a Content-Security-Policy that allows no script and nothing
 * from elsewhere; every value is escaped (layout.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono, type Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { BreakStore, type BreakRecord } from '../breaks/break-store.js';
import { windowForRange } from '../contract/window.js';
import { ReckonError } from '../core/errors.js';
import { packEvidence, type EvidenceScope } from '../evidence/pack.js';
import { differenceRecords, findDifference } from '../inspect/difference-records.js';
import { openReader } from '../inspect/run-outputs.js';
import { reportHtml } from '../report/report.js';
import { loadRunView } from '../report/run-view.js';
import { advance, approve, cannotWrite, nextStep, peopleFor, proposalChoices, withdraw, type Outcome } from './actions.js';
import { breakPage, type BreakView } from './break-page.js';
import { esc, page, type Frame } from './layout.js';
import { parseQuery, queryString, select, toCsv } from './queue.js';
import { queuePage } from './queue-page.js';
import { ageingPage, runsPage } from './runs-ageing.js';
import { checkSignatures, refreshState, trustedSigners, verifyOneBreak, verifyStore, withLogRefusals, type ConsoleState } from './state.js';

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const COOKIE = 'reckon_console';
const BREAK_ID = /^brk-[0-9a-f]{24}$/;

/**
 * The break's difference in the manifest of its latest observing run, with every record behind it
 * read from that run's verified `difference_records` output (or, when the output cannot be
 * verified, the first few the manifest lists, and why). Null when the store holds no such run.
 */
async function latestDifference(state: ConsoleState, rec: BreakRecord): Promise<BreakView['difference']> {
  const lastObs = rec.observations[rec.observations.length - 1];
  const m = lastObs ? state.manifests.find((x) => x.manifest.run_id === lastObs.run_id) : undefined;
  if (!m || !findDifference(m, rec.kind, rec.key)) return null;
  const reader = await openReader();
  try {
    return { manifest: m, read: await differenceRecords(state.store, { run_id: m.manifest.run_id, manifest: m.manifest }, rec.kind, rec.key, reader) };
  } finally {
    await reader.close();
  }
}

/** What every route of one console shares: its state, the Host values it answers to, the CSRF tokens of this process. */
interface ConsoleKit {
  readonly state: ConsoleState;
  readonly app: Hono;
  readonly allowedHosts: () => readonly string[];
  /** The CSRF token of a cookie: an HMAC under this process's secret. */
  readonly tokenOf: (cookie: string) => string;
  /** The token for the form of this request, setting a fresh cookie when the browser has none. */
  readonly csrf: (c: Context) => string;
  readonly frame: (title: string, nav: Frame['nav']) => Frame;
}

const html = (c: Context, f: Frame, body: string, status = 200) => c.html(page(f, body), status as 200);

/** Builds the application; `allowedHosts` are the Host header values this console answers to. */
export function consoleApp(state: ConsoleState, allowedHosts: () => readonly string[]): Hono {
  const secret = randomBytes(32);
  const tokenOf = (cookie: string) => createHmac('sha256', secret).update(cookie).digest('hex');
  const kit: ConsoleKit = {
    state, app: new Hono(), allowedHosts, tokenOf,
    csrf: (c) => {
      let cookie = getCookie(c, COOKIE);
      if (!cookie || !/^[0-9a-f]{64}$/.test(cookie)) {
        cookie = randomBytes(32).toString('hex');
        setCookie(c, COOKIE, cookie, { httpOnly: true, sameSite: 'Strict', path: '/' });
      }
      return tokenOf(cookie);
    },
    frame: (title, nav) => ({
      title, nav, actor: state.actor, readOnly: state.readOnly, store: state.store.location,
      verification: { status: state.verification.status, problems: state.verification.problems.length },
    }),
  };
  // Registered in this order: the guard first, then the routes.
  guard(kit);
  queueRoutes(kit);
  breakRoutes(kit);
  runRoutes(kit);
  return kit.app;
}

/** Every request: the Host must be ours, a POST must come from our origin with its form's CSRF token; every answer gets the safety headers. */
function guard({ app, allowedHosts, tokenOf, frame }: ConsoleKit): void {
  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!allowedHosts().includes(host)) return c.text(`refused: this console answers to ${allowedHosts().join(', ')}, not ${host}`, 421 as 400);
    if (c.req.method === 'POST') {
      const origin = c.req.header('origin');
      if (origin && !allowedHosts().some((h) => origin === `http://${h}`)) return c.text('refused: the form came from another origin', 403);
      const cookie = getCookie(c, COOKIE);
      const body = await c.req.parseBody({ all: true });
      const given = typeof body.csrf === 'string' ? body.csrf : '';
      const want = cookie ? tokenOf(cookie) : '';
      if (!cookie || given.length !== want.length || !timingSafeEqual(Buffer.from(given), Buffer.from(want))) {
        return html(c, frame('Refused', 'queue'), '<h1>Refused</h1><p class="banner bad" role="alert">This form carries no valid CSRF token (it was not made by this console, or the console restarted). Nothing was written; reload the page and try again.</p>', 403);
      }
    }
    await next();
    c.header('Content-Security-Policy', c.res.headers.get('Content-Security-Policy') ?? CSP);
    c.header('X-Content-Type-Options', 'nosniff');
    // same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` with a form post.
    c.header('Referrer-Policy', 'same-origin');
    c.header('X-Frame-Options', 'DENY');
    c.header('Cache-Control', 'no-store');
  });
}

/** GET / (the queue), GET /queue.csv, POST /bulk. */
function queueRoutes({ app, state, csrf, frame }: ConsoleKit): void {
  const queueContext = (c: Context) => ({
    controls: [...new Set(state.controls.map((d) => d.control_id))].sort(),
    ...state.index.facets(),
    ownerChoices: peopleFor(state, 'owns', '*'),
    csrf: csrf(c),
    cannotWrite: cannotWrite(state),
  });

  app.get('/', (c) => {
    const url = new URL(c.req.url);
    const q = parseQuery(url.searchParams);
    // The filter form sends every field, empty ones too: answer with the short URL of the same view.
    if (url.search && url.search !== queryString(q)) return c.redirect(`/${queryString(q)}`, 303);
    return html(c, frame('Queue', 'queue'), queuePage(state.index.ordered(q.sort, q.dir), q, queueContext(c)));
  });

  app.get('/queue.csv', (c) => {
    const q = parseQuery(new URL(c.req.url).searchParams);
    const rows = select(state.index.ordered(q.sort, q.dir), q, true);
    c.header('Content-Disposition', 'attachment; filename="reckon-breaks.csv"');
    return c.body(toCsv(rows), 200, { 'Content-Type': 'text/csv; charset=utf-8' });
  });

  app.post('/bulk', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const picks = ([] as unknown[]).concat(body.pick ?? []).filter((x): x is string => typeof x === 'string');
    const results: string[] = [];
    for (const p of picks) {
      const [id, v] = p.split(':');
      if (!BREAK_ID.test(id) || !/^[0-9]+$/.test(v ?? '')) { results.push(`<li>${esc(p)}: not a break</li>`); continue; }
      const rec = await new BreakStore(state.store).read(id);
      if (!rec) { results.push(`<li>${esc(id)}: no such break</li>`); continue; }
      const out = await advance(state, rec, Number(v), { to: 'TRIAGED', owner: str(body.owner), classification: str(body.classification), note: str(body.note) });
      await state.index.refreshBreak(id);
      results.push(`<li><a class="mono" href="/breaks/${esc(id)}">${esc(id)}</a>: ${esc(outcomeText(out))}</li>`);
    }
    const ok = picks.length > 0 && results.every((r) => r.includes('TRIAGED by'));
    return html(c, frame('Bulk triage', 'queue'), `<h1>Bulk triage</h1><p class="banner ${ok ? 'ok' : 'warn'}" role="status">${picks.length} break(s) selected</p><ul id="bulk-results">${results.join('') || '<li>nothing selected</li>'}</ul><p><a href="/">← queue</a></p>`);
  });
}

/** GET /breaks/:id and its actions POST /breaks/:id/advance, /approve, /withdraw. */
function breakRoutes({ app, state, csrf, frame }: ConsoleKit): void {
  const breakView = async (c: Context, id: string, flash: BreakView['flash'], status = 200) => {
    const rec = await state.index.refreshBreak(id);
    const row = state.index.get(id);
    if (!rec || !row) return html(c, frame('No such break', 'break'), `<h1>No break ${esc(id)}</h1><p><a href="/">← queue</a></p>`, 404);
    // The same trust as `breaks show`: the registry the signature names, and the console's own (a registry written into the store does not pass).
    const trusted = trustedSigners(state.registry, state.manifests);
    const chain = await verifyOneBreak(state, id);
    // Each signature as the log judges it too (a signer revoked before it signed).
    const check = async (o: { key: string; payload: string; signatures: Parameters<typeof checkSignatures>[2] }) => withLogRefusals(o.key, await checkSignatures(state.store, o.payload, o.signatures, trusted), chain.refused);
    const checks = new Map<string, Awaited<ReturnType<typeof check>>>();
    for (const s of rec.stored) checks.set(s.object.key, await check(s.object));
    const proposals = await Promise.all(rec.proposals.map(async (p) => ({
      key: p.object.key, digest: p.object.digest, version: p.event.version, to: p.event.to_state, actor: p.event.actor, approver: p.event.evidence.approver ?? null,
      at: p.event.at, note: p.event.evidence.note ?? null, ...proposalChoices(state, rec, p), checks: await check(p.object),
    })));
    const view: BreakView = {
      rec, row, checks, chain, next: nextStep(state, rec), proposals,
      difference: await latestDifference(state, rec),
      runs: state.manifests.map((x) => x.manifest.run_id).reverse(), csrf: csrf(c), flash,
    };
    return html(c, frame(`Break ${id}`, 'break'), breakPage(view), status);
  };

  app.get('/breaks/:id', (c) => {
    const id = c.req.param('id');
    if (!BREAK_ID.test(id)) return html(c, frame('Not a break', 'break'), `<h1>'${esc(id)}' is not a break id</h1>`, 404);
    return breakView(c, id, null);
  });

  const act = (path: string, run: (c: Context, rec: NonNullable<Awaited<ReturnType<BreakStore['read']>>>, body: Record<string, unknown>) => Promise<Outcome>) => {
    app.post(`/breaks/:id/${path}`, async (c) => {
      const id = c.req.param('id');
      if (!BREAK_ID.test(id)) return c.text('not a break id', 404);
      const rec = await new BreakStore(state.store).read(id);
      if (!rec) return breakView(c, id, null);
      const out = await run(c, rec, await c.req.parseBody());
      const tone = out.kind === 'done' || out.kind === 'withdrawn' ? 'ok' : 'bad';
      return breakView(c, id, { tone, text: outcomeText(out) }, out.kind === 'lost-race' ? 409 : out.kind === 'refused' ? 422 : 200);
    });
  };
  act('advance', (_c, rec, b) => advance(state, rec, num(b.expected_version), {
    to: str(b.to), owner: str(b.owner), classification: str(b.classification), approver: str(b.approver), note: str(b.note),
    evidence_ref: str(b.evidence_ref), reason: str(b.reason), root_cause: str(b.root_cause), prevention: str(b.prevention),
  }));
  act('approve', (_c, rec, b) => approve(state, rec, num(b.expected_version), num(b.version), str(b.proposal) ?? ''));
  act('withdraw', (_c, rec, b) => withdraw(state, rec, num(b.version), str(b.proposal) ?? '', str(b.note)));
}

/** GET /runs, /runs/:id/report, /manifests/:name, /evidence, /ageing; GET and POST /verify. */
function runRoutes({ app, state, csrf, frame }: ConsoleKit): void {
  app.get('/runs', (c) => html(c, frame('Runs', 'runs'), runsPage(state.manifests, state.verification)));
  app.get('/runs/:id/report', async (c) => {
    const id = c.req.param('id');
    if (!state.manifests.some((m) => m.manifest.run_id === id)) return html(c, frame('No such run', 'runs'), `<h1>No run ${esc(id)}</h1>`, 404);
    const out = reportHtml([await loadRunView(state.store, id)], state.store);
    c.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    return c.html(out);
  });
  app.get('/manifests/:name', async (c) => {
    const key = `manifests/${c.req.param('name')}`;
    const m = state.manifests.find((x) => x.key === key);
    if (!m) return html(c, frame('No such manifest', 'runs'), `<h1>No manifest ${esc(key)}</h1>`, 404);
    const bytes = (await state.store.get(key))?.toString('utf8') ?? '';
    return html(c, frame(m.manifest.run_id, 'runs'), `<h1>Manifest <span class="mono">${esc(key)}</span></h1><p>SHA-256 <span class="mono">${esc(m.sha256)}</span> · sequence ${m.manifest.chain.sequence} · <a href="/runs/${esc(m.manifest.run_id)}/report">report</a></p><pre>${esc(JSON.stringify(JSON.parse(bytes), null, 2))}</pre>`);
  });
  app.get('/evidence', (c) => evidence(c, state, (f, b, s) => html(c, frame(f, 'runs'), b, s)));

  // The ageing page counts every row: computed once per change of the index or of the runs.
  let ageing: { generation: number; runs: number; body: string } | null = null;
  app.get('/ageing', (c) => {
    if (!ageing || ageing.generation !== state.index.generation || ageing.runs !== state.manifests.length) {
      ageing = { generation: state.index.generation, runs: state.manifests.length, body: ageingPage(state.index.all(), state.manifests) };
    }
    return html(c, frame('Ageing', 'ageing'), ageing.body);
  });

  app.get('/verify', (c) => html(c, frame('Store check', 'verify'), verifyPage(state, csrf(c))));
  app.post('/verify', async (c) => {
    await verifyStore(state);
    await refreshState(state);
    return html(c, frame('Store check', 'verify'), verifyPage(state, csrf(c)));
  });
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const num = (v: unknown): number => (typeof v === 'string' && /^[0-9]{1,9}$/.test(v) ? Number(v) : -1);

/** One sentence for what an action came to. */
export function outcomeText(o: Outcome): string {
  if (o.kind === 'lost-race' || o.kind === 'refused') return o.message;
  if (o.kind === 'withdrawn') return `Proposal withdrawn (${o.key}).`;
  const e = o.result.event;
  if (o.result.kind === 'proposal') return `${e.from_state} → ${e.to_state} proposed by ${e.actor} for version ${e.version}; it lands when ${e.evidence.approver} countersigns.`;
  return `${e.from_state} → ${e.to_state} by ${e.actor}${e.dual_control ? `, countersigned by ${e.evidence.approver}` : ''}; version ${e.version} (sha256 ${o.result.digest.slice(0, 16)}…).`;
}

function verifyPage(state: ConsoleState, csrf: string): string {
  const v = state.verification;
  const head = v.status === 'running' ? '<p class="banner warn" role="status">Verifying the store…</p>'
    : v.status === 'ok' ? `<p class="banner ok" role="status" id="verify-status">The store verifies: ${v.checked} manifest(s), chain intact, every break log's chain, signatures and bindings hold (${v.ms} ms${v.notices ? `, ${v.notices} notice(s)` : ''}).${v.unsigned ? ` ${v.unsigned} manifest(s) are NOT signed${v.signed ? ` (${v.signed} signed)` : ''}: a consistent rewrite of those cannot be detected.` : ''}</p>`
      : `<div class="banner bad" role="alert" id="verify-status"><strong>This store fails verification</strong> (${v.problems.length} problem(s), first broken link first). What it records no longer matches what is stored: find out who changed what before anyone acts on these breaks. Actions are refused.</div>`;
  const list = v.problems.length ? `<table><thead><tr><th scope="col">Object</th><th scope="col">Problem</th></tr></thead><tbody>${v.problems.map((p) => {
    const id = /^breaks\/(brk-[0-9a-f]{24})\//.exec(p.key)?.[1];
    return `<tr><td class="mono">${id ? `<a href="/breaks/${esc(id)}">${esc(p.key)}</a>` : esc(p.key)}</td><td>${esc(p.problem)}</td></tr>`;
  }).join('')}</tbody></table>` : '';
  const changed = v.inputsChanged?.length ? `<h2>Inputs changed since their runs</h2><p>Outside the store, so no reason to refuse actions; but these runs' records can no longer be read back from the files (<code>reckon records</code> says so), nor packed with their inputs.</p><ul id="inputs-changed">${v.inputsChanged.map((p) => `<li><span class="mono">${esc(p.key)}</span>: ${esc(p.problem)}</li>`).join('')}</ul>` : '';
  return `<h1>Store check</h1>${head}${list}${changed}<form method="post" action="/verify"><input type="hidden" name="csrf" value="${esc(csrf)}"><button type="submit">Verify again</button></form>`;
}

async function evidence(c: Context, state: ConsoleState, fail: (title: string, body: string, status: number) => Response | Promise<Response>): Promise<Response> {
  const q = new URL(c.req.url).searchParams;
  let scope: EvidenceScope;
  try {
    if (q.get('run')) scope = { kind: 'run', runId: q.get('run')! };
    else if (q.get('break')) scope = { kind: 'break', breakId: q.get('break')! };
    else if (q.get('window')) scope = { kind: 'window', window: windowForRange(q.get('window')!), control: q.get('control') };
    else return fail('Evidence', '<h1>Evidence</h1><p>Name a run, a break or a window.</p>', 400);
  } catch (e) { return fail('Evidence', `<h1>Evidence</h1><p class="banner bad">${esc((e as Error).message)}</p>`, 400); }
  const dir = await mkdtemp(join(tmpdir(), 'reckon-console-evidence-'));
  try {
    const out = join(dir, 'evidence.zip');
    const r = await packEvidence({ scope, store: state.store, out, includeInputs: false, organization: 'reckon' });
    const name = r.externalIdentifier.replace(/[^A-Za-z0-9._-]+/g, '_');
    return c.body(await readFile(out), 200, { 'Content-Type': 'application/zip', 'Content-Disposition': `attachment; filename="${name}.zip"` });
  } catch (e) {
    if (e instanceof ReckonError) return fail('Evidence', `<h1>Evidence</h1><p class="banner bad" role="alert">No package: ${esc(e.message)}</p>`, 422);
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
