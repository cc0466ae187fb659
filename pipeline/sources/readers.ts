/**
 * Readers that turn one data file into raw records: the header's column names and, per record,
 * the text of each field (or null for empty), its record number (`row`, 1 = first data record),
 * the physical line where it starts (`line`, 1 = first line of the file, counted by LF) and its
 * raw text. They never interpret values; validation is the loader's (values.ts). Problems are
 * events, not exceptions: a bad record is a `record_error` (reading goes on with the next record),
 * a file that cannot be read further is a `file_error` (records already read stay read).
 *
 * CSV (RFC 4180) and JSON Lines are read as bytes by the small state machines below, not by a
 * text decoder over the whole stream, so that:
 * - one invalid UTF-8 sequence rejects one record (rule `invalid_utf8`), not the rest of the file;
 * - record and line numbers are exact with quoted newlines, CRLF and records that fail;
 * - memory is bounded: a record may hold up to MAX_RECORD_BYTES (a 10 MB line is fine); a longer
 *   one is refused (`record_too_large`) while its bytes stream past, never buffered whole.
 * Parquet: read through DuckDB from a staged link with a safe name (names are globs in DuckDB),
 * every value turned into the contract's text form; FLOAT/DOUBLE in an exact column is refused.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { createGunzip } from 'node:zlib';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceFile } from './files.js';
import type { ColumnSpec } from '../contract/datasets.js';
import { isOutOfMemory } from '../core/errors.js';
import { ident } from '../core/sql-text.js';
import { nanosText, parquetTimeColumns, subMicrosecondValues, type ParquetTimeColumn } from './parquet-time.js';

/** What a reader reports, in file order. `raw` is the record's text (capped at RAW_KEEP_CHARS). */
export type ReadEvent =
  | { readonly type: 'header'; readonly columns: readonly string[] }
  | { readonly type: 'record'; readonly row: number; readonly line: number; readonly raw: string; readonly fields: ReadonlyMap<string, string | null> }
  | { readonly type: 'record_error'; readonly row: number; readonly line: number; readonly raw: string; readonly rule: string; readonly message: string; readonly column?: string }
  | { readonly type: 'file_error'; readonly rule: string; readonly message: string; readonly row?: number; readonly line?: number }
  /** JSON Lines only: keys seen that are not columns of the dataset (reported once, at the end). */
  | { readonly type: 'extra_columns'; readonly columns: readonly string[] };

/** Most bytes one CSV record or JSON line may hold; a longer one is quarantined as `record_too_large`. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;
/** Most characters of a record's raw text kept in its quarantine entry (the file and line locate the rest). */
export const RAW_KEEP_CHARS = 64 * 1024;

// A UTF-16 surrogate half without its partner (JSON allows the escape; it is not a character).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const wellFormed = (s: string) => !LONE_SURROGATE.test(s);

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;

/** A file that failed while being read: the rule and a message, with the row it stopped at. */
class ReadFailure extends Error {
  constructor(readonly rule: string, message: string) { super(message); }
}

/**
 * The file's bytes, decompressed when it is `.gz`, with a leading UTF-8 BOM removed. Errors of
 * the file system or of gunzip surface as ReadFailure from the iterator, and so does a file whose
 * bytes (after decompression) pass `maxBytes` (`file_too_large`: a small gzip can expand without end).
 */
