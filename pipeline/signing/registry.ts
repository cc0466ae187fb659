/**
 * The signer registry (issue 17): who may sign break transitions, as an `allowed_signers` file
 * (allowed-signers.ts) named by the configuration. reckon accepts a strict subset, so that one key
 * always means one person:
 *   - one plain name per line (no pattern lists, wildcards or negation), spelled one way;
 *     a name may have several keys, on several lines;
 *   - ssh-ed25519 keys only; a key may belong to one name only (REGISTRY_KEY_TWO_NAMES);
 *   - the only option is `namespaces="…"` (which signing namespaces the key is good for);
 *     `cert-authority`, `valid-after` and `valid-before` are refused: retire a key by removing
 *     it, since every registry version the store has seen is kept (archiveRegistry);
 *   - `reconciler` is the pipeline and signs no break object (REGISTRY_RESERVED_NAME).
 * Every problem is reported with its file and line at once (ConfigError, exit 2).
 */
import { readFile } from 'node:fs/promises';
import { sha256Hex } from '../core/digest.js';
import { ConfigError, InternalError } from '../core/errors.js';
import { AlreadyExistsError, type ObjectStore } from '../store/object-store.js';
import { parseAllowedSigners } from './allowed-signers.js';
import { KeyFormatError, parsePublicKeyText, sameKey, type SshPublicKey } from './ssh-keys.js';

/** The namespace of break objects: events, proposals, withdrawals. */
export const BREAK_NAMESPACE = 'reckon-break';

/** The pipeline's identity in break events (CONTRACT §5); no registry key signs break objects under it. */
export const RESERVED_SIGNER = 'reconciler';

/** One key of one signer. */
export interface RegistryEntry {
  readonly signer: string;
  readonly key: SshPublicKey;
  /** Namespaces the key may sign in (patterns with `*`, `?`), or null for any. */
  readonly namespaces: readonly string[] | null;
  readonly line: number;
}

/** A registry problem: `file:line`, a code naming the rule, and what is wrong. */
export interface RegistryProblem {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]*$/;
const fold = (s: string) => s.trim().toLowerCase();

function globMatch(pattern: string, s: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(s);
}

/** A parsed, accepted registry: its exact bytes, their SHA-256, and its entries. */
export class SignerRegistry {
  /** SHA-256 (hex) of the file's bytes: recorded with every signature the registry verified. */
  readonly sha256: string;

  private constructor(readonly source: string, readonly bytes: Buffer, readonly entries: readonly RegistryEntry[]) {
    this.sha256 = sha256Hex(bytes);
  }

  /**
   * Parses registry bytes; `source` names them in problems (a path, or `signers/<sha>` in a
   * store). Throws ConfigError listing every problem with its line.
   */
  static parse(bytes: Buffer, source: string): SignerRegistry {
    const { entries, problems } = registryEntries(bytes.toString('utf8'), source);
    if (problems.length) {
      const lines = problems.map((p) => `  ${p.path}: ${p.code}: ${p.message}`);
      throw new ConfigError(`signer registry ${source} is invalid:\n${lines.join('\n')}`, source, problems[0].path);
    }
    return new SignerRegistry(source, Buffer.from(bytes), entries);
  }

  /** The entry of `key`, or undefined when no signer has it. */
  entryOf(key: SshPublicKey): RegistryEntry | undefined {
    return this.entries.find((e) => sameKey(e.key, key));
  }

  /** The registry's spelling of `name` (compared without case), or undefined when it names no such signer. */
  signer(name: string): string | undefined {
    return this.entries.find((e) => fold(e.signer) === fold(name))?.signer;
  }

  /** Every signer name, sorted. */
  signers(): string[] {
    return [...new Set(this.entries.map((e) => e.signer))].sort();
  }

  /** True when `entry`'s key may sign in `namespace` (its `namespaces=` option). */
  allows(entry: RegistryEntry, namespace: string): boolean {
    return entry.namespaces === null || entry.namespaces.some((p) => globMatch(p, namespace));
  }
}

