/**
 * A consistent rewrite is detected (issue 18 item 3): the pipeline signs every manifest with its
 * own key (the registry's `reconciler`, reckon-manifest) and every evidence bag's tag manifest
 * (reckon-evidence); `manifest verify` checks the signatures, recomputes the results digest from
 * the Parquet outputs and refuses any object under outputs/ that no manifest lists; `evidence
 * verify` checks the bag's signatures. Real keys from ssh-keygen, the CLI in process, the RC06
 * break fixture's sources.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { reckon, reckonAsync, reckonIn, scratchDir } from './helpers/cli.js';
import { makeKey, makeSigners, sshKeygenVerify, type TestKey } from './helpers/ssh.js';
import { pipelineLine, rc06Sources, WINDOW } from './fixtures/breaks.js';
import { startS3rver } from './helpers/s3rver.js';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { canonicalJson } from '../pipeline/core/canonical.js';
import { loadSigningKey } from '../pipeline/signing/signing-key.js';
import { sshsigSign } from '../pipeline/signing/sshsig.js';

let tmp: { dir: string; cleanup: () => void };
let sources: string;
let config: string;
let pipeline: TestKey;
let tom: TestKey;
const tomKey = () => tom.key;
let registry: string;
/** A signed store of two runs, copied per test. */
let signed: string;
/** An unsigned store (no configuration) of one run. */
let unsigned: string;
let n = 0;

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const run = (store: string, ...extra: string[]) => reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', sources, '--store', store, '--json', '--quiet', ...extra]);
const verify = (store: string, ...extra: string[]) => reckonIn(['manifest', 'verify', '--store', store, '--json', ...extra]);
const copy = (from: string) => { const to = join(tmp.dir, `copy-${++n}`); cpSync(from, to, { recursive: true }); return to; };
const manifests = (store: string) => readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json')).sort().map((f) => join(store, 'manifests', f));
const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));

/** Rewrites a manifest consistently: canonical bytes and its .sha256 recomputed, the signature left. */
function rewrite(path: string, edit: (doc: any) => void): void {
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  edit(doc);
  const bytes = canonicalJson(doc);
  writeFileSync(path, bytes);
  writeFileSync(path.replace(/\.json$/, '.sha256'), `${sha(bytes)}  ${path.split('/').pop()}\n`);
}

beforeAll(async () => {
  tmp = scratchDir('reckon-store-signing-');
  sources = rc06Sources(tmp.dir).dir;
  pipeline = makeKey(tmp.dir, 'reconciler');
  const people = makeSigners(tmp.dir, ['tom'], [pipelineLine(pipeline)]);
  tom = people.keys.tom;
  registry = people.registry;
  config = join(tmp.dir, 'reckon.json');
  writeFileSync(config, JSON.stringify({ signing: { registry, pipeline_key: pipeline.key } }));
  signed = join(tmp.dir, 'signed');
  for (let i = 0; i < 2; i++) expect((await run(signed, '--config', config)).code).toBe(1);
  unsigned = join(tmp.dir, 'unsigned');
  expect((await run(unsigned)).code).toBe(1);
});

afterAll(() => tmp?.cleanup());

