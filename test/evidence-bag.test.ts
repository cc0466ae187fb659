/**
 * Evidence packages (issue 9): real runs of `reckon run` into a temp store, packed with `reckon
 * evidence pack` and checked with `reckon evidence verify`, all through the CLI in this process
 * (reckonHere: what the commands write, not the process around them, is under test). The bag's
 * manifests and Payload-Oxum are recomputed here independently (node:crypto over the files on disk,
 * and coreutils `sha256sum -c`/`sha512sum -c`), and tampering is done on copies.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { reckonHere, scratchDir } from './helpers/cli.js';
import { makeSigners, type TestKey } from './helpers/ssh.js';
import { uuidV5 } from '../pipeline/evidence/openlineage.js';
import { DAY_WINDOW as WINDOW, SAMPLE_DAY as SOURCES } from './fixtures/days.js';

let tmp: { dir: string; cleanup: () => void };
let store: string;
let keys: Record<string, TestKey>;
let config: string;

/** Rewrites the payload of a break object file (a forger who knows the format; signatures and digests are left as they were). */
function editPayload(path: string, from: string, to: string): void {
  const o = JSON.parse(readFileSync(path, 'utf8'));
  expect(o.payload).toContain(from);
  o.payload = o.payload.replace(from, to);
  writeFileSync(path, JSON.stringify(o));
}
let first: string;
let rerun: string;

/** Every file under `dir`, as `/`-separated paths relative to it, sorted by byte order. */
function walk(dir: string): string[] {
  const out: string[] = [];
  const rec = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) rec(p); else out.push(relative(dir, p).split('\\').join('/'));
    }
  };
  rec(dir);
  return out.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

const hash = (alg: string, path: string) => createHash(alg).update(readFileSync(path)).digest('hex');

/** The bag's manifests, Payload-Oxum and tag manifest computed independently of the product. */
function expectedBag(bag: string) {
  const payload = walk(bag).filter((p) => p.startsWith('data/'));
  const manifest = (alg: string) => payload.map((p) => `${hash(alg, join(bag, p))}  ${p}\n`).join('');
  const octets = payload.reduce((a, p) => a + statSync(join(bag, p)).size, 0);
  return { payload, sha256: manifest('sha256'), sha512: manifest('sha512'), oxum: `${octets}.${payload.length}` };
}

/** Rewrites a bag's manifests, Payload-Oxum and tag manifest to match its files (a forger who knows BagIt). */
function rebag(bag: string): void {
  const e = expectedBag(bag);
  writeFileSync(join(bag, 'manifest-sha256.txt'), e.sha256);
  writeFileSync(join(bag, 'manifest-sha512.txt'), e.sha512);
  const info = readFileSync(join(bag, 'bag-info.txt'), 'utf8').replace(/^Payload-Oxum: .*$/m, `Payload-Oxum: ${e.oxum}`);
  writeFileSync(join(bag, 'bag-info.txt'), info);
  const tags = ['bag-info.txt', 'bagit.txt', 'manifest-sha256.txt', 'manifest-sha512.txt'];
  writeFileSync(join(bag, 'tagmanifest-sha256.txt'), tags.map((t) => `${hash('sha256', join(bag, t))}  ${t}\n`).join(''));
}

function pack(args: string[]) {
  return reckonHere(['evidence', 'pack', '--store', store, ...args]);
}

function verify(path: string) {
  return reckonHere(['evidence', 'verify', path]);
}

function copyBag(src: string, name: string): string {
  const dst = join(tmp.dir, name);
  cpSync(src, dst, { recursive: true });
  return dst;
}

beforeAll(async () => {
  tmp = scratchDir('reckon-evidence-');
  store = join(tmp.dir, 'store');
  const signers = makeSigners(tmp.dir, ['alice', 'bob']);
  keys = signers.keys;
  config = join(tmp.dir, 'reckon.json');
  writeFileSync(config, JSON.stringify({ signing: { registry: signers.registry } }));
  const a = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--json', '--quiet']);
  expect(a.code, a.stderr).toBe(1);
  first = a.json.run_id;
  const b = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--json', '--quiet',
    '--trigger', 'incident', '--rerun-of', first, '--reason', 'auditor asked for a rerun']);
  expect(b.code, b.stderr).toBe(1);
  rerun = b.json.run_id;
});

