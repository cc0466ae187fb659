/**
 * BagIt 1.0 (RFC 8493) writing and structural verification, for the evidence packages of
 * `reckon evidence`. A bag is a folder with `bagit.txt`, `bag-info.txt`, payload manifests
 * (`manifest-sha256.txt`, `manifest-sha512.txt`), a tag manifest (`tagmanifest-sha256.txt`) and
 * the payload under `data/`. It is written either as a folder or as a ZIP whose entries sit under
 * one top-level folder named after the file (RFC 8493 §4: a serialization unpacks to a single
 * base directory).
 *
 * Manifest lines are `<hex digest>  <path>` (two spaces, so `sha256sum -c` reads them too), sorted
 * by path in byte order; a path's CR, LF and `%` are percent-encoded (RFC 8493 §2.1.3). Every
 * write is write-once: an existing output path is never replaced.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, lstat, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { makeDirs } from '../core/paths.js';

/** Exact content of `bagit.txt` for BagIt 1.0 with UTF-8 tag files. */
export const BAGIT_TXT = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';

/** Payload manifest algorithms written, in file order. */
export const PAYLOAD_ALGORITHMS = ['sha256', 'sha512'] as const;
/** Algorithms a bag being verified may use (RFC 8493 §2.4); anything else is a problem. */
export const KNOWN_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;
export type BagAlgorithm = (typeof KNOWN_ALGORITHMS)[number];

/** One payload file: its path under `data/` (`/`-separated, no `..`) and where its bytes come from. */
export interface PayloadEntry {
  readonly path: string;
  readonly source: { readonly kind: 'bytes'; readonly bytes: Buffer } | { readonly kind: 'file'; readonly path: string };
}

/** A labelled `bag-info.txt` element, in the order written. */
export type BagInfo = readonly (readonly [label: string, value: string])[];