describe('the pipeline signs its manifests', () => {
  it('every manifest has a signature ssh-keygen -Y verify accepts as reconciler in reckon-manifest, and the store verifies', async () => {
    const [first, head] = manifests(signed);
    for (const m of [first, head]) {
      const doc = JSON.parse(readFileSync(m, 'utf8'));
      expect(doc.manifest_signing).toEqual({ mode: 'signed', reason: null, namespace: 'reckon-manifest', signer: 'reconciler', key: pipeline.fingerprint, registry_sha256: sha(readFileSync(registry)) });
      const v = sshKeygenVerify({ registry, signer: 'reconciler', namespace: 'reckon-manifest', signature: `${m}.sig`, message: readFileSync(m) });
      expect(v.code, v.out).toBe(0);
      expect(sshKeygenVerify({ registry, signer: 'reconciler', namespace: 'reckon-break', signature: `${m}.sig`, message: readFileSync(m) }).code).not.toBe(0);
    }
    const r = await verify(signed, '--signers', registry);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json).toMatchObject({ ok: true, checked: 2, signed: 2, unsigned: 0, problems: [] });
  });

  it('the run without the pipeline key is refused before any lease (exit 2), and the key text is never printed', async () => {
    const store = join(tmp.dir, 'nokey');
    const cfg = join(tmp.dir, 'nokey.json');
    writeFileSync(cfg, JSON.stringify({ signing: { registry } }));
    const r = await run(store, '--config', cfg);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('PIPELINE_KEY_MISSING');
    expect(existsSync(join(store, 'leases'))).toBe(false);
    const text = readFileSync(tom.key, 'utf8');
    const wrong = await run(store, '--config', cfg, '--quiet');
    expect(wrong.code).toBe(2);
    const byEnv = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', sources, '--store', store, '--config', cfg], { env: { RECKON_PIPELINE_KEY: text } });
    expect(byEnv.code).toBe(2);
    expect(byEnv.stderr).toContain('SIGNER_KEY_OF_ANOTHER');
    expect(`${byEnv.stdout}${byEnv.stderr}`).not.toContain('PRIVATE KEY');
    expect(`${byEnv.stdout}${byEnv.stderr}`).not.toContain(text.split('\n')[1]);
  });

  it('an unsigned store says so in the run, manifest verify and its manifest', async () => {
    const doc = JSON.parse(readFileSync(manifests(unsigned)[0], 'utf8'));
    expect(doc.manifest_signing).toMatchObject({ mode: 'unsigned', reason: 'no-registry' });
    expect(doc.notes.some((x: string) => x.includes('NOT signed'))).toBe(true);
    const r = await reckonIn(['manifest', 'verify', '--store', unsigned]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 NOT signed');
  });
});