/** Reads and parses the registry file at `path` (ConfigError, exit 2, when it is unreadable or invalid). */
export async function loadRegistry(path: string): Promise<SignerRegistry> {
  let bytes: Buffer;
  try { bytes = await readFile(path); } catch (e) {
    throw new ConfigError(`cannot read the signer registry ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, path);
  }
  return SignerRegistry.parse(bytes, path);
}

function registryEntries(text: string, source: string): { entries: RegistryEntry[]; problems: RegistryProblem[] } {
  const parsed = parseAllowedSigners(text);
  const problems: RegistryProblem[] = parsed.problems.map((p) => ({ path: `${source}:${p.line}`, code: 'REGISTRY_LINE_SYNTAX', message: p.message }));
  const entries: RegistryEntry[] = [];
  const problem = (line: number, code: string, message: string) => problems.push({ path: `${source}:${line}`, code, message });
  for (const l of parsed.lines) {
    if (!NAME.test(l.principals)) {
      problem(l.line, 'REGISTRY_PRINCIPAL', `'${l.principals}' is not one plain signer name (no lists, patterns or negation; letters, digits and . _ @ + -)`);
      continue;
    }
    let key: SshPublicKey;
    try { key = parsePublicKeyText(`${l.keyType} ${l.key}`); } catch (e) {
      problem(l.line, /not supported/.test((e as KeyFormatError).message) ? 'REGISTRY_KEY_TYPE' : 'REGISTRY_KEY_INVALID', (e as Error).message);
      continue;
    }
    let namespaces: string[] | null = null;
    for (const [name, value] of l.options) {
      if (name === 'namespaces' && typeof value === 'string' && value.trim()) namespaces = value.split(',').map((s) => s.trim()).filter(Boolean);
      else problem(l.line, 'REGISTRY_OPTION_UNSUPPORTED', `option ${name} is not supported by reckon (only namespaces="…"; retire a key by removing its line)`);
    }
    const entry = { signer: l.principals, key, namespaces, line: l.line };
    if (fold(l.principals) === RESERVED_SIGNER && (namespaces === null || namespaces.some((p) => globMatch(p, BREAK_NAMESPACE)))) {
      problem(l.line, 'REGISTRY_RESERVED_NAME', `'${RESERVED_SIGNER}' is the pipeline: no key signs break objects (${BREAK_NAMESPACE}) under that name`);
    }
    checkAgainstEarlier(entry, entries, problem);
    entries.push(entry);
  }
  if (entries.length === 0 && problems.length === 0) problems.push({ path: `${source}:1`, code: 'REGISTRY_EMPTY', message: 'the registry names no signer' });
  const lineOf = (p: RegistryProblem) => Number(p.path.slice(p.path.lastIndexOf(':') + 1));
  return { entries, problems: problems.map((p, i) => ({ p, i })).sort((a, b) => lineOf(a.p) - lineOf(b.p) || a.i - b.i).map((x) => x.p) };
}

function checkAgainstEarlier(e: RegistryEntry, earlier: readonly RegistryEntry[], problem: (line: number, code: string, message: string) => void): void {
  for (const o of earlier) {
    if (sameKey(o.key, e.key)) {
      if (fold(o.signer) === fold(e.signer)) problem(e.line, 'REGISTRY_KEY_REPEATED', `key ${e.key.fingerprint} of ${e.signer} is already listed on line ${o.line}`);
      else problem(e.line, 'REGISTRY_KEY_TWO_NAMES', `key ${e.key.fingerprint} is listed for ${e.signer} here and for ${o.signer} on line ${o.line}: one key belongs to one signer`);
      return;
    }
    if (fold(o.signer) === fold(e.signer) && o.signer !== e.signer) {
      problem(e.line, 'REGISTRY_NAME_SPELLING', `${e.signer} is ${o.signer} (line ${o.line}) spelled another way: spell a signer one way`);
      return;
    }
  }
}

/** Store key of an archived registry version. */
export function registryKey(sha256: string): string {
  return `signers/${sha256}.allowed_signers`;
}

/**
 * Keeps this registry version in the store, write-once under `signers/<sha256>.allowed_signers`,
 * so that a signature can be checked later against the registry that was in force. An existing
 * object with the same bytes is fine; different bytes under that name are an InternalError.
 */
export async function archiveRegistry(store: ObjectStore, registry: SignerRegistry): Promise<void> {
  const key = registryKey(registry.sha256);
  try {
    await store.putOnce(key, registry.bytes);
  } catch (e) {
    if (!(e instanceof AlreadyExistsError)) throw e;
    const existing = await store.get(key);
    if (!existing || sha256Hex(existing) !== registry.sha256) throw new InternalError(`${key} exists in ${store.location} with other bytes: the registry archive was tampered with`);
  }
}

/** Read access to stored objects: an ObjectStore, or an evidence bag read as one. */
export type ObjectReader = Pick<ObjectStore, 'get' | 'list'>;

/**
 * The archived registry of `sha256`, parsed, or undefined when the store does not hold it. Throws
 * ConfigError when the archived bytes do not hash to their name or do not parse.
 */
export async function archivedRegistry(store: ObjectReader, sha256: string): Promise<SignerRegistry | undefined> {
  if (!/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  const bytes = await store.get(registryKey(sha256));
  if (!bytes) return undefined;
  if (sha256Hex(bytes) !== sha256) throw new ConfigError(`${registryKey(sha256)} does not hash to its name: the registry archive was edited`, registryKey(sha256));
  return SignerRegistry.parse(bytes, registryKey(sha256));
}