afterAll(() => tmp?.cleanup());

describe('reckon evidence pack --run', () => {
  let bag: string;
  beforeAll(async () => {
    bag = join(tmp.dir, 'run-bag');
    const r = await pack(['--run', rerun, '--out', bag, '--include-inputs']);
    expect(r.code, r.stderr).toBe(0);
  });

  it('verifies', async () => {
    const v = await verify(bag);
    expect(v.stdout).toMatch(/^ok: /);
    expect(v.code).toBe(0);
  });

  it('has exact payload manifests, Payload-Oxum and tag manifest (recomputed independently)', async () => {
    const e = expectedBag(bag);
    expect(readFileSync(join(bag, 'bagit.txt'), 'utf8')).toBe('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n');
    expect(readFileSync(join(bag, 'manifest-sha256.txt'), 'utf8')).toBe(e.sha256);
    expect(readFileSync(join(bag, 'manifest-sha512.txt'), 'utf8')).toBe(e.sha512);
    const info = readFileSync(join(bag, 'bag-info.txt'), 'utf8');
    expect(info).toContain(`\nPayload-Oxum: ${e.oxum}\n`);
    for (const label of ['Source-Organization', 'External-Identifier', 'Bagging-Date', 'Payload-Oxum', 'Bag-Group-Identifier']) expect(info).toMatch(new RegExp(`^${label}: \\S`, 'm'));
    expect(info).toContain(`External-Identifier: reckon:run:${rerun}\n`);
    expect(info).toMatch(/^Bagging-Date: [0-9]{4}-[0-9]{2}-[0-9]{2}$/m);
    const tags = ['bag-info.txt', 'bagit.txt', 'manifest-sha256.txt', 'manifest-sha512.txt'];
    expect(readFileSync(join(bag, 'tagmanifest-sha256.txt'), 'utf8')).toBe(tags.map((t) => `${hash('sha256', join(bag, t))}  ${t}\n`).join(''));
    // coreutils agree as well.
    execFileSync('sha256sum', ['-c', '--quiet', 'manifest-sha256.txt'], { cwd: bag });
    execFileSync('sha512sum', ['-c', '--quiet', 'manifest-sha512.txt'], { cwd: bag });
    execFileSync('sha256sum', ['-c', '--quiet', 'tagmanifest-sha256.txt'], { cwd: bag });
  });

  it('holds the manifests with their chain links, outputs, break logs, inputs, report and lineage', async () => {
    const files = walk(join(bag, 'data'));
    const manifests = files.filter((f) => /^manifests\/.*\.json$/.test(f));
    // The run's manifest, and the first run's, which proves the OPEN events of the breaks (their binding): no outputs of it.
    expect(manifests).toEqual([`manifests/00000001-${first}.json`, `manifests/00000002-${rerun}.json`]);
    expect(files.filter((f) => f.startsWith('outputs/') && f.includes(first))).toEqual([]);
    const storeManifest = readFileSync(join(store, 'manifests', `00000002-${rerun}.json`));
    expect(readFileSync(join(bag, 'data', manifests[1]))).toEqual(storeManifest);
    expect(files).toContain(`manifests/00000002-${rerun}.sha256`);
    const chain = JSON.parse(readFileSync(join(bag, 'data', 'chain.json'), 'utf8'));
    expect(chain.links.map((l: any) => [l.sequence, l.run_id])).toEqual([[1, first], [2, rerun]]);
    expect(chain.links[1].previous_manifest_sha256).toBe(chain.links[0].sha256);
    expect(chain.links[0].sha256).toBe(hash('sha256', join(store, 'manifests', `00000001-${first}.json`)));

    const doc = JSON.parse(storeManifest.toString('utf8'));
    for (const o of doc.outputs) expect(hash('sha256', join(bag, 'data', o.key))).toBe(o.sha256);
    // Every break the run touched, with its full log and observations by both runs.
    const ids = [...new Set(doc.breaks.map((b: any) => b.break_id))] as string[];
    expect(ids.length).toBe(41); // one break per difference of the sample day (fixtures/sample-day/expected.json)
    for (const id of ids) {
      expect(files).toContain(`breaks/${id}/events/000001.json`);
      expect(files).toContain(`breaks/${id}/observations/${first}.json`);
      expect(files).toContain(`breaks/${id}/observations/${rerun}.json`);
      expect(JSON.parse(readFileSync(join(bag, 'data', 'breaks', id, 'break.json'), 'utf8'))).toMatchObject({ break_id: id, state: 'OPEN', version: 1 });
    }
    const objects = JSON.parse(readFileSync(join(bag, 'data', 'inputs', rerun, 'objects.json'), 'utf8')).objects;
    expect(objects.length).toBe(17); // the sample day's data files: one per dataset, plus two redelivery files
    for (const o of objects) {
      expect(hash('sha256', join(bag, 'data', 'inputs', rerun, 'files', o.bag_path))).toBe(o.sha256);
      expect(readFileSync(join(bag, 'data', 'inputs', rerun, 'files', o.bag_path))).toEqual(readFileSync(join(SOURCES, o.path)));
    }
    execFileSync('sha256sum', ['-c', '--quiet', join(bag, 'data', 'inputs', rerun, 'checksums.sha256')], { cwd: SOURCES });
    expect(readFileSync(join(bag, 'data', 'report.html'), 'utf8')).toContain(`data-run="${rerun}"`);
  });

  it('writes one OpenLineage run event with the half-open window as nominalTime and the parent run', async () => {
    const ev = JSON.parse(readFileSync(join(bag, 'data', 'lineage', `${rerun}.openlineage.json`), 'utf8'));
    expect(ev.eventType).toBe('COMPLETE');
    expect(ev.schemaURL).toBe('https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent');
    expect(ev.run.runId).toBe(uuidV5(rerun));
    expect(ev.run.runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ev.run.facets.nominalTime).toMatchObject({ nominalStartTime: '2026-11-02T00:00:00Z', nominalEndTime: '2026-11-03T00:00:00Z' });
    expect(ev.run.facets.parent).toMatchObject({ run: { runId: uuidV5(first) }, job: { namespace: 'reckon', name: 'reckon.run' } });
    expect(ev.run.facets.reckon_run).toMatchObject({ run_id: rerun, parent_run_id: first, trigger: 'incident', reason: 'auditor asked for a rerun' });
    expect(ev.inputs.map((i: any) => i.name)).toContain(`${SOURCES}/orders`);
  });

  it('fails naming the file when one payload file is changed', async () => {
    const c = copyBag(bag, 'changed');
    const victim = `data/breaks/${walk(join(c, 'data', 'breaks'))[0]}`;
    appendFileSync(join(c, victim), ' ');
    const v = await verify(c);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toBe(`FAILED: ${victim} has been changed: sha256 ${hash('sha256', join(c, victim))} ≠ ${hash('sha256', join(bag, victim))} in manifest-sha256.txt`);
  });

  it('fails naming the file when one payload file is removed', async () => {
    const c = copyBag(bag, 'removed');
    const victim = `data/lineage/${rerun}.openlineage.json`;
    rmSync(join(c, victim));
    const v = await verify(c);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toBe(`FAILED: ${victim} is listed in manifest-sha256.txt but missing from the payload`);
  });

  it('fails naming the file when one payload file is added', async () => {
    const c = copyBag(bag, 'added');
    mkdirSync(join(c, 'data', 'outputs', 'extra'), { recursive: true });
    writeFileSync(join(c, 'data', 'outputs', 'extra', 'part-00001.parquet'), 'PAR1');
    const v = await verify(c);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toBe('FAILED: data/outputs/extra/part-00001.parquet is in the payload but not listed in manifest-sha256.txt');
  });

  it('fails on a wrong Payload-Oxum even when every checksum holds', async () => {
    const c = copyBag(bag, 'oxum');
    const e = expectedBag(c);
    const info = readFileSync(join(c, 'bag-info.txt'), 'utf8').replace(/^Payload-Oxum: .*$/m, 'Payload-Oxum: 1.1');
    writeFileSync(join(c, 'bag-info.txt'), info);
    writeFileSync(join(c, 'tagmanifest-sha256.txt'), ['bag-info.txt', 'bagit.txt', 'manifest-sha256.txt', 'manifest-sha512.txt'].map((t) => `${hash('sha256', join(c, t))}  ${t}\n`).join(''));
    const v = await verify(c);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toBe(`FAILED: bag-info.txt: Payload-Oxum 1.1 ≠ ${e.oxum} (octets.files) of the payload`);
  });

  it('fails when a break log was rewritten and the bag re-manifested to hide it', async () => {
    const c = copyBag(bag, 'forged-break');
    const id = readdirSync(join(c, 'data', 'breaks')).sort()[0];
    const p = join(c, 'data', 'breaks', id, 'events', '000001.json');
    editPayload(p, '"to_state":"OPEN"', '"to_state":"CLOSED"');
    rebag(c);
    const v = await verify(c);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toBe(`FAILED: break ${id}: its event log replays to CLOSED at version 1, but data/breaks/${id}/break.json records OPEN at version 1`);
  });

  it('fails when a break log has a gap, even re-manifested', async () => {
    const c = copyBag(bag, 'gap');
    const id = readdirSync(join(c, 'data', 'breaks')).sort()[1];
    const dir = join(c, 'data', 'breaks', id, 'events');
    const e1 = JSON.parse(readFileSync(join(dir, '000001.json'), 'utf8'));
    // A well-formed envelope (an unknown envelope field is its own finding, breaks-tamper.test.ts) whose payload skips version 2.
    const payload = JSON.stringify({ ...JSON.parse(e1.payload), version: 3, expected_version: 2, from_state: 'OPEN', to_state: 'TRIAGED' });
    writeFileSync(join(dir, '000003.json'), JSON.stringify({ ...e1, payload }));
    rebag(c);
    const v = await verify(c);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toBe(`FAILED: break ${id}: data/breaks/${id}/events/000003.json where version 2 was expected: its versions are not contiguous from 1`);
  });

  it('fails when an output no longer matches its run manifest, even re-manifested', async () => {
    const c = copyBag(bag, 'forged-output');
    const doc = JSON.parse(readFileSync(join(c, 'data', 'manifests', `00000002-${rerun}.json`), 'utf8'));
    const key = doc.outputs[0].key;
    appendFileSync(join(c, 'data', key), 'x');
    rebag(c);
    const v = await verify(c);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toBe(`FAILED: data/${key} does not have the SHA-256 ${doc.outputs[0].sha256} that run ${rerun} recorded`);
  });
});