describe('manifest verify refuses a consistent rewrite', () => {
  it('an edited head manifest with its .sha256 recomputed (trigger and a total changed)', async () => {
    const store = copy(signed);
    const head = manifests(store)[1];
    rewrite(head, (d) => { d.trigger = 'incident'; d.results[0].totals[Object.keys(d.results[0].totals)[0]] = '999'; });
    const r = await verify(store);
    expect(r.code).toBe(1);
    expect(r.json.problems[0].key).toBe(`manifests/${head.split('/').pop()}`);
    expect(r.json.problems[0].problem).toContain('SIGNATURE_OTHER_BYTES');
  });

  it('a deleted head manifest whose outputs are left in place: its run= partitions have no manifest', async () => {
    const store = copy(signed);
    const head = manifests(store)[1];
    const runId = /-(run-[^/]+)\.json$/.exec(head)![1];
    for (const f of [head, head.replace(/\.json$/, '.sha256'), `${head}.sig`]) rmSync(f);
    const r = await verify(store);
    expect(r.code).toBe(1);
    expect(r.json.problems[0].key).toMatch(new RegExp(`^outputs/[a-z_]+/window_date=2026-11-02/run=${runId}/`));
    expect(r.json.problems[0].problem).toContain(`no published manifest is of run ${runId}`);
  });

  it('an extra Parquet file in a published run\'s partition', async () => {
    const store = copy(signed);
    const part = readdirSync(join(store, 'outputs', 'runs', 'window_date=2026-11-02'))[0];
    const extra = join(store, 'outputs', 'runs', 'window_date=2026-11-02', part, 'part-00001.parquet');
    cpSync(join(store, 'outputs', 'runs', 'window_date=2026-11-02', part, 'part-00000.parquet'), extra);
    const r = await verify(store);
    expect(r.code).toBe(1);
    expect(r.json.problems[0]).toEqual({ key: `outputs/runs/window_date=2026-11-02/${part}/part-00001.parquet`, problem: expect.stringContaining('its manifest') });
  });

  it('a fake run= partition', async () => {
    const store = copy(signed);
    const fake = join(store, 'outputs', 'differences', 'window_date=2026-11-02', 'run=run-20261101t000000z-deadbeef');
    mkdirSync(fake, { recursive: true });
    writeFileSync(join(fake, 'part-00000.parquet'), 'PAR1');
    const r = await verify(store);
    expect(r.code).toBe(1);
    expect(r.json.problems[0]).toEqual({ key: 'outputs/differences/window_date=2026-11-02/run=run-20261101t000000z-deadbeef/part-00000.parquet', problem: expect.stringContaining('no published manifest is of run run-20261101t000000z-deadbeef') });
  });

  it('an object under manifests/ that reckon never writes', async () => {
    for (const name of ['00000002-run-x.json.bak', 'notes.txt', '00000009-run-gone.sha256', 'old/00000001-run-y.json']) {
      const store = copy(signed);
      mkdirSync(join(store, 'manifests', 'old'), { recursive: true });
      writeFileSync(join(store, 'manifests', name), '{}');
      const r = await verify(store);
      expect(r.code).toBe(1);
      const says = name.endsWith('.sha256') ? 'is the digest of manifests/00000009-run-gone.json, which is not there: that manifest was published and deleted since' : 'is not an object reckon writes under manifests/';
      expect(r.json.problems.filter((p: { key: string }) => p.key === `manifests/${name}`)).toEqual([{ key: `manifests/${name}`, problem: expect.stringContaining(says) }]);
    }
  });

  it('an output edited consistently with the manifest (its SHA-256 and .sha256 recomputed): the signature refuses it, and unsigned the recomputed results digest does', async () => {
    for (const base of [signed, unsigned]) {
      const store = copy(base);
      const head = manifests(store).at(-1)!;
      const doc = JSON.parse(readFileSync(head, 'utf8'));
      const out = doc.outputs.find((o: any) => o.table === 'runs');
      const file = join(store, out.key);
      const db = await DuckDBInstance.create(':memory:');
      const conn = await db.connect();
      const edited = join(tmp.dir, `edited-${++n}.parquet`);
      await conn.run(`COPY (SELECT * REPLACE ('CLEAN' AS status) FROM read_parquet('${file}')) TO '${edited}' (FORMAT parquet)`);
      conn.closeSync();
      db.closeSync();
      rmSync(file);
      cpSync(edited, file);
      rewrite(head, (d) => { const o = d.outputs.find((x: any) => x.table === 'runs'); o.sha256 = sha(readFileSync(file)); o.size = readFileSync(file).length; });
      const r = await verify(store);
      expect(r.code).toBe(1);
      const problems = r.json.problems.map((p: any) => `${p.key}: ${p.problem}`).join('\n');
      if (base === signed) expect(problems).toContain('SIGNATURE_OTHER_BYTES');
      expect(problems).toContain(`the results digest recomputed from ${doc.run_id}'s outputs is`);
    }
  });

  it('a manifest signed by a person\'s key (another principal, or the break namespace) is refused; the pipeline\'s key cannot sign a break step', async () => {
    for (const namespace of ['reckon-manifest', 'reckon-break']) {
      const store = copy(signed);
      const head = manifests(store)[1];
      const key = await loadSigningKey({ file: tom.key });
      writeFileSync(`${head}.sig`, await sshsigSign(readFileSync(head), key, namespace));
      const r = await verify(store);
      expect(r.code).toBe(1);
      expect(r.json.problems[0].key).toBe(`manifests/${head.split('/').pop()}`);
      expect(r.json.problems[0].problem).toContain(namespace === 'reckon-break' ? 'SIGNATURE_NAMESPACE' : "signed by tom's key");
    }
    const id = readdirSync(join(signed, 'breaks')).find((d) => d.startsWith('brk-'))!;
    const step = await reckonIn(['breaks', 'advance', id, '--to', 'TRIAGED', '--expected-version', '1', '--store', copy(signed), '--config', config, '--key', pipeline.key, '--json']);
    expect(step.code).toBe(2);
    expect(step.stderr).toContain('SIGNER_NAMESPACE_NOT_ALLOWED');
  });

  it('a head signed under a registry the auditor does not trust (a forged registry and key) is refused with --signers', async () => {
    const store = copy(signed);
    const other = makeKey(tmp.dir, `forger-${++n}`);
    const trusted = join(tmp.dir, `trusted-${n}`);
    writeFileSync(trusted, `tom ${tom.line}\n${pipelineLine(other)}\n`);
    const r = await verify(store, '--signers', trusted);
    expect(r.code).toBe(1);
    expect(r.json.problems[0].problem).toContain(`does not name as the pipeline's key`);
  });

  it('an unsigned manifest after a signed one is a downgrade', async () => {
    const store = copy(signed);
    const head = manifests(store)[1];
    rmSync(`${head}.sig`);
    rewrite(head, (d) => { d.manifest_signing = { mode: 'unsigned', reason: 'configured', namespace: 'reckon-manifest', signer: null, key: null, registry_sha256: null }; });
    const r = await verify(store);
    expect(r.code).toBe(1);
    expect(r.json.problems.some((p: any) => p.problem.includes('a store does not go back to unsigned'))).toBe(true);
  });

  it('a run without the pipeline key on a signed store is refused before its leases (exit 2): nothing published, the store still verifies', async () => {
    const store = copy(signed);
    const before = walk(store).sort();
    const r = await run(store);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`the store ${store} is signed (its chain head manifests/${manifests(store)[1].split('/').pop()} is a signed manifest) and no pipeline key was given, so a run would publish`);
    expect(r.stderr).toContain('give the configuration the store\'s runs use (--config FILE naming signing.registry and signing.pipeline_key; RECKON_PIPELINE_KEY_FILE supplies the key only with such a configuration); nothing was published');
    expect(walk(store).sort()).toEqual(before);
    expect((await verify(store, '--config', config)).code).toBe(0);
    expect((await run(store, '--config', config)).code).toBe(1);
  });

  it('a run signing under another registry whose key the head\'s registry does not name is refused (exit 2); one that lists both keys rotates', async () => {
    const store = copy(signed);
    const rogue = makeKey(tmp.dir, `rogue-${++n}`);
    const forged = join(tmp.dir, `forged-${n}`);
    writeFileSync(forged, `tom ${tom.line}\n${pipelineLine(rogue)}\n`);
    const forgedConfig = join(tmp.dir, `forged-${n}.json`);
    writeFileSync(forgedConfig, JSON.stringify({ signing: { registry: forged, pipeline_key: rogue.key } }));
    const before = walk(store).sort();
    const r = await run(store, '--config', forgedConfig);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`which does not name this run's pipeline key ${rogue.fingerprint}: a manifest signed with it would never verify; rotate the pipeline key with a registry version that lists both keys`);
    expect(walk(store).sort()).toEqual(before);
    // The rotation: a registry version naming both pipeline keys (signed with the old one), then one naming only the new key.
    const both = join(tmp.dir, `both-${n}`);
    writeFileSync(both, `tom ${tom.line}\n${pipelineLine(pipeline)}\n${pipelineLine(rogue)}\n`);
    const bothConfig = join(tmp.dir, `both-${n}.json`);
    writeFileSync(bothConfig, JSON.stringify({ signing: { registry: both, pipeline_key: pipeline.key } }));
    expect((await run(store, '--config', bothConfig)).code).toBe(1);
    expect((await run(store, '--config', forgedConfig)).code).toBe(1);
    expect((await verify(store, '--signers', forged)).code).toBe(0);
  });

  it('a signed head whose signature is missing is extended by no run, signed or not (exit 2), until the signature is back', async () => {
    const store = copy(signed);
    const head = manifests(store)[1];
    const sig = readFileSync(`${head}.sig`);
    rmSync(`${head}.sig`);
    const before = walk(store).sort();
    for (const extra of [[], ['--config', config]]) {
      const r = await run(store, ...extra);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`the chain head manifests/${head.split('/').pop()} is a signed manifest but its signature ${head.split('/').pop()}.sig is missing: no manifest is published on top of it`);
    }
    expect(walk(store).sort()).toEqual(before);
    // A signature that is there but does not verify is no better.
    const lines = sig.toString('utf8').split('\n');
    const i = lines.findIndex((l) => l.startsWith('-----END')) - 2; // inside the signature blob, near its end
    lines[i] = `${lines[i].slice(0, 10)}${lines[i][10] === 'A' ? 'B' : 'A'}${lines[i].slice(11)}`;
    writeFileSync(`${head}.sig`, lines.join('\n'));
    const withForged = walk(store).sort();
    const forged = await run(store, '--config', config);
    expect(forged.code, forged.stderr).toBe(2);
    expect(forged.stderr).toContain(`the chain head manifests/${head.split('/').pop()}'s signature ${head.split('/').pop()}.sig does not verify as the pipeline's`);
    expect(walk(store).sort()).toEqual(withForged);
    writeFileSync(`${head}.sig`, sig);
    expect((await run(store, '--config', config)).code).toBe(1);
    expect((await verify(store, '--config', config)).code).toBe(0);
  });
});