async function* fileBytes(file: SourceFile, maxBytes = Infinity): AsyncGenerator<Buffer> {
  // O_NONBLOCK: a FIFO swapped in after the file was listed and hashed fails instead of blocking.
  let fh: FileHandle;
  try { fh = await open(file.realPath ?? file.absPath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY); } catch (e) {
    throw new ReadFailure('file_unreadable', `the file cannot be read: ${(e as Error).message}`);
  }
  if (!(await fh.stat().then((st) => st.isFile(), () => false))) {
    await fh.close().catch(() => undefined);
    throw new ReadFailure('file_unreadable', 'the file is no longer a regular file (replaced after it was listed); it is not read');
  }
  const raw = fh.createReadStream({ highWaterMark: 256 * 1024 });
  const src: AsyncIterable<Buffer> = file.gzip ? raw.pipe(createGunzip()) : raw;
  if (file.gzip) raw.on('error', (e) => (src as NodeJS.ReadableStream & { destroy(e: Error): void }).destroy(e));
  let head: Buffer | undefined = Buffer.alloc(0);
  let total = 0;
  try {
    for await (const chunk of src) {
      total += chunk.length;
      if (total > maxBytes) throw new ReadFailure('file_too_large', `the file holds more than ${maxBytes} bytes${file.gzip ? ' once decompressed' : ''}; at most ${maxBytes} are read from one file (limits.max_file_bytes)`);
      if (head !== undefined) {
        // Hold back the first bytes until the BOM question is settled (a chunk may be tiny).
        head = Buffer.concat([head, chunk]);
        if (head.length < 3) continue;
        yield head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? head.subarray(3) : head;
        head = undefined;
        continue;
      }
      yield chunk;
    }
  } catch (e) {
    if (e instanceof ReadFailure) throw e;
    const err = e as NodeJS.ErrnoException;
    if (file.gzip && err.code === 'Z_BUF_ERROR') throw new ReadFailure('gzip_truncated', `the gzip stream ends early (truncated file): ${err.message}`);
    if (file.gzip && err.code?.startsWith('Z_')) throw new ReadFailure('gzip_unreadable', `not a readable gzip stream: ${err.message}`);
    throw new ReadFailure('file_unreadable', `the file cannot be read: ${err.message}`);
  } finally {
    // Also when the reader stops early (a bound was reached): the file is closed now, not at GC.
    raw.destroy();
    await fh.close().catch(() => undefined);
  }
  if (head !== undefined && head.length > 0) {
    yield head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? head.subarray(3) : head;
  }
}

/** One record's bytes as cut from the stream (the whole record, or its head when oversized). */
interface RawRecord {
  readonly bytes: Buffer;
  /** Physical line (1-based) where the record starts. */
  readonly line: number;
  /** Total bytes of the record, including its line end. */
  readonly size: number;
  readonly oversized: boolean;
  /** The stream ended inside a quoted field. */
  readonly openQuote: boolean;
  /** The last record of the stream (no line end after it, or only its line end). */
  readonly atEof: boolean;
}

// CSV scanner states.
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_IN_QUOTED = 3;

/**
 * Cuts a byte stream into records. With `csv`, an LF inside a quoted field does not end the
 * record (RFC 4180); otherwise every LF does (JSON Lines). A record's bytes are kept up to
 * MAX_RECORD_BYTES; past that only its head is kept and it is flagged `oversized`.
 */
async function* cutRecords(chunks: AsyncIterable<Buffer>, csv: boolean): AsyncGenerator<RawRecord> {
  let state = FIELD_START;
  let parts: Buffer[] = [];
  let size = 0;
  let kept = 0;
  let oversized = false;
  let line = 1;
  let recLine = 1;
  const keep = (b: Buffer) => {
    size += b.length;
    if (oversized) return;
    if (kept + b.length > MAX_RECORD_BYTES) {
      // Keep only the head (enough for RAW_KEEP_CHARS characters) and let the rest stream past.
      oversized = true;
      parts = [Buffer.from(Buffer.concat([...parts, b]).subarray(0, RAW_KEEP_CHARS * 4))];
      return;
    }
    if (b.length) { parts.push(b); kept += b.length; }
  };
  const take = (atEof: boolean): RawRecord => {
    const rec: RawRecord = { bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts), line: recLine, size, oversized, openQuote: state === QUOTED, atEof };
    parts = []; size = 0; kept = 0; oversized = false;
    return rec;
  };
  for await (const buf of chunks) {
    let start = 0;
    let i = 0;
    const n = buf.length;
    while (i < n) {
      if (csv && state === QUOTED) {
        // Fast path inside quotes: jump to the next quote, counting the lines passed.
        const q = buf.indexOf(QUOTE, i);
        const end = q < 0 ? n : q;
        for (let j = buf.indexOf(LF, i); j >= 0 && j < end; j = buf.indexOf(LF, j + 1)) line += 1;
        if (q < 0) { i = n; break; }
        state = QUOTE_IN_QUOTED;
        i = q + 1;
        continue;
      }
      if (!csv) {
        const j = buf.indexOf(LF, i);
        if (j < 0) { i = n; break; }
        i = j;
      }
      const b = buf[i];
      if (b === LF) {
        keep(buf.subarray(start, i + 1));
        yield take(false);
        line += 1;
        recLine = line;
        state = FIELD_START;
        start = i + 1;
      } else if (csv) {
        if (b === QUOTE) state = state === FIELD_START || state === QUOTE_IN_QUOTED ? QUOTED : UNQUOTED;
        else if (b === COMMA) state = FIELD_START;
        else state = UNQUOTED;
      }
      i += 1;
    }
    if (start < n) keep(buf.subarray(start));
  }
  if (size > 0) yield take(true);
}

