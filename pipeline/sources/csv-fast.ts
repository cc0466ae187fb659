/**
 * Which CSV files DuckDB may read for the loader's fast path (CONTRACT §2), decided on the bytes
 * while the file is hashed anyway, so it costs no extra read.
 *
 * A CSV file is "plain" when its bytes are ASCII with no `"` (no quoting at all), no CR (LF line
 * ends only), no NUL, no blank line anywhere (so not at the end either) and a header line of at
 * most HEADER_MAX_BYTES. In such a file every record is exactly one line, its fields are the line
 * split at commas, and DuckDB's `read_csv` (all VARCHAR, strict) reads the same fields as the
 * JavaScript reader (readers.ts) would. Anything else — quotes, CRLF, a BOM, UTF-8 letters,
 * blank lines — goes through the JavaScript reader, which owns every rule about CSV structure.
 */
import { isAscii } from 'node:buffer';

/** Longest header line the scan keeps (a longer one sends the file to the JS reader). */
export const HEADER_MAX_BYTES = 1024 * 1024;

const LF = 0x0a;

/** What the scan learned: whether the file is plain, its header fields and its record count. */
export interface CsvShape {
  readonly plain: boolean;
  /** Header fields (the first line split at commas); set only for a plain file. */
  readonly header?: readonly string[];
  /** Records after the header (lines, a last line without LF included, minus the header). */
  readonly records: number;
}

/**
 * A file this run wrote itself (a database extract), with what was learned while writing it: its
 * SHA-256, size and CSV shape. The loader takes these instead of reading the file again to hash
 * and scan it, once the file on disk still has that size.
 */
export interface WrittenFile {
  readonly sha256: string;
  readonly size: number;
  readonly shape: CsvShape;
  /**
   * The database type each column's text was rendered from (postgres/render.ts), by column name:
   * the loader's fast path may check such text by its canonical form (load/fast-path-sql.ts).
   */
  readonly rendered?: Readonly<Record<string, string>>;
}

/**
 * Incremental scan: feed every chunk of the file in order to `chunk`, then call `result`.
 * Costs a few native byte searches per chunk and one `indexOf` per line.
 */
export class CsvShapeScan {
  private plain = true;
  private lfs = 0;
  private last = -1;
  private headBytes: Buffer[] = [];
  private headLen = 0;
  private headDone = false;
  private size = 0;

  /** Takes the next chunk of the file's bytes. */
  chunk(b: Buffer): void {
    if (b.length === 0) return;
    this.size += b.length;
    if (!this.plain) return;
    if (!isAscii(b) || b.indexOf(0x22) >= 0 || b.indexOf(0x0d) >= 0 || b.indexOf(0x00) >= 0) { this.plain = false; return; }
    // A blank line: two LFs in a row (also across chunks), or an LF as the very first byte.
    if ((this.last === LF || this.last === -1) && b[0] === LF) { this.plain = false; return; }
    if (b.indexOf('\n\n') >= 0) { this.plain = false; return; }
    let i = b.indexOf(LF);
    if (!this.headDone) {
      const end = i < 0 ? b.length : i;
      this.headBytes.push(b.subarray(0, end));
      this.headLen += end;
      if (this.headLen > HEADER_MAX_BYTES) { this.plain = false; return; }
      if (i >= 0) this.headDone = true;
    }
    while (i >= 0) {
      this.lfs += 1;
      i = b.indexOf(LF, i + 1);
    }
    this.last = b[b.length - 1];
  }

  /** The shape of the whole file (call after the last chunk). */
  result(): CsvShape {
    if (!this.plain || this.size === 0) return { plain: false, records: 0 };
    const lines = this.lfs + (this.last === LF ? 0 : 1);
    const header = Buffer.concat(this.headBytes).toString('latin1').split(',');
    return { plain: true, header, records: lines - 1 };
  }
}