describe('an S3 store (s3rver)', () => {
  it('a signed run verifies; a forged manifest signature, a fake run= partition and an extra object in a published partition are refused', async () => {
    const s3 = await startS3rver(['reckon-store']);
    try {
      const store = 's3://reckon-store/signed';
      const env = s3.env;
      // Spawned: the AWS SDK reads its region and credentials from the process's environment.
      const r = reckon(['run', '--control', 'RC06', '--window', WINDOW, '--sources', sources, '--store', store, '--json', '--quiet', '--config', config], { env });
      expect(r.code, r.stderr).toBe(1);
      const ok = reckon(['manifest', 'verify', '--store', store, '--json', '--signers', registry], { env });
      expect(ok.json).toMatchObject({ ok: true, signed: 1 });
      const key = r.json.manifest.path.replace('s3://reckon-store/', '');
      const client = s3.client();
      const put = (k: string, body: string | Buffer) => client.send(new PutObjectCommand({ Bucket: 'reckon-store', Key: k, Body: body }));
      await put('signed/outputs/runs/window_date=2026-11-02/run=run-20261101t000000z-0badf00d/part-00000.parquet', 'PAR1');
      const runsKey = (r.json.manifest.path as string).replace(/^.*\/manifests\/[0-9]{8}-/, '').replace(/\.json$/, '');
      await put(`signed/outputs/differences/window_date=2026-11-02/run=${runsKey}/part-00009.parquet`, 'PAR1');
      const tom = await loadSigningKey({ file: tomKey() });
      const bytes = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'reckon-store', Key: key }))).Body!.transformToByteArray());
      await client.send(new DeleteObjectCommand({ Bucket: 'reckon-store', Key: `${key}.sig` }));
      await put(`${key}.sig`, await sshsigSign(bytes, tom, 'reckon-manifest'));
      const bad = reckon(['manifest', 'verify', '--store', store, '--json'], { env });
      expect(bad.code).toBe(1);
      const keys = bad.json.problems.map((p: any) => p.key);
      expect(keys[0]).toBe(key.replace(/^signed\//, ''));
      expect(keys).toContain(`outputs/differences/window_date=2026-11-02/run=${runsKey}/part-00009.parquet`);
      expect(keys).toContain('outputs/runs/window_date=2026-11-02/run=run-20261101t000000z-0badf00d/part-00000.parquet');
    } finally {
      await s3.stop();
    }
  });
});