/** Percent-encodes a path for a manifest line (RFC 8493 §2.1.3): `%` → `%25`, CR → `%0D`, LF → `%0A`. */
export function encodeManifestPath(path: string): string {
  return path.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Reverses `encodeManifestPath` (case-insensitive hex, as RFC 8493 allows). */
export function decodeManifestPath(path: string): string {
  return path.replace(/%0D/gi, '\r').replace(/%0A/gi, '\n').replace(/%25/g, '%');
}

/** Byte-order comparison of two strings (as UTF-8), for stable manifest order. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Checks a payload path: relative, `/`-separated, no empty, `.` or `..` segment, no backslash or NUL. Throws Error otherwise. */
export function assertSafeRelativePath(path: string): void {
  if (path === '' || path.startsWith('/') || /[\\\u0000]/.test(path) || path.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new Error(`unsafe bag path ${JSON.stringify(path)}`);
  }
}

/** Digests of a buffer or a file for several algorithms at once, with its size in bytes. */
export async function digests(source: PayloadEntry['source'] | Buffer, algorithms: readonly BagAlgorithm[]): Promise<{ size: number; hex: Record<string, string> }> {
  const hashes = algorithms.map((a) => createHash(a));
  let size = 0;
  if (Buffer.isBuffer(source) || source.kind === 'bytes') {
    const b = Buffer.isBuffer(source) ? source : source.bytes;
    for (const h of hashes) h.update(b);
    size = b.length;
  } else {
    for await (const chunk of createReadStream(source.path)) {
      for (const h of hashes) h.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  }
  return { size, hex: Object.fromEntries(algorithms.map((a, i) => [a, hashes[i].digest('hex')])) };
}

/** The text of a manifest file: one `<digest>  <path>` line per entry, sorted by path. */
export function manifestText(lines: readonly { path: string; digest: string }[]): string {
  return [...lines].sort((a, b) => byteOrder(a.path, b.path)).map((l) => `${l.digest}  ${encodeManifestPath(l.path)}\n`).join('');
}

/** The text of `bag-info.txt`; values are single-line (CR/LF become spaces). */
export function bagInfoText(info: BagInfo): string {
  return info.map(([k, v]) => `${k}: ${v.replace(/[\r\n]+/g, ' ')}\n`).join('');
}

/** Payload-Oxum `<octets>.<streams>` of a payload (RFC 8493 §2.2.2). */
export function payloadOxum(sizes: readonly number[]): string {
  return `${sizes.reduce((a, b) => a + b, 0)}.${sizes.length}`;
}

/** Where and how a bag is written. `zip` when the path ends in `.zip`, otherwise a folder. */
export interface BagTarget {
  readonly kind: 'dir' | 'zip';
  readonly path: string;
}

/** The target for an `--out` path. */
export function bagTarget(out: string): BagTarget {
  return { kind: /\.zip$/i.test(out) ? 'zip' : 'dir', path: out };
}

/** What `writeBag` produced. */
export interface WrittenBag {
  readonly target: BagTarget;
  readonly payloadFiles: number;
  readonly payloadBytes: number;
  readonly oxum: string;
}

/**
 * Writes a bag: the payload, the two payload manifests, `bagit.txt`, `bag-info.txt` (the given
 * elements plus Payload-Oxum after them) and `tagmanifest-sha256.txt`. Refuses an existing
 * target (throws Error with code EEXIST). A folder is assembled beside the target and renamed into
 * place; a ZIP is written to a temporary file and hard-linked into place, so a reader never sees
 * half a bag.
 */
/** The signature of `tagmanifest-sha256.txt` (issue 18), a tag file no tag manifest lists (it signs the one that lists the others). */
export const TAG_SIGNATURE = 'tagmanifest-sha256.txt.sig';

export async function writeBag(target: BagTarget, payload: readonly PayloadEntry[], info: BagInfo, opts: { signTags?: (tagManifest: Buffer) => Promise<string> } = {}): Promise<WrittenBag> {
  await assertAbsent(target.path);
  const seen = new Set<string>();
  const lines: Record<string, { path: string; digest: string }[]> = Object.fromEntries(PAYLOAD_ALGORITHMS.map((a) => [a, []]));
  const sizes: number[] = [];
  for (const e of payload) {
    assertSafeRelativePath(e.path);
    if (seen.has(e.path)) throw new Error(`payload path ${e.path} appears twice`);
    seen.add(e.path);
    const d = await digests(e.source, PAYLOAD_ALGORITHMS);
    sizes.push(d.size);
    for (const a of PAYLOAD_ALGORITHMS) lines[a].push({ path: `data/${e.path}`, digest: d.hex[a] });
  }
  const oxum = payloadOxum(sizes);
  const tags: [string, Buffer][] = [
    ['bagit.txt', Buffer.from(BAGIT_TXT, 'utf8')],
    ['bag-info.txt', Buffer.from(bagInfoText([...info, ['Payload-Oxum', oxum]]), 'utf8')],
    ...PAYLOAD_ALGORITHMS.map((a): [string, Buffer] => [`manifest-${a}.txt`, Buffer.from(manifestText(lines[a]), 'utf8')]),
  ];
  const tagLines = await Promise.all(tags.map(async ([p, b]) => ({ path: p, digest: (await digests(b, ['sha256'])).hex.sha256 })));
  const tagManifest = Buffer.from(manifestText(tagLines), 'utf8');
  tags.push(['tagmanifest-sha256.txt', tagManifest]);
  if (opts.signTags) tags.push([TAG_SIGNATURE, Buffer.from(await opts.signTags(tagManifest), 'utf8')]);
  const files: PayloadEntry[] = [...tags.map(([p, b]): PayloadEntry => ({ path: p, source: { kind: 'bytes', bytes: b } })), ...payload.map((e) => ({ ...e, path: `data/${e.path}` }))];
  if (target.kind === 'dir') await writeDir(target.path, files);
  else await writeZip(target.path, files);
  return { target, payloadFiles: payload.length, payloadBytes: sizes.reduce((a, b) => a + b, 0), oxum };
}

async function assertAbsent(path: string): Promise<void> {
  try {
    await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const err = new Error(`${path} already exists; evidence is never overwritten`) as NodeJS.ErrnoException;
  err.code = 'EEXIST';
  throw err;
}

async function writeDir(out: string, files: readonly PayloadEntry[]): Promise<void> {
  const partial = join(dirname(out), `.${basename(out)}.partial-${randomBytes(6).toString('hex')}`);
  try {
    for (const f of files) {
      const p = join(partial, ...f.path.split('/'));
      await makeDirs(dirname(p));
      if (f.source.kind === 'bytes') await writeFile(p, f.source.bytes, { flag: 'wx' });
      else await pipeline(createReadStream(f.source.path), createWriteStream(p, { flags: 'wx' }));
    }
    await assertAbsent(out);
    await rename(partial, out);
  } catch (e) {
    await rm(partial, { recursive: true, force: true });
    throw e;
  }
}

async function writeZip(out: string, files: readonly PayloadEntry[]): Promise<void> {
  const base = basename(out).replace(/\.zip$/i, '');
  assertSafeRelativePath(base);
  const partial = join(dirname(out), `.${basename(out)}.partial-${randomBytes(6).toString('hex')}`);
  const zip = new yazl.ZipFile();
  // A fixed entry time keeps the archive's bytes a function of its content.
  const mtime = new Date(Date.UTC(2000, 0, 1));
  zip.addEmptyDirectory(`${base}/`, { mtime, mode: 0o40755 });
  for (const f of files) {
    const name = `${base}/${f.path}`;
    if (f.source.kind === 'bytes') zip.addBuffer(f.source.bytes, name, { mtime, mode: 0o100644 });
    else zip.addReadStream(createReadStream(f.source.path), name, { mtime, mode: 0o100644, size: (await stat(f.source.path)).size });
  }
  zip.end();
  try {
    await pipeline(zip.outputStream, createWriteStream(partial, { flags: 'wx' }));
    try {
      await link(partial, out);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') await assertAbsent(out);
      throw e;
    }
  } finally {
    await unlink(partial).catch(() => undefined);
  }
}

/** One file of a bag being read: path relative to the bag's base directory, size, and whether it is a symbolic link. */
export interface BagFile {
  readonly path: string;
  readonly size: number;
  readonly symlink?: boolean;
}

/** Read access to a bag, as a folder or a ZIP. */
export interface BagReader {
  /** What was opened (shown in messages). */
  readonly location: string;
  /** Every file of the bag (not directories), keyed by path relative to the base directory. */
  readonly files: ReadonlyMap<string, BagFile>;
  /** Whole contents of a file (tag files, manifests, break logs). */
  read(path: string): Promise<Buffer>;
  /** Digests of a file, streamed. */
  digest(path: string, algorithms: readonly BagAlgorithm[]): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** Opens a bag folder or ZIP. Throws Error with a message naming the problem when it cannot be read at all. */
export async function openBag(location: string): Promise<BagReader> {
  const s = await stat(location);
  return s.isDirectory() ? openDirBag(location) : openZipBag(location);
}

async function openDirBag(root: string): Promise<BagReader> {
  const files = new Map<string, BagFile>();
  const walk = async (rel: string) => {
    for (const e of await readdir(join(root, ...(rel ? rel.split('/') : [])), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else if (e.isSymbolicLink()) files.set(p, { path: p, size: 0, symlink: true });
      else files.set(p, { path: p, size: (await lstat(join(root, ...p.split('/')))).size });
    }
  };
  await walk('');
  const abs = (p: string) => join(root, ...p.split('/'));
  return {
    location: root,
    files,
    read: async (p) => readFile(abs(p)),
    digest: async (p, algs) => (await digests({ kind: 'file', path: abs(p) }, algs)).hex,
    close: async () => undefined,
  };
}

async function openZipBag(path: string): Promise<BagReader> {
  const zip = await new Promise<yauzl.ZipFile>((res, rej) => yauzl.open(path, { lazyEntries: true, autoClose: false }, (err, z) => (err ? rej(err) : res(z!))));
  const entries = await new Promise<yauzl.Entry[]>((res, rej) => {
    const all: yauzl.Entry[] = [];
    zip.on('entry', (e: yauzl.Entry) => { all.push(e); zip.readEntry(); });
    zip.on('end', () => res(all));
    zip.on('error', rej);
    zip.readEntry();
  });
  const tops = new Set(entries.map((e) => e.fileName.split('/')[0]));
  if (tops.size !== 1 || entries.some((e) => !e.fileName.includes('/'))) {
    zip.close();
    throw new Error(`${path}: a zipped bag must unpack to one top-level folder; found ${[...tops].slice(0, 5).join(', ') || 'nothing'}`);
  }
  const prefix = `${[...tops][0]}/`;
  const byPath = new Map<string, yauzl.Entry>();
  const files = new Map<string, BagFile>();
  for (const e of entries) {
    if (e.fileName.endsWith('/')) continue;
    const p = e.fileName.slice(prefix.length);
    if (byPath.has(p)) { zip.close(); throw new Error(`${path}: entry ${p} appears twice`); }
    byPath.set(p, e);
    const unixMode = (e.externalFileAttributes >>> 16) & 0o170000;
    files.set(p, { path: p, size: e.uncompressedSize, symlink: unixMode === 0o120000 });
  }
  const stream = (p: string) => new Promise<NodeJS.ReadableStream>((res, rej) => {
    const e = byPath.get(p);
    if (!e) { rej(new Error(`${p} is not in the bag`)); return; }
    zip.openReadStream(e, (err, s) => (err ? rej(err) : res(s!)));
  });
  return {
    location: path,
    files,
    read: async (p) => {
      const chunks: Buffer[] = [];
      for await (const c of await stream(p)) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    },
    digest: async (p, algs) => {
      const hashes = algs.map((a) => createHash(a));
      for await (const c of await stream(p)) for (const h of hashes) h.update(c as Buffer);
      return Object.fromEntries(algs.map((a, i) => [a, hashes[i].digest('hex')]));
    },
    close: async () => zip.close(),
  };
}

/** A parsed manifest file: path → digest, with the problems found while parsing. */
export interface ParsedManifest {
  readonly file: string;
  readonly algorithm: string;
  readonly entries: ReadonlyMap<string, string>;
  readonly problems: readonly string[];
}

/** Parses a (tag) manifest's text. Lines are `<digest><whitespace><path>`; duplicates and malformed lines are problems. */
export function parseManifestText(file: string, algorithm: string, text: string): ParsedManifest {
  const entries = new Map<string, string>();
  const problems: string[] = [];
  const width = { md5: 32, sha1: 40, sha256: 64, sha512: 128 }[algorithm];
  text.split(/\r\n|\n|\r/).forEach((line, i) => {
    if (line === '') return;
    const m = /^([0-9a-fA-F]+)[ \t]+(.+)$/.exec(line);
    if (!m) { problems.push(`${file} line ${i + 1} is not '<checksum> <path>'`); return; }
    if (width !== undefined && m[1].length !== width) problems.push(`${file} line ${i + 1}: checksum has ${m[1].length} hex digits, ${algorithm} has ${width}`);
    const p = decodeManifestPath(m[2].replace(/^\*/, ''));
    if (entries.has(p)) problems.push(`${file} lists ${p} twice`);
    entries.set(p, m[1].toLowerCase());
  });
  return { file, algorithm, entries, problems };
}

/** Parses `bag-info.txt` into labelled values (continuation lines start with white space). */
export function parseBagInfo(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let last: [string, number] | undefined;
  for (const line of text.split(/\r\n|\n|\r/)) {
    if (line === '') continue;
    if (/^[ \t]/.test(line) && last) {
      const vals = out.get(last[0])!;
      vals[last[1]] = `${vals[last[1]]} ${line.trim()}`;
      continue;
    }
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const k = line.slice(0, i).trim();
    const vals = out.get(k) ?? [];
    vals.push(line.slice(i + 1).trim());
    out.set(k, vals);
    last = [k, vals.length - 1];
  }
  return out;
}

/** Result of a structural check: the problems in the order found (empty when the bag is valid) and counts. */
export interface StructureResult {
  readonly problems: string[];
  readonly payloadFiles: number;
  readonly payloadBytes: number;
  readonly algorithms: readonly string[];
}

/**
 * Checks a bag's structure and fixity (RFC 8493 §3): `bagit.txt`, the `data/` folder, every payload
 * manifest complete (each payload file listed, each listed file present) and correct, Payload-Oxum,
 * and every tag manifest. Problems name the file concerned; none are thrown.
 */
export async function verifyStructure(bag: BagReader): Promise<StructureResult> {
  const problems: string[] = [];
  const files = bag.files;
  const result = (algorithms: string[] = []) => {
    const payload = [...files.values()].filter((f) => f.path.startsWith('data/'));
    return { problems, payloadFiles: payload.length, payloadBytes: payload.reduce((a, f) => a + f.size, 0), algorithms };
  };
  if (!files.has('bagit.txt')) { problems.push('bagit.txt is missing: not a bag'); return result(); }
  await checkDeclaration(bag, problems);
  if (files.has('fetch.txt')) problems.push('fetch.txt is present: this bag is not complete (remote payload is not supported)');
  if (![...files.keys()].some((p) => p.startsWith('data/'))) problems.push('data/ is missing or empty: the bag has no payload');
  for (const f of files.values()) if (f.symlink) problems.push(`${f.path} is a symbolic link; a bag holds only regular files`);

  const payloadManifests = [...files.keys()].filter((p) => /^manifest-[a-z0-9]+\.txt$/.test(p)).sort();
  const tagManifests = [...files.keys()].filter((p) => /^tagmanifest-[a-z0-9]+\.txt$/.test(p)).sort();
  if (payloadManifests.length === 0) problems.push('no payload manifest (manifest-<algorithm>.txt)');
  const algorithms = payloadManifests.map((p) => /^manifest-([a-z0-9]+)\.txt$/.exec(p)![1]);
  const parsed: ParsedManifest[] = [];
  for (const [i, file] of payloadManifests.entries()) {
    const alg = algorithms[i];
    if (!(KNOWN_ALGORITHMS as readonly string[]).includes(alg)) { problems.push(`${file}: algorithm ${alg} is not supported`); continue; }
    const pm = parseManifestText(file, alg, (await bag.read(file)).toString('utf8'));
    problems.push(...pm.problems);
    for (const p of pm.entries.keys()) if (!p.startsWith('data/')) problems.push(`${file} lists ${p}, which is outside data/`);
    parsed.push(pm);
  }
  const payload = [...files.keys()].filter((p) => p.startsWith('data/')).sort(byteOrder);
  await checkPayload(bag, parsed, payload, problems);
  if (!files.has('bag-info.txt')) problems.push('bag-info.txt is missing');
  else {
    const info = parseBagInfo((await bag.read('bag-info.txt')).toString('utf8'));
    const oxum = info.get('Payload-Oxum');
    const actual = payloadOxum(payload.map((p) => files.get(p)!.size));
    if (!oxum) problems.push('bag-info.txt has no Payload-Oxum');
    else if (oxum.length > 1) problems.push('bag-info.txt has more than one Payload-Oxum');
    else if (oxum[0] !== actual) problems.push(`bag-info.txt: Payload-Oxum ${oxum[0]} ≠ ${actual} (octets.files) of the payload`);
  }
  for (const file of tagManifests) await checkTagManifest(bag, file, problems);
  return result(algorithms);
}

/** bagit.txt: BagIt-Version 1.0 (or 0.97), UTF-8 tag files, no byte order mark. */
async function checkDeclaration(bag: BagReader, problems: string[]): Promise<void> {
  const declaration = (await bag.read('bagit.txt')).toString('utf8');
  const decl = parseBagInfo(declaration.replace(/^\uFEFF/, ''));
  if (!/^(1\.0|0\.97)$/.test(decl.get('BagIt-Version')?.[0] ?? '')) problems.push(`bagit.txt: BagIt-Version is ${JSON.stringify(decl.get('BagIt-Version')?.[0] ?? null)}, expected 1.0`);
  if ((decl.get('Tag-File-Character-Encoding')?.[0] ?? '').toUpperCase() !== 'UTF-8') problems.push('bagit.txt: Tag-File-Character-Encoding must be UTF-8');
  if (declaration.startsWith('\uFEFF')) problems.push('bagit.txt starts with a byte order mark (RFC 8493 §2.1.1 forbids it)');
}

/** Every payload manifest against the payload: complete both ways, then each listed file's digests. */
async function checkPayload(bag: BagReader, parsed: readonly ParsedManifest[], payload: readonly string[], problems: string[]): Promise<void> {
  const files = bag.files;
  // Completeness first: a file added, removed or renamed is named before any checksum is computed.
  for (const pm of parsed) {
    for (const p of pm.entries.keys()) if (p.startsWith('data/') && !files.has(p)) problems.push(`${p} is listed in ${pm.file} but missing from the payload`);
    for (const p of payload) if (!pm.entries.has(p)) problems.push(`${p} is in the payload but not listed in ${pm.file}`);
  }
  for (const p of payload) {
    const algs = parsed.filter((pm) => pm.entries.has(p)).map((pm) => pm.algorithm as BagAlgorithm);
    if (algs.length === 0 || files.get(p)!.symlink) continue;
    const got = await bag.digest(p, algs);
    for (const pm of parsed) {
      const want = pm.entries.get(p);
      if (want !== undefined && got[pm.algorithm] !== want) problems.push(`${p} has been changed: ${pm.algorithm} ${got[pm.algorithm]} ≠ ${want} in ${pm.file}`);
    }
  }
}

/** One tag manifest: it lists only tag files (never the payload or a tag manifest), each present and unchanged, and every tag file. */
async function checkTagManifest(bag: BagReader, file: string, problems: string[]): Promise<void> {
  const files = bag.files;
  const alg = /^tagmanifest-([a-z0-9]+)\.txt$/.exec(file)![1];
  if (!(KNOWN_ALGORITHMS as readonly string[]).includes(alg)) { problems.push(`${file}: algorithm ${alg} is not supported`); return; }
  const tm = parseManifestText(file, alg, (await bag.read(file)).toString('utf8'));
  problems.push(...tm.problems);
  for (const [p, want] of tm.entries) {
    if (p.startsWith('data/') || /^tagmanifest-/.test(p)) { problems.push(`${file} lists ${p}, which is not a tag file it may cover`); continue; }
    if (!files.has(p)) { problems.push(`${p} is listed in ${file} but missing`); continue; }
    const got = (await bag.digest(p, [alg as BagAlgorithm]))[alg];
    if (got !== want) problems.push(`${p} has been changed: ${alg} ${got} ≠ ${want} in ${file}`);
  }
  for (const p of [...files.keys()].filter((x) => !x.startsWith('data/') && !/^tagmanifest-/.test(x)).sort()) {
    if (!tm.entries.has(p)) problems.push(`tag file ${p} is not listed in ${file}`);
  }
}