describe('reckon evidence pack --window and --break', () => {
  it('packs every run of the window with its chain; --control keeps that control\'s breaks', async () => {
    const out = join(tmp.dir, 'window-rc03');
    const r = await pack(['--window', WINDOW, '--control', 'RC03', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect((await verify(out)).code).toBe(0);
    const files = walk(join(out, 'data'));
    expect(files.filter((f) => /^manifests\/.*\.json$/.test(f))).toEqual([`manifests/00000001-${first}.json`, `manifests/00000002-${rerun}.json`]);
    const m2 = JSON.parse(readFileSync(join(out, 'data', 'manifests', `00000002-${rerun}.json`), 'utf8'));
    expect(m2.chain.previous_manifest_sha256).toBe(hash('sha256', join(out, 'data', 'manifests', `00000001-${first}.json`)));
    const breakIds = [...new Set(files.filter((f) => f.startsWith('breaks/')).map((f) => f.split('/')[1]))];
    const rc03 = m2.breaks.filter((b: any) => b.control_id === 'RC03').map((b: any) => b.break_id).sort();
    expect(breakIds.sort()).toEqual(rc03);
    expect(rc03.length).toBe(8); // the sample day's RC03 differences
    expect(readFileSync(join(out, 'bag-info.txt'), 'utf8')).toContain(`External-Identifier: reckon:window:2026-11-02T00:00:00Z/2026-11-03T00:00:00Z:control:RC03\n`);
    // The first run's lineage event has no parent facet.
    expect(JSON.parse(readFileSync(join(out, 'data', 'lineage', `${first}.openlineage.json`), 'utf8')).run.facets.parent).toBeUndefined();
  });

  it('fails when a manifest in the bag no longer links to the preceding one', async () => {
    const src = join(tmp.dir, 'window-all');
    expect((await pack(['--window', WINDOW, '--out', src])).code).toBe(0);
    const c = copyBag(src, 'forged-chain');
    // Swap in a self-consistent forgery of manifest 1 (edited reason, sidecar recomputed): manifest 2's link breaks.
    const p1 = join(c, 'data', 'manifests', `00000001-${first}.json`);
    const forged = readFileSync(p1, 'utf8').replace('"reason":null', '"reason":"edited"');
    writeFileSync(p1, forged);
    writeFileSync(p1.replace(/\.json$/, '.sha256'), `${createHash('sha256').update(forged).digest('hex')}  00000001-${first}.json\n`);
    rebag(c);
    const v = await verify(c);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toMatch(new RegExp(`^FAILED: data/manifests/00000001-${first}\\.json: SHA-256 [0-9a-f]{64} is not link 1 of the chain`));
    expect(v.stdout).toContain(`data/manifests/00000002-${rerun}.json: previous_manifest_sha256`);
  });

  it('packs one break with the runs that observed it', async () => {
    const m = JSON.parse(readFileSync(join(store, 'manifests', `00000001-${first}.json`), 'utf8'));
    const id = m.breaks.find((b: any) => b.kind === 'FILL_QTY_MISMATCH').break_id;
    // Move it along its lifecycle first, so the bag carries a log of several events.
    const signed = (who: string, ...args: string[]) => reckonHere(['breaks', ...args, '--store', store, '--config', config, '--key', keys[who].key]);
    const t = await signed('alice', 'advance', id, '--to', 'TRIAGED', '--actor', 'alice', '--owner', 'alice', '--classification', 'VALUE', '--expected-version', '1');
    expect(t.code, t.stderr).toBe(0);
    const c = await signed('alice', 'advance', id, '--to', 'CONTAINED', '--actor', 'alice', '--approver', 'bob', '--note', 'venue asked to confirm', '--expected-version', '2');
    expect(c.code, c.stderr).toBe(0);
    const a = await signed('bob', 'approve', id, '--version', '3');
    expect(a.code, a.stderr).toBe(0);
    const out = join(tmp.dir, 'break-bag');
    const r = await pack(['--break', id, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const v = await verify(out);
    expect(v.stdout).toMatch(/^ok: /);
    expect(v.code).toBe(0);
    const files = walk(join(out, 'data'));
    const proposal = files.find((f) => f.startsWith(`breaks/${id}/proposals/000003-`))!;
    expect(files.filter((f) => f.startsWith('breaks/'))).toEqual([
      `breaks/${id}/break.json`, `breaks/${id}/events/000001.json`, `breaks/${id}/events/000002.json`, `breaks/${id}/events/000003.json`,
      ...[first, rerun].sort().map((run) => `breaks/${id}/observations/${run}.json`), proposal,
    ]);
    expect(JSON.parse(readFileSync(join(out, 'data', 'breaks', id, 'break.json'), 'utf8'))).toMatchObject({ state: 'CONTAINED', version: 3, events: 3, observations: 2 });
    expect(files.filter((f) => /^manifests\/.*\.json$/.test(f))).toEqual([`manifests/00000001-${first}.json`, `manifests/00000002-${rerun}.json`]);
    expect(readFileSync(join(out, 'bag-info.txt'), 'utf8')).toContain(`External-Identifier: reckon:break:${id}\n`);

    // A forged log whose middle event skips a state is caught, even re-manifested.
    const forged = copyBag(out, 'forged-state');
    const e2 = join(forged, 'data', 'breaks', id, 'events', '000002.json');
    editPayload(e2, '"from_state":"OPEN"', '"from_state":"CORRECTED"');
    rebag(forged);
    const f = await verify(forged);
    expect(f.code).toBe(1);
    expect(f.stdout.split('\n')[0]).toBe(`FAILED: break ${id}: data/breaks/${id}/events/000002.json moves from CORRECTED but the previous event left it OPEN`);
  });
});

/** Entries of a ZIP as name → bytes. */
async function unzip(path: string): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((res, rej) => yauzl.open(path, { lazyEntries: true }, (e, z) => (e ? rej(e) : res(z!))));
  const out = new Map<string, Buffer>();
  await new Promise<void>((res, rej) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entry.fileName.endsWith('/')) { out.set(entry.fileName, Buffer.alloc(0)); zip.readEntry(); return; }
      zip.openReadStream(entry, (err, s) => {
        if (err) { rej(err); return; }
        const chunks: Buffer[] = [];
        s!.on('data', (c: Buffer) => chunks.push(c));
        s!.on('end', () => { out.set(entry.fileName, Buffer.concat(chunks)); zip.readEntry(); });
      });
    });
    zip.on('end', () => res());
    zip.on('error', rej);
    zip.readEntry();
  });
  return out;
}