function lossyText(bytes: Buffer): string {
  const s = bytes.toString('utf8');
  return s.length > RAW_KEEP_CHARS ? `${s.slice(0, RAW_KEEP_CHARS)}…` : s;
}

function stripEol(bytes: Buffer): Buffer {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === LF) end -= 1;
  if (end > 0 && bytes[end - 1] === CR) end -= 1;
  return end === bytes.length ? bytes : bytes.subarray(0, end);
}

/** A CSV record split into fields (byte ranges), or the first syntax rule it breaks. */
interface SplitRecord {
  readonly fields: string[];
  readonly fieldBytes: Buffer[];
  readonly error?: { rule: string; message: string; field: number };
}

/**
 * Splits one complete CSV record (line end removed) into fields by RFC 4180: fields separated by
 * commas; a field that starts with `"` is quoted, `""` inside it is one quote, and it must end
 * with `"` followed by a comma or the end of the record. A quote inside an unquoted field,
 * anything after a closing quote, a bare CR and an unclosed quote are syntax errors.
 */
function splitCsvRecord(rec: Buffer): SplitRecord {
  const fieldBytes: Buffer[] = [];
  const quotedFlags: boolean[] = [];
  let error: SplitRecord['error'];
  const fail = (rule: string, message: string) => { error ??= { rule, message, field: fieldBytes.length }; };
  let i = 0;
  const n = rec.length;
  for (;;) {
    if (i < n && rec[i] === QUOTE) {
      // Quoted field.
      const parts: Buffer[] = [];
      let j = i + 1;
      let closed = false;
      while (j < n) {
        const q = rec.indexOf(QUOTE, j);
        if (q < 0) { parts.push(rec.subarray(j)); j = n; break; }
        parts.push(rec.subarray(j, q));
        if (q + 1 < n && rec[q + 1] === QUOTE) { parts.push(rec.subarray(q, q + 1)); j = q + 2; continue; }
        j = q + 1;
        closed = true;
        break;
      }
      if (!closed) fail('csv_unterminated_quote', 'a quoted field is never closed: the quote runs to the end of the file');
      // After the closing quote: a comma, or the end of the record.
      let k = j;
      while (k < n && rec[k] !== COMMA) k += 1;
      if (k > j) {
        fail(rec.subarray(j, k).includes(CR) ? 'csv_bare_cr' : 'csv_quote', `field ${fieldBytes.length + 1} has characters after its closing quote`);
        parts.push(rec.subarray(j, k));
      }
      fieldBytes.push(parts.length === 1 ? parts[0] : Buffer.concat(parts));
      quotedFlags.push(true);
      if (k >= n) break;
      i = k + 1;
      continue;
    }
    let k = i;
    while (k < n && rec[k] !== COMMA) {
      if (rec[k] === QUOTE) fail('csv_quote', `field ${fieldBytes.length + 1} holds a quote but is not quoted (RFC 4180: quote the field and double the quote)`);
      else if (rec[k] === CR) fail('csv_bare_cr', `field ${fieldBytes.length + 1} holds a carriage return outside quotes (line ends are LF or CRLF)`);
      k += 1;
    }
    fieldBytes.push(rec.subarray(i, k));
    quotedFlags.push(false);
    if (k >= n) break;
    i = k + 1;
  }
  return { fields: fieldBytes.map((b) => b.toString('utf8')), fieldBytes, error };
}

/** First field (0-based) whose bytes are not valid UTF-8, or -1. */
function badUtf8Field(fieldBytes: readonly Buffer[]): number {
  return fieldBytes.findIndex((b) => !isUtf8(b));
}

function failureOf(e: unknown): { rule: string; message: string } {
  if (e instanceof ReadFailure) return { rule: e.rule, message: e.message };
  return { rule: 'file_unreadable', message: `the file cannot be read: ${(e as Error).message}` };
}

/**
 * Reads a CSV file (RFC 4180, header row; BOM and CRLF accepted). Blank lines at the very end
 * are line-end noise and skipped; a blank line followed by more records is quarantined. Reading
 * stops with a `file_too_large` file error past `maxBytes` (decompressed).
 */