describe('a run killed at the signature write', () => {
  it('killed at signed (signature written, manifest not): the store verifies, the next run publishes, the stray signature is noted', async () => {
    const store = copy(signed);
    const scratch = join(tmp.dir, `tmp-${++n}`);
    mkdirSync(scratch, { recursive: true });
    const child = reckonAsync(['run', '--control', 'RC06', '--window', WINDOW, '--sources', sources, '--store', store, '--json', '--config', config], { env: { RECKON_FAULT_PAUSE: 'signed', TMPDIR: scratch } });
    await new Promise<void>((resolve, reject) => {
      let err = '';
      child.stderr!.on('data', (b: Buffer) => { err += b.toString(); if (err.includes('paused at signed')) { child.kill('SIGKILL'); resolve(); } });
      child.on('exit', (code) => { if (!err.includes('paused at signed')) reject(new Error(`exited ${code} before pausing: ${err}`)); });
    });
    await new Promise((r) => child.on('close', r));
    expect(manifests(store)).toHaveLength(2);
    const stray = readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json.sig') && !existsSync(join(store, 'manifests', f.slice(0, -4))));
    expect(stray).toHaveLength(1);
    const during = await verify(store);
    expect(during.code, JSON.stringify(during.json?.problems)).toBe(0);
    expect(during.json.notices.map((x: any) => x.key)).toContain(`manifests/${stray[0]}`);
    expect((await run(store, '--config', config)).code).toBe(1);
    expect(manifests(store)).toHaveLength(3);
    const after = await verify(store, '--signers', registry);
    expect(after.code, JSON.stringify(after.json?.problems)).toBe(0);
    expect(after.json.signed).toBe(3);
  });
});