async function zipOf(entries: Map<string, Buffer>, path: string): Promise<void> {
  const z = new yazl.ZipFile();
  for (const [name, bytes] of entries) if (!name.endsWith('/')) z.addBuffer(bytes, name);
  z.end();
  await new Promise<void>((res, rej) => {
    z.outputStream.pipe(createWriteStream(path)).on('close', () => res()).on('error', rej);
  });
}

describe('zipped bags', () => {
  let zip: string;
  beforeAll(async () => {
    zip = join(tmp.dir, 'evidence-2026-11-02.zip');
    const r = await pack(['--run', first, '--out', zip]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('unpacks to one folder named after the file, verifies, and matches the folder form', async () => {
    const entries = await unzip(zip);
    const names = [...entries.keys()];
    expect(new Set(names.map((n) => n.split('/')[0]))).toEqual(new Set(['evidence-2026-11-02']));
    expect(names).toContain('evidence-2026-11-02/bagit.txt');
    const v = await verify(zip);
    expect(v.stdout).toMatch(/^ok: /);
    expect(v.code).toBe(0);
    // Recompute the manifest from the zip's own bytes.
    const payload = names.filter((n) => n.startsWith('evidence-2026-11-02/data/') && !n.endsWith('/')).map((n) => n.slice('evidence-2026-11-02/'.length))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const expected = payload.map((p) => `${createHash('sha256').update(entries.get(`evidence-2026-11-02/${p}`)!).digest('hex')}  ${p}\n`).join('');
    expect(entries.get('evidence-2026-11-02/manifest-sha256.txt')!.toString('utf8')).toBe(expected);
    const octets = payload.reduce((a, p) => a + entries.get(`evidence-2026-11-02/${p}`)!.length, 0);
    expect(entries.get('evidence-2026-11-02/bag-info.txt')!.toString('utf8')).toContain(`Payload-Oxum: ${octets}.${payload.length}\n`);
  });

  it('fails naming the file when one entry is changed', async () => {
    const entries = await unzip(zip);
    const victim = [...entries.keys()].find((n) => n.includes('/data/lineage/'))!;
    entries.set(victim, Buffer.concat([entries.get(victim)!, Buffer.from(' ')]));
    const forged = join(tmp.dir, 'forged.zip');
    await zipOf(entries, forged);
    const v = await verify(forged);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n')[0]).toMatch(new RegExp(`^FAILED: ${victim.slice(victim.indexOf('/') + 1).replace(/\./g, '\\.')} has been changed: sha256 `));
  });
});

describe('refusals', () => {
  it('never overwrites an existing bag, and names unknown runs and breaks (exit 2)', async () => {
    const out = join(tmp.dir, 'exists');
    mkdirSync(out);
    const r = await pack(['--run', first, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('already exists');
    expect((await pack(['--run', 'run-nope', '--out', join(tmp.dir, 'x')])).stderr).toContain('no published manifest for run run-nope');
    expect((await pack(['--break', 'brk-000000000000000000000000', '--out', join(tmp.dir, 'x')])).code).toBe(2);
    expect((await pack(['--window', '2020-01-01T00:00:00Z/2020-01-02T00:00:00Z', '--out', join(tmp.dir, 'x')])).code).toBe(2);
    expect((await pack(['--run', first, '--break', 'brk-000000000000000000000000', '--out', join(tmp.dir, 'x')])).code).toBe(2);
    expect(existsSync(join(tmp.dir, 'x'))).toBe(false);
    expect((await verify(join(tmp.dir, 'no-such-bag'))).code).toBe(2);
  });

  it('refuses to pack a store whose outputs no longer match their manifest (exit 1, nothing written)', async () => {
    const broken = join(tmp.dir, 'broken-store');
    cpSync(store, broken, { recursive: true });
    const doc = JSON.parse(readFileSync(join(broken, 'manifests', `00000001-${first}.json`), 'utf8'));
    appendFileSync(join(broken, doc.outputs[1].key), 'x');
    const out = join(tmp.dir, 'never.zip');
    const r = await reckonHere(['evidence', 'pack', '--run', first, '--store', broken, '--out', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`output ${doc.outputs[1].key} of run ${first} has SHA-256`);
    expect(existsSync(out)).toBe(false);
  });
});
