/**
 * A small ssh-agent client (draft-miller-ssh-agent): list the agent's identities and ask it to
 * sign, over the Unix socket named by SSH_AUTH_SOCK. A person keeps a passphrase-protected key in
 * the agent and reckon never sees the private key. Only the two requests reckon needs are spoken.
 */
import { connect } from 'node:net';
import { WireReader, sshString, uint32 } from './ssh-wire.js';

const SSH_AGENT_FAILURE = 5;
const SSH_AGENTC_REQUEST_IDENTITIES = 11;
const SSH_AGENT_IDENTITIES_ANSWER = 12;
const SSH_AGENTC_SIGN_REQUEST = 13;
const SSH_AGENT_SIGN_RESPONSE = 14;

/** How long reckon waits for the agent before giving up (a confirm-each-use agent waits for a person). */
const AGENT_TIMEOUT_MS = 60_000;

/** An identity the agent holds: the public key blob and its comment. */
export interface AgentIdentity {
  readonly blob: Buffer;
  readonly comment: string;
}

/** Sends one request to the agent and returns the reply's type and body. Throws Error when the agent cannot be reached. */
async function request(socket: string, type: number, body: Buffer): Promise<{ type: number; body: Buffer }> {
  const message = Buffer.concat([uint32(body.length + 1), Buffer.from([type]), body]);
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    const chunks: Buffer[] = [];
    let got = 0;
    const timer = setTimeout(() => { conn.destroy(); reject(new Error(`ssh-agent at ${socket} did not answer within ${AGENT_TIMEOUT_MS / 1000} s`)); }, AGENT_TIMEOUT_MS);
    conn.on('connect', () => conn.write(message));
    conn.on('data', (d: Buffer) => {
      chunks.push(d);
      got += d.length;
      const all = Buffer.concat(chunks, got);
      if (all.length >= 4 && all.length >= 4 + all.readUInt32BE(0)) {
        clearTimeout(timer);
        conn.end();
        const len = all.readUInt32BE(0);
        resolve({ type: all[4], body: all.subarray(5, 4 + len) });
      }
    });
    conn.on('error', (e) => { clearTimeout(timer); reject(new Error(`cannot reach ssh-agent at ${socket}: ${e.message}`)); });
    conn.on('close', () => { clearTimeout(timer); reject(new Error(`ssh-agent at ${socket} closed the connection without an answer`)); });
  });
}

/** The identities the agent holds. Throws Error when the agent cannot be reached or answers otherwise. */
export async function agentIdentities(socket: string): Promise<AgentIdentity[]> {
  const reply = await request(socket, SSH_AGENTC_REQUEST_IDENTITIES, Buffer.alloc(0));
  if (reply.type !== SSH_AGENT_IDENTITIES_ANSWER) throw new Error(`ssh-agent at ${socket} refused to list its keys (reply ${reply.type})`);
  const r = new WireReader(reply.body);
  const n = r.u32();
  const out: AgentIdentity[] = [];
  for (let i = 0; i < n; i++) out.push({ blob: Buffer.from(r.string()), comment: r.text() });
  return out;
}

/**
 * Asks the agent to sign `data` with the key of `blob`; returns the signature blob (string type,
 * string signature). Throws Error when the agent refuses (SSH_AGENT_FAILURE) or cannot be reached.
 */
export async function agentSign(socket: string, blob: Buffer, data: Buffer): Promise<Buffer> {
  const reply = await request(socket, SSH_AGENTC_SIGN_REQUEST, Buffer.concat([sshString(blob), sshString(data), uint32(0)]));
  if (reply.type === SSH_AGENT_FAILURE) throw new Error(`ssh-agent at ${socket} refused to sign (the key may need confirmation, or is not there)`);
  if (reply.type !== SSH_AGENT_SIGN_RESPONSE) throw new Error(`ssh-agent at ${socket} gave an unexpected reply (${reply.type})`);
  return Buffer.from(new WireReader(reply.body).string());
}