export async function* readCsv(file: SourceFile, maxBytes = Infinity): AsyncGenerator<ReadEvent> {
  let header: readonly string[] | undefined;
  let row = 0;
  let nextLine = 1;
  const blanks: { line: number }[] = [];
  try {
    for await (const rec of cutRecords(fileBytes(file, maxBytes), true)) {
      nextLine = rec.line + 1;
      const body = stripEol(rec.bytes);
      if (!header) {
        const h = csvHeader(rec, body);
        if (h.type === 'file_error') { yield h; return; }
        header = h.columns;
        yield h;
        continue;
      }
      if (body.length === 0 && !rec.oversized) {
        // Held back: only a record after it makes a blank line an error.
        blanks.push({ line: rec.line });
        continue;
      }
      for (const b of blanks.splice(0)) {
        row += 1;
        yield { type: 'record_error', row, line: b.line, raw: '', rule: 'blank_line', message: 'blank line between records (a record with no fields)' };
      }
      row += 1;
      yield csvRecord(rec, body, row, header);
    }
  } catch (e) {
    const f = failureOf(e);
    yield { type: 'file_error', rule: f.rule, message: `${f.message} (records from row ${row + blanks.length + 1} on are not read)`, row: row + blanks.length + 1, line: blanks[0]?.line ?? nextLine };
    return;
  }
  if (!header) yield { type: 'file_error', rule: 'empty_file', message: 'the file is empty: no header row' };
}

/** The header row as a `header` event, or the `file_error` (rule csv_header) that stops the file. */
function csvHeader(rec: RawRecord, body: Buffer): Extract<ReadEvent, { type: 'header' | 'file_error' }> {
  const stop = (message: string) => ({ type: 'file_error', rule: 'csv_header', message, line: rec.line }) as const;
  if (rec.oversized) return stop(`the header row is larger than ${MAX_RECORD_BYTES} bytes`);
  const split = splitCsvRecord(body);
  const bad = split.error ?? (rec.openQuote ? { rule: 'csv_unterminated_quote', message: 'the header row opens a quote that never closes' } : undefined);
  if (bad) return stop(`the header row cannot be read (${bad.rule}): ${bad.message}`);
  if (body.length === 0) return stop('the header row is blank');
  if (badUtf8Field(split.fieldBytes) >= 0) return stop('the header row is not valid UTF-8');
  const ctl = split.fields.find((c) => /[\u0000-\u001f\u007f]/.test(c));
  if (ctl !== undefined) return stop(`the header names a column with a control character: '${ctl.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}'`);
  return { type: 'header', columns: split.fields };
}

/** One data record (not blank) as a `record`, or the `record_error` of the first rule it breaks. */
function csvRecord(rec: RawRecord, body: Buffer, row: number, header: readonly string[]): ReadEvent {
  if (!rec.oversized && !rec.openQuote && body.indexOf(QUOTE) < 0 && body.indexOf(CR) < 0 && isUtf8(body)) {
    // Fast path (most records): no quotes, no CR, valid UTF-8 — the fields are the text split at commas.
    const text = body.toString('utf8');
    const raw = text.length > RAW_KEEP_CHARS ? `${text.slice(0, RAW_KEEP_CHARS)}…` : text;
    return csvFields(text.split(','), rec, row, raw, header);
  }
  const raw = lossyText(body);
  if (rec.oversized) {
    return { type: 'record_error', row, line: rec.line, raw, rule: 'record_too_large', message: `the record holds ${rec.size} bytes; at most ${MAX_RECORD_BYTES} are read (raw text shows its start)` };
  }
  const split = splitCsvRecord(body);
  const syntax = split.error ?? (rec.openQuote ? { rule: 'csv_unterminated_quote', message: 'a quoted field is never closed: the quote runs to the end of the file', field: split.fields.length - 1 } : undefined);
  if (syntax) return { type: 'record_error', row, line: rec.line, raw, rule: syntax.rule, message: syntax.message, column: header[syntax.field] };
  const badField = isUtf8(body) ? -1 : Math.max(0, badUtf8Field(split.fieldBytes));
  if (badField >= 0) return { type: 'record_error', row, line: rec.line, raw, rule: 'invalid_utf8', message: `field ${badField + 1} is not valid UTF-8`, column: header[badField] };
  return csvFields(split.fields, rec, row, raw, header);
}

/** The record's values by header column (empty text is null), or `field_count` when the numbers differ. */
function csvFields(values: readonly string[], rec: RawRecord, row: number, raw: string, header: readonly string[]): ReadEvent {
  if (values.length !== header.length) {
    return { type: 'record_error', row, line: rec.line, raw, rule: 'field_count', message: `record has ${values.length} fields; the header has ${header.length}` };
  }
  const fields = new Map<string, string | null>();
  for (let i = 0; i < header.length; i++) fields.set(header[i], values[i] === '' ? null : values[i]);
  return { type: 'record', row, line: rec.line, raw, fields };
}