describe('evidence verify checks the bag against the signed manifests', () => {
  let bag: string;
  beforeAll(async () => {
    const runId = /-(run-[^/]+)\.json$/.exec(manifests(signed)[1])![1];
    bag = join(tmp.dir, 'bag');
    const r = await reckonIn(['evidence', 'pack', '--run', runId, '--store', signed, '--out', bag, '--config', config]);
    expect(r.code, r.stderr).toBe(0);
  });

  /** Recomputes both payload manifests and the tag manifest after an edit, as an attacker would. */
  function remanifest(dir: string): void {
    const payload = walk(join(dir, 'data')).map((f) => f.slice(dir.length + 1)).sort();
    for (const alg of ['sha256', 'sha512']) {
      writeFileSync(join(dir, `manifest-${alg}.txt`), payload.map((p) => `${createHash(alg).update(readFileSync(join(dir, p))).digest('hex')}  ${p}\n`).join(''));
    }
    const oxum = `${payload.reduce((a, p) => a + readFileSync(join(dir, p)).length, 0)}.${payload.length}`;
    writeFileSync(join(dir, 'bag-info.txt'), readFileSync(join(dir, 'bag-info.txt'), 'utf8').replace(/^Payload-Oxum: .*$/m, `Payload-Oxum: ${oxum}`));
    const tags = ['bag-info.txt', 'bagit.txt', 'manifest-sha256.txt', 'manifest-sha512.txt'];
    writeFileSync(join(dir, 'tagmanifest-sha256.txt'), tags.map((p) => `${sha(readFileSync(join(dir, p)))}  ${p}\n`).join(''));
  }

  it('the untouched bag verifies as signed', async () => {
    const r = await reckonIn(['evidence', 'verify', bag, '--json']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.signed).toBe(true);
    expect(r.json.trusted_registry).toBe(null);
    const human = await reckonIn(['evidence', 'verify', bag]);
    expect(human.stdout).toContain("signed by the pipeline, as the bag's own registry says: give --signers FILE (or --config) to anchor the key outside the bag");
    for (const trust of [['--signers', registry], ['--config', config]]) {
      const t = await reckonIn(['evidence', 'verify', bag, '--json', ...trust]);
      expect(t.code, t.stdout).toBe(0);
      expect(t.json.trusted_registry).toBe(sha(readFileSync(registry)));
    }
  });

  it('evidence pack refuses a store whose manifest was rewritten consistently (its .sha256 recomputed): the bag would vouch for it', async () => {
    const store = copy(signed);
    const head = manifests(store).at(-1)!;
    rewrite(head, (doc) => { doc.reason = 'rewritten'; });
    const r = await reckonIn(['evidence', 'pack', '--run', 'latest', '--store', store, '--out', join(tmp.dir, `bag-${n}`), '--config', config]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`manifests/${head.split('/').pop()} its signature manifests/${head.split('/').pop()}.sig does not verify it as the pipeline's`);
    expect(existsSync(join(tmp.dir, `bag-${n}`))).toBe(false);
  });

  it('a whole bag built with a registry and pipeline key of its own verifies alone, and is refused against the registry you trust', async () => {
    // Mallory's pipeline: the same sources, her own key and registry, a consistent signed store and bag.
    const dir = join(tmp.dir, 'mallory');
    mkdirSync(dir);
    const key = makeKey(dir, 'reconciler');
    const own = makeSigners(dir, ['tom'], [pipelineLine(key)]);
    const ownConfig = join(dir, 'reckon.json');
    writeFileSync(ownConfig, JSON.stringify({ signing: { registry: own.registry, pipeline_key: key.key } }));
    const store = join(dir, 'store');
    expect((await run(store, '--config', ownConfig)).code).toBe(1);
    const forged = join(dir, 'bag');
    expect((await reckonIn(['evidence', 'pack', '--run', 'latest', '--store', store, '--out', forged, '--config', ownConfig])).code).toBe(0);
    expect((await reckonIn(['evidence', 'verify', forged, '--json'])).code).toBe(0);
    const r = await reckonIn(['evidence', 'verify', forged, '--json', '--signers', registry]);
    expect(r.code).toBe(1);
    expect(r.json.problems).toEqual([`tagmanifest-sha256.txt.sig is signed by ${key.fingerprint}, which the trusted registry ${registry} does not name as the pipeline's key (reconciler): the bag's own registry vouches for a key you do not trust`]);
    // An unsigned bag proves nothing against a trusted registry.
    const plain = join(dir, 'plain-bag');
    expect((await reckonIn(['evidence', 'pack', '--run', 'latest', '--store', unsigned, '--out', plain])).code).toBe(0);
    const u = await reckonIn(['evidence', 'verify', plain, '--json', '--signers', registry]);
    expect(u.code).toBe(1);
    expect(u.json.problems).toEqual([`the bag is not signed (its manifests are unsigned), and a trusted registry (${registry}) was given: nothing binds the bag to its pipeline key`]);
    expect((await reckonIn(['evidence', 'verify', plain, '--signers', registry, '--config', config])).code).toBe(2);
  });

  for (const [name, edit] of [
    ['data/report.html edited', (d: string) => writeFileSync(join(d, 'data', 'report.html'), readFileSync(join(d, 'data', 'report.html'), 'utf8').replace('BREAKS', 'CLEAN'))],
    ['a break.json edited', (d: string) => { const b = walk(join(d, 'data', 'breaks')).find((f) => f.endsWith('break.json'))!; writeFileSync(b, readFileSync(b, 'utf8').replace('"OPEN"', '"CLOSED"')); }],
  ] as const) {
    it(`${name} with manifest-sha*.txt and tagmanifest-sha256.txt recomputed is refused`, async () => {
      const d = copy(bag);
      edit(d);
      remanifest(d);
      const r = await reckonIn(['evidence', 'verify', d, '--json']);
      expect(r.code).toBe(1);
      expect(r.json.problems.join('\n')).toContain('tagmanifest-sha256.txt.sig does not verify');
    });
  }

  it('a deleted tag manifest with Source-Organization changed is refused', async () => {
    const d = copy(bag);
    rmSync(join(d, 'tagmanifest-sha256.txt'));
    writeFileSync(join(d, 'bag-info.txt'), readFileSync(join(d, 'bag-info.txt'), 'utf8').replace(/^Source-Organization: .*$/m, 'Source-Organization: Mallory Ltd'));
    const r = await reckonIn(['evidence', 'verify', d, '--json']);
    expect(r.code).toBe(1);
    expect(r.json.problems[0]).toContain('tagmanifest-sha256.txt is missing');
  });
});
