/**
 * The SSH wire encoding (RFC 4251 §5) that SSH keys, signatures and the agent protocol share:
 * `uint32` big-endian lengths, `string` as a length then bytes. A reader that runs out of bytes
 * throws WireError, which callers turn into their own refusal (a truncated signature).
 */

/** Bytes that do not hold the SSH structure expected (too short, a bad length). */
export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireError';
  }
}

/** `uint32` big-endian. */
export function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** `string`: a uint32 length, then the bytes (text as UTF-8). */
export function sshString(data: Buffer | string): Buffer {
  const b = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return Buffer.concat([uint32(b.length), b]);
}

/** Reads SSH wire values from a buffer, front to back. */
export class WireReader {
  private offset = 0;

  constructor(private readonly buf: Buffer) {}

  /** Reads `n` raw bytes. */
  bytes(n: number): Buffer {
    if (n < 0 || this.offset + n > this.buf.length) throw new WireError(`needs ${n} more byte(s) at offset ${this.offset}, ${this.buf.length - this.offset} left`);
    const out = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }

  u32(): number {
    return this.bytes(4).readUInt32BE(0);
  }

  u8(): number {
    return this.bytes(1)[0];
  }

  /** A `string` as bytes. */
  string(): Buffer {
    return this.bytes(this.u32());
  }

  /** A `string` as UTF-8 text. */
  text(): string {
    return this.string().toString('utf8');
  }

  /** True when every byte was read. */
  get done(): boolean {
    return this.offset === this.buf.length;
  }
}