/**
 * Reads a JSON Lines file: one JSON object per line (LF or CRLF); numbers keep their literal
 * text. A decimal, amount or int column may hold a JSON number or string; a bool column a JSON
 * boolean or string; any other column a JSON string. `null` and "" are empty. Keys that are not
 * columns of the dataset are reported once as `extra_columns`. Reading stops with a
 * `file_too_large` file error past `maxBytes` (decompressed).
 */
export async function* readJsonl(file: SourceFile, columns: readonly ColumnSpec[], maxBytes = Infinity): AsyncGenerator<ReadEvent> {
  const kinds = new Map(columns.map((c) => [c.name, c.kind]));
  const extra = new Set<string>();
  let row = 0;
  let nextLine = 1;
  const blanks: number[] = [];
  yield { type: 'header', columns: columns.map((c) => c.name) };
  try {
    for await (const rec of cutRecords(fileBytes(file, maxBytes), false)) {
      nextLine = rec.line + 1;
      const body = stripEol(rec.bytes);
      if (body.length === 0 && !rec.oversized) { blanks.push(rec.line); continue; }
      for (const line of blanks.splice(0)) {
        row += 1;
        yield { type: 'record_error', row, line, raw: '', rule: 'jsonl_blank_line', message: 'blank line inside a JSON Lines file' };
      }
      row += 1;
      yield jsonlRecord(rec, body, row, kinds, extra);
    }
  } catch (e) {
    const f = failureOf(e);
    yield { type: 'file_error', rule: f.rule, message: `${f.message} (records from row ${row + blanks.length + 1} on are not read)`, row: row + blanks.length + 1, line: blanks[0] ?? nextLine };
    return;
  }
  if (extra.size) yield { type: 'extra_columns', columns: [...extra] };
  if (row === 0) yield { type: 'file_error', rule: 'empty_file', message: 'the file holds no JSON Lines record' };
}

type ColumnKind = ColumnSpec['kind'];

