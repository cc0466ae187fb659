/**
 * Real OpenSSH keys for tests: `ssh-keygen` (Debian's openssh-client) makes ed25519 key pairs in a
 * test's folder, writes an allowed_signers registry naming them, signs and verifies with
 * `ssh-keygen -Y`, and starts a real `ssh-agent` on a socket in the folder.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One signer's key files. */
export interface TestKey {
  readonly name: string;
  /** The private key file (mode 600). */
  readonly key: string;
  /** The public key file. */
  readonly pub: string;
  /** `ssh-ed25519 AAAA…` without the comment. */
  readonly line: string;
  /** SHA256:… as ssh-keygen -l prints it. */
  readonly fingerprint: string;
}

/** Makes an ed25519 key pair `dir/<file>` (optionally passphrase-protected, with `rounds` of bcrypt KDF: few keep a test fast). */
export function makeKey(dir: string, name: string, opts: { passphrase?: string; file?: string; rounds?: number } = {}): TestKey {
  const key = join(dir, opts.file ?? `${name}.key`);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', opts.passphrase ?? '', '-C', `${name} (test key)`, ...(opts.rounds ? ['-a', String(opts.rounds)] : []), '-f', key]);
  chmodSync(key, 0o600);
  const pub = `${key}.pub`;
  const line = readFileSync(pub, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', pub], { encoding: 'utf8' }).split(/\s+/)[1];
  return { name, key, pub, line, fingerprint };
}

/** Key pairs for `names` and an allowed_signers file naming each (`extra` lines appended). */
export function makeSigners(dir: string, names: readonly string[], extra: readonly string[] = []): { keys: Record<string, TestKey>; registry: string } {
  const keys = Object.fromEntries(names.map((n) => [n, makeKey(dir, n)]));
  const registry = join(dir, 'allowed_signers');
  writeFileSync(registry, [...names.map((n) => `${n} ${keys[n].line}`), ...extra].join('\n') + '\n');
  return { keys, registry };
}

/** `ssh-keygen -Y sign` of `file` (writes `file.sig`); returns the signature's text. */
export function sshKeygenSign(key: string, namespace: string, file: string): string {
  execFileSync('ssh-keygen', ['-q', '-Y', 'sign', '-f', key, '-n', namespace, file], { stdio: ['ignore', 'ignore', 'pipe'] });
  return readFileSync(`${file}.sig`, 'utf8');
}

/** `ssh-keygen -Y verify` of `message` (bytes on stdin) against `signature` (a file); returns exit code and output. */
export function sshKeygenVerify(a: { registry: string; signer: string; namespace: string; signature: string; message: Buffer | string }): { code: number; out: string } {
  const r = spawnSync('ssh-keygen', ['-Y', 'verify', '-f', a.registry, '-I', a.signer, '-n', a.namespace, '-s', a.signature], { input: a.message, encoding: 'utf8' });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

/** A real ssh-agent on `dir/agent.sock` holding `keys`; `stop()` kills it by its pid. */
export function startAgent(dir: string, keys: readonly string[]): { socket: string; stop: () => void } {
  const socket = join(dir, 'agent.sock');
  const out = execFileSync('ssh-agent', ['-s', '-a', socket], { encoding: 'utf8' });
  const pid = Number(/SSH_AGENT_PID=([0-9]+)/.exec(out)![1]);
  for (const k of keys) execFileSync('ssh-add', ['-q', k], { env: { ...process.env, SSH_AUTH_SOCK: socket }, stdio: ['ignore', 'ignore', 'pipe'] });
  return { socket, stop: () => { try { process.kill(pid); } catch { /* already gone */ } } };
}