/** One line (not blank) as a `record`, or the `record_error` of the first rule it breaks; unknown keys go into `extra`. */
function jsonlRecord(rec: RawRecord, body: Buffer, row: number, kinds: ReadonlyMap<string, ColumnKind>, extra: Set<string>): ReadEvent {
  const raw = lossyText(body);
  const fail = (rule: string, message: string, column?: string): ReadEvent => ({ type: 'record_error', row, line: rec.line, raw, rule, message, ...(column === undefined ? {} : { column }) });
  if (rec.oversized) return fail('record_too_large', `the line holds ${rec.size} bytes; at most ${MAX_RECORD_BYTES} are read (raw text shows its start)`);
  if (!isUtf8(body)) return fail('invalid_utf8', 'the line is not valid UTF-8');
  let doc: unknown;
  try { doc = parseLossless(body.toString('utf8')); } catch (e) {
    return fail('jsonl_not_json', `line is not JSON: ${(e as Error).message.slice(0, 200)}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || isLosslessNumber(doc)) return fail('jsonl_not_object', 'line is not a JSON object');
  // lossless-json refuses a key given twice with different values but keeps one given twice
  // with the same value (also spelled with escapes): a record names each column once, in every format.
  if (topLevelKeyCount(body.toString('utf8')) !== Object.keys(doc).length) {
    return fail('jsonl_not_json', "the line's JSON object names a key more than once; a record names each column once");
  }
  const { fields, problem } = jsonlFields(doc as Record<string, unknown>, kinds, extra);
  if (problem) return fail(problem.rule, problem.message, problem.column);
  return { type: 'record', row, line: rec.line, raw, fields };
}

/** The object's values by column as text, with the first value its column's kind does not allow. */
function jsonlFields(doc: Record<string, unknown>, kinds: ReadonlyMap<string, ColumnKind>, extra: Set<string>): { fields: Map<string, string | null>; problem?: { column: string; rule: string; message: string } } {
  const fields = new Map<string, string | null>();
  let problem: { column: string; rule: string; message: string } | undefined;
  for (const [k, v] of Object.entries(doc)) {
    const kind = kinds.get(k);
    if (kind === undefined) {
      // An unknown key is an extra column, unless it cannot be a column name at all.
      if (/[\u0000-\u001f\u007f]/.test(k) || !wellFormed(k)) problem ??= { column: k.replace(/[\u0000-\u001f\u007f]/g, '?'), rule: 'jsonl_key', message: 'a key holds a control character or a lone surrogate' };
      else extra.add(k);
      continue;
    }
    if (v === null || v === '') { fields.set(k, null); continue; }
    if (isLosslessNumber(v)) {
      if (kind === 'decimal' || kind === 'amount_minor' || kind === 'int') fields.set(k, v.value);
      else problem ??= { column: k, rule: 'jsonl_type', message: `column ${k} must be ${kind === 'bool' ? 'JSON true or false' : 'a JSON string'}, not the number ${v.value.slice(0, 80)}` };
    } else if (typeof v === 'string') {
      if (!wellFormed(v)) problem ??= { column: k, rule: 'jsonl_invalid_unicode', message: `column ${k} holds a lone UTF-16 surrogate (\\uD800–\\uDFFF escape), not a character` };
      // CONTRACT §1: bool columns hold JSON true/false in JSON Lines, never the strings "true"/"false".
      else if (kind === 'bool') problem ??= { column: k, rule: 'jsonl_type', message: `column ${k} must be JSON true or false, not the string "${v.slice(0, 20)}"` };
      else fields.set(k, v);
    } else if (typeof v === 'boolean') {
      if (kind === 'bool') fields.set(k, String(v));
      else problem ??= { column: k, rule: 'jsonl_type', message: `column ${k} must not be a JSON boolean` };
    } else problem ??= { column: k, rule: 'jsonl_type', message: `column ${k} holds a JSON ${Array.isArray(v) ? 'array' : 'object'}` };
  }
  return { fields, problem };
}

/**
 * Number of keys of the top-level object in `json`, a text already parsed as one JSON object:
 * every string at depth 1 after `{` or `,` is a key. Compared with the parsed object's keys, it
 * finds a key given twice.
 */
function topLevelKeyCount(json: string): number {
  let depth = 0;
  let keys = 0;
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      for (i += 1; json.charCodeAt(i) !== QUOTE; i += 1) if (json.charCodeAt(i) === 0x5c) i += 1;
      if (depth === 1 && expectKey) { keys += 1; expectKey = false; }
    } else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth === 1) expectKey = true;
    } else if (c === 0x7d || c === 0x5d) depth -= 1;
    else if (c === COMMA && depth === 1) expectKey = true;
  }
  return keys;
}

const FLOAT_TYPES = /^(FLOAT|DOUBLE|REAL)$/;
const EXACT_KINDS = new Set(['decimal', 'amount_minor', 'int']);

/** Kinds whose values are strings in every format (CONTRACT §1: id, currency, cutoff, zone names, enums, text). */
const STRING_KINDS: ReadonlySet<string> = new Set(['id', 'enum', 'currency', 'text', 'timezone', 'cutoff']);

/**
 * Why a Parquet column of `type` (as DuckDB describes it) cannot hold the dataset column `spec`,
 * or undefined when it can: a binary float in a decimal, money or int column (never exact), and a
 * number, boolean or any type but a string in a string column (an INTEGER account_id is not the
 * id `5`: ids are strings in every format, as JSON Lines already insists). The whole file is
 * refused, as its column type is a property of the file.
 */
export function parquetColumnProblem(spec: ColumnSpec, type: string): { rule: string; message: string } | undefined {
  if (EXACT_KINDS.has(spec.kind) && FLOAT_TYPES.test(type)) return { rule: 'parquet_float_column', message: `column ${spec.name} is ${type}; a binary float is never accepted for a decimal, money or int column` };
  if (STRING_KINDS.has(spec.kind) && type !== 'VARCHAR') return { rule: 'parquet_column_type', message: `column ${spec.name} is ${type}; ${spec.kind === 'enum' ? 'an enum' : `a${spec.kind === 'id' ? 'n' : ''} ${spec.kind}`} column holds strings in every format (CONTRACT §1), so the file is not read` };
  if (spec.kind === 'local_timestamp' && type !== 'VARCHAR' && !/^TIMESTAMP/.test(type)) return { rule: 'parquet_column_type', message: `column ${spec.name} is ${type}; a local time is a string (or a timestamp without zone)` };
  return undefined;
}
/** Rows of a Parquet file read per query (each page is materialized, then handed out record by record). */
export const PARQUET_PAGE_ROWS = 50_000;

/**
 * Reads a Parquet file through DuckDB. `stagedPath` is a link to the file under a name made only
 * of safe characters (checked here), so nothing from the source file name reaches SQL. Rows come
 * in any order (DuckDB may scan in parallel); each carries its own row number in the file.
 * `rowFilter`, when given, is an SQL condition over the file's columns and `file_row_number`
 * (0-based) choosing the rows to read (the loader's fast path hands back only the rows it did not
 * load); it is SQL written by the loader, never text from the file or its name.
 */
export async function* readParquet(conn: DuckDBConnection, stagedPath: string, columns: readonly ColumnSpec[], rowFilter?: string): AsyncGenerator<ReadEvent> {
  if (!/^[A-Za-z0-9_\-/.]+$/.test(stagedPath)) {
    yield { type: 'file_error', rule: 'file_unreadable', message: 'internal: the staged link has an unsafe path; the file was not read' };
    return;
  }
  const described = await describeParquet(conn, stagedPath);
  if ('type' in described) { yield described; return; }
  const { schema, time } = described;
  const specOf = new Map(columns.map((c) => [c.name, c]));
  // The names as the file spells them: DuckDB renames a repeated name (`price`, `price_1`), which
  // would hide a column named twice and invent an extra column (the loader quarantines the rows).
  yield { type: 'header', columns: schema.map((c) => time.get(c.name)?.parquetName ?? c.name) };
  for (const c of schema) {
    const spec = specOf.get(c.name);
    const problem = spec && parquetColumnProblem(spec, c.type);
    if (problem) {
      yield { type: 'file_error', ...problem };
      return;
    }
  }
  const exprs = schema.filter((c) => specOf.has(c.name)).map((c) => {
    const col = ident(c.name);
    return { name: c.name, expr: `${parquetTextExpr(col, c.type, specOf.get(c.name)!.kind, time.get(c.name)?.naive ?? false)} AS ${col}` };
  });
  // Read in pages of PARQUET_PAGE_ROWS by row number, each page a complete query: the loader
  // appends to DuckDB between pages, and an append on the connection would end an open stream
  // early (silently: a streamed file used to stop at 204,800 rows).
  const select = `SELECT file_row_number${exprs.map((x) => `, ${x.expr}`).join('')} FROM read_parquet('${stagedPath}', file_row_number = true)`;
  let total: number;
  try {
    total = Number((await conn.runAndReadAll(`SELECT count(*) FROM read_parquet('${stagedPath}')`)).getRows()[0][0]);
  } catch (e) {
    if (isOutOfMemory(e)) throw e; // the run's memory, not the file: never a quarantine entry
    yield { type: 'file_error', rule: 'parquet_unreadable', message: `the Parquet file cannot be read to its end: ${firstLine(e)}` };
    return;
  }
  const nanosColumns = [...time].filter(([name, t]) => t.utcNanos && specOf.get(name)?.kind === 'timestamp');
  for (let lo = 0; lo < total; lo += PARQUET_PAGE_ROWS) {
    const page = await readParquetPage(conn, stagedPath, select, lo, rowFilter, nanosColumns);
    if ('type' in page) { yield page; return; }
    for (const r of page.rows) yield parquetRecord(r, exprs, page.subMicro);
  }
}

const firstLine = (e: unknown) => (e as Error).message.split('\n')[0];

/** The file's columns as DuckDB describes them and how it stores its timestamps, or the `file_error` that stops it. */
async function describeParquet(conn: DuckDBConnection, stagedPath: string): Promise<ReadEvent | { schema: { name: string; type: string }[]; time: Map<string, ParquetTimeColumn> }> {
  let schema: { name: string; type: string }[];
  try {
    const r = await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${stagedPath}')`);
    schema = r.getRowObjectsJson().map((o) => ({ name: String(o.column_name), type: String(o.column_type) }));
  } catch (e) {
    if (isOutOfMemory(e)) throw e; // the run's memory, not the file: never a quarantine entry
    return { type: 'file_error', rule: 'parquet_unreadable', message: `not a readable Parquet file: ${firstLine(e)}` };
  }
  // How the file stores its timestamps (sources/parquet-time.ts): columns without zone, and the
  // values of UTC-adjusted nanosecond columns that DuckDB would truncate to the microsecond.
  try {
    return { schema, time: await parquetTimeColumns(conn, stagedPath, schema.map((c) => c.name)) };
  } catch (e) {
    if (isOutOfMemory(e)) throw e;
    return { type: 'file_error', rule: 'parquet_unreadable', message: `the Parquet file's timestamps cannot be read exactly: ${firstLine(e)}` };
  }
}

/** SQL turning column `col` (DuckDB type `type`, dataset kind `kind`) into the contract's text form. */
function parquetTextExpr(col: string, type: string, kind: ColumnSpec['kind'], naive: boolean): string {
  let e: string;
  if (type === 'TIMESTAMP WITH TIME ZONE') e = `strftime(timezone('UTC', ${col}), '%Y-%m-%dT%H:%M:%S.%fZ')`;
  // Nanoseconds that are not whole microseconds are shown with 9 digits, which the timestamp rule rejects.
  else if (type === 'TIMESTAMP_NS') {
    // Built by hand: DuckDB's strftime '%n' has printed stray bytes after the digits here.
    const ns = `((epoch_ns(${col}) % 1000000000 + 1000000000) % 1000000000)`;
    const secs = `strftime(make_timestamp((epoch_ns(${col}) - ${ns}) // 1000), '%Y-%m-%dT%H:%M:%S')`;
    e = `CASE WHEN epoch_ns(${col}) % 1000 = 0 THEN strftime(${col}::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%fZ') ELSE ${secs} || '.' || lpad(${ns}::VARCHAR, 9, '0') || 'Z' END`;
  }
  else if (/^TIMESTAMP/.test(type)) e = `strftime(${col}::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%fZ')`;
  else if (type === 'BOOLEAN') e = `CASE WHEN ${col} THEN 'true' ELSE 'false' END`;
  else e = `${col}::VARCHAR`;
  // A timestamp stored without zone is shown as what it is, a wall-clock time with no zone: the
  // timestamp rule rejects it (timestamp_without_zone) instead of it being taken for UTC, and in
  // a `*_local` column it is the local time the column holds (mapped in its companion zone).
  if (naive && (kind === 'timestamp' || kind === 'local_timestamp') && /^TIMESTAMP(_S|_MS|_NS)?$/.test(type)) e = `rtrim(${e}, 'Z')`;
  return e;
}

/** One page of rows from row number `lo`, with its values below the microsecond, or the `file_error` that stops the file. */
async function readParquetPage(
  conn: DuckDBConnection, stagedPath: string, select: string, lo: number, rowFilter: string | undefined, nanosColumns: [string, ParquetTimeColumn][],
): Promise<ReadEvent | { rows: unknown[][]; subMicro: Map<string, Map<number, bigint>> }> {
  let rows: unknown[][];
  try {
    const where = `file_row_number >= ${lo} AND file_row_number < ${lo + PARQUET_PAGE_ROWS}${rowFilter ? ` AND (${rowFilter})` : ''}`;
    rows = (await conn.runAndReadAll(`${select} WHERE ${where}`)).getRows();
  } catch (e) {
    if (isOutOfMemory(e)) throw e;
    return { type: 'file_error', rule: 'parquet_unreadable', message: `the Parquet file cannot be read to its end: ${firstLine(e)}` };
  }
  // This page's values below the microsecond, read exactly (DuckDB truncates them); a page with
  // no row to read (records handed back from the fast path are few) costs no second read.
  const subMicro = new Map<string, Map<number, bigint>>();
  try {
    if (rows.length) for (const [name, t] of nanosColumns) subMicro.set(name, await subMicrosecondValues(stagedPath, t.parquetName, Infinity, { start: lo, end: lo + PARQUET_PAGE_ROWS }));
  } catch (e) {
    if (isOutOfMemory(e)) throw e;
    return { type: 'file_error', rule: 'parquet_unreadable', message: `the Parquet file's timestamps cannot be read exactly: ${firstLine(e)}` };
  }
  return { rows, subMicro };
}

/** One Parquet row (file_row_number first, then the selected columns) as a `record`, or `invalid_utf8` for text that is not Unicode. */
function parquetRecord(r: unknown[], exprs: readonly { name: string }[], subMicro: ReadonlyMap<string, Map<number, bigint>>): ReadEvent {
  const fields = new Map<string, string | null>();
  let problem: string | undefined;
  for (let i = 0; i < exprs.length; i++) {
    const v = r[i + 1];
    const s = v === null || v === '' ? null : String(v);
    if (s !== null && !wellFormed(s)) problem ??= exprs[i].name;
    fields.set(exprs[i].name, s);
  }
  const row = Number(r[0]) + 1;
  // A value below the microsecond is shown with its 9 digits, which the timestamp rule rejects.
  for (const [name, values] of subMicro) {
    const nanos = values.get(row);
    if (nanos !== undefined) fields.set(name, nanosText(nanos));
  }
  const raw = JSON.stringify(Object.fromEntries(fields)).slice(0, RAW_KEEP_CHARS);
  if (problem) return { type: 'record_error', row, line: row, raw, rule: 'invalid_utf8', message: `column ${problem} is not valid Unicode text`, column: problem };
  return { type: 'record', row, line: row, raw, fields };
}
