/**
 * Readers that turn one data file into raw records: the header's column names and, per record,
 * the text of each field (or null for empty), its record number (1 = first data record), the
 * physical line where it starts and its raw text. They never interpret values; validation is the
 * loader's. Problems are events, not exceptions: a bad record is a `record_error`, a file that
 * cannot be read further is a `file_error` (records already read stay read).
 *
 * CSV: RFC 4180 via csv-parse (BOM, CRLF, quoted newlines), UTF-8 checked strictly.
 * JSON Lines: one object per line, numbers kept as their literal text (lossless-json).
 * Parquet: read through DuckDB from a staged link with a safe name (names are globs in DuckDB),
 * every value turned into the contract's text form; FLOAT/DOUBLE in an exact column is refused.
 */
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceFile } from './files.js';
import type { ColumnSpec } from '../datasets.js';

export type ReadEvent =
  | { readonly type: 'header'; readonly columns: readonly string[] }
  | { readonly type: 'record'; readonly row: number; readonly line: number; readonly raw: string; readonly fields: ReadonlyMap<string, string | null> }
  | { readonly type: 'record_error'; readonly row: number; readonly line: number; readonly raw: string; readonly rule: string; readonly message: string; readonly column?: string }
  | { readonly type: 'file_error'; readonly rule: string; readonly message: string; readonly row?: number; readonly line?: number };

/** Decodes UTF-8 strictly: an invalid byte sequence fails the stream with its byte offset. */
class StrictUtf8 extends Transform {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private offset = 0;
  constructor() { super({ readableObjectMode: false, decodeStrings: true }); this.setEncoding('utf8'); }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try { const s = this.decoder.decode(chunk, { stream: true }); this.offset += chunk.length; cb(null, s); }
    catch { cb(Object.assign(new Error(`invalid UTF-8 within bytes ${this.offset}–${this.offset + chunk.length}`), { rule: 'invalid_utf8' })); }
  }
  override _flush(cb: TransformCallback): void {
    try { cb(null, this.decoder.decode()); } catch { cb(Object.assign(new Error('invalid UTF-8 at the end of the file (truncated sequence)'), { rule: 'invalid_utf8' })); }
  }
}

function textStream(file: SourceFile): Readable {
  const raw = createReadStream(file.absPath);
  const src = file.gzip ? raw.pipe(createGunzip()) : raw;
  if (file.gzip) raw.on('error', (e: Error) => src.destroy(e));
  const out = src.pipe(new StrictUtf8());
  src.on('error', (e: Error) => out.destroy(Object.assign(e, { rule: (e as { rule?: string }).rule ?? (file.gzip ? 'gzip_unreadable' : 'file_unreadable') })));
  return out;
}

function ruleOf(e: unknown, fallback: string): string {
  return (e as { rule?: string }).rule ?? fallback;
}

/** Reads a CSV file (RFC 4180, header row). */
export async function* readCsv(file: SourceFile): AsyncGenerator<ReadEvent> {
  const skipped: ReadEvent[] = [];
  let row = 0;
  const parser = parseCsv({
    bom: true, relax_column_count: true, skip_records_with_error: true, info: true, raw: true, columns: false, skip_empty_lines: false,
    on_skip: (err, raw) => {
      const line = (err as { lines?: number } | undefined)?.lines ?? 0;
      row += 1;
      skipped.push({ type: 'record_error', row, line, raw: raw ?? '', rule: 'csv_syntax', message: err?.message ?? 'unreadable CSV record' });
      return undefined;
    },
  });
  const src = textStream(file);
  src.on('error', (e) => parser.destroy(e));
  src.pipe(parser);
  let header: string[] | undefined;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; raw: string; info: { lines: number } }>) {
      while (skipped.length) yield skipped.shift()!;
      const { record, raw, info } = item;
      const line = info.lines - (raw.match(/\n/g)?.length ?? 0) + (raw.endsWith('\n') ? 1 : 0);
      if (!header) {
        header = record;
        yield { type: 'header', columns: record };
        continue;
      }
      row += 1;
      if (record.length !== header.length) {
        yield { type: 'record_error', row, line, raw: stripEol(raw), rule: 'field_count', message: `record has ${record.length} fields; the header has ${header.length}` };
        continue;
      }
      const fields = new Map<string, string | null>();
      for (let i = 0; i < header.length; i++) fields.set(header[i], record[i] === '' ? null : record[i]);
      yield { type: 'record', row, line, raw: stripEol(raw), fields };
    }
    while (skipped.length) yield skipped.shift()!;
  } catch (e) {
    while (skipped.length) yield skipped.shift()!;
    yield { type: 'file_error', rule: ruleOf(e, 'csv_unreadable'), message: (e as Error).message, row: row + 1 };
    return;
  }
  if (!header) yield { type: 'file_error', rule: 'empty_file', message: 'the file is empty: no header row' };
}

function stripEol(raw: string): string {
  return raw.replace(/\r?\n$/, '');
}

/** Reads a JSON Lines file: one JSON object per line; numbers keep their literal text. */
export async function* readJsonl(file: SourceFile, columns: readonly ColumnSpec[]): AsyncGenerator<ReadEvent> {
  const kinds = new Map(columns.map((c) => [c.name, c.kind]));
  const rl = createInterface({ input: textStream(file), crlfDelay: Infinity });
  let line = 0;
  let row = 0;
  let pendingBlank: number | undefined;
  yield { type: 'header', columns: columns.map((c) => c.name) };
  try {
    for await (const text of rl) {
      line += 1;
      if (text === '' || text === '\r') { pendingBlank ??= line; continue; }
      if (pendingBlank !== undefined) {
        row += 1;
        yield { type: 'record_error', row, line: pendingBlank, raw: '', rule: 'jsonl_blank_line', message: 'blank line inside a JSON Lines file' };
        pendingBlank = undefined;
      }
      row += 1;
      let doc: unknown;
      try { doc = parseLossless(text); } catch (e) {
        yield { type: 'record_error', row, line, raw: text, rule: 'jsonl_not_json', message: `line is not JSON: ${(e as Error).message}` };
        continue;
      }
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
        yield { type: 'record_error', row, line, raw: text, rule: 'jsonl_not_object', message: 'line is not a JSON object' };
        continue;
      }
      const fields = new Map<string, string | null>();
      let problem: { column: string; message: string } | undefined;
      for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
        const kind = kinds.get(k);
        if (v === null || v === '') { fields.set(k, null); continue; }
        if (isLosslessNumber(v)) {
          if (kind === 'decimal' || kind === 'amount_minor' || kind === 'int' || kind === undefined) fields.set(k, v.value);
          else { problem ??= { column: k, message: `column ${k} must be a JSON string, not the number ${v.value}` }; }
        } else if (typeof v === 'string') fields.set(k, v);
        else if (typeof v === 'boolean') {
          if (kind === 'bool' || kind === undefined) fields.set(k, String(v));
          else problem ??= { column: k, message: `column ${k} must not be a JSON boolean` };
        } else if (kind !== undefined) problem ??= { column: k, message: `column ${k} holds a JSON ${Array.isArray(v) ? 'array' : 'object'}` };
      }
      if (problem) { yield { type: 'record_error', row, line, raw: text, rule: 'jsonl_type', message: problem.message, column: problem.column }; continue; }
      yield { type: 'record', row, line, raw: text, fields };
    }
  } catch (e) {
    yield { type: 'file_error', rule: ruleOf(e, 'jsonl_unreadable'), message: (e as Error).message, row: row + 1, line: line + 1 };
  }
}

const FLOAT_TYPES = /^(FLOAT|DOUBLE|REAL)$/;
const EXACT_KINDS = new Set(['decimal', 'amount_minor', 'int']);

/**
 * Reads a Parquet file through DuckDB. `stagedPath` is a link to the file under a name made only
 * of safe characters, so nothing from the source file name reaches SQL.
 */
export async function* readParquet(conn: DuckDBConnection, stagedPath: string, columns: readonly ColumnSpec[]): AsyncGenerator<ReadEvent> {
  if (!/^[A-Za-z0-9_\-/.]+$/.test(stagedPath)) throw new Error(`unsafe staged path ${stagedPath}`);
  let schema: { name: string; type: string }[];
  try {
    const r = await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${stagedPath}')`);
    schema = r.getRowObjectsJson().map((o) => ({ name: String(o.column_name), type: String(o.column_type) }));
  } catch (e) {
    yield { type: 'file_error', rule: 'parquet_unreadable', message: (e as Error).message.split('\n')[0] };
    return;
  }
  yield { type: 'header', columns: schema.map((c) => c.name) };
  const specOf = new Map(columns.map((c) => [c.name, c]));
  for (const c of schema) {
    const spec = specOf.get(c.name);
    if (spec && EXACT_KINDS.has(spec.kind) && FLOAT_TYPES.test(c.type)) {
      yield { type: 'file_error', rule: 'parquet_float_column', message: `column ${c.name} is ${c.type}; a binary float is never accepted for a decimal, money or int column` };
      return;
    }
  }
  const q = (n: string) => `"${n.replace(/"/g, '""')}"`;
  const exprs = schema.filter((c) => specOf.has(c.name)).map((c) => {
    const col = q(c.name);
    let e: string;
    if (/^TIMESTAMP WITH TIME ZONE$/.test(c.type)) e = `strftime(timezone('UTC', ${col}), '%Y-%m-%dT%H:%M:%S.%fZ')`;
    else if (/^TIMESTAMP/.test(c.type)) e = `strftime(${col}::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%fZ')`;
    else if (c.type === 'BOOLEAN') e = `CASE WHEN ${col} THEN 'true' ELSE 'false' END`;
    else e = `${col}::VARCHAR`;
    return { name: c.name, expr: `${e} AS ${col}` };
  });
  const sql = `SELECT file_row_number${exprs.map((x) => `, ${x.expr}`).join('')} FROM read_parquet('${stagedPath}', file_row_number = true) ORDER BY file_row_number`;
  try {
    const result = await conn.stream(sql);
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      for (const r of chunk.getRows()) {
        const fields = new Map<string, string | null>();
        for (let i = 0; i < exprs.length; i++) {
          const v = r[i + 1];
          fields.set(exprs[i].name, v === null || v === '' ? null : String(v));
        }
        const row = Number(r[0]) + 1;
        yield { type: 'record', row, line: row, raw: JSON.stringify(Object.fromEntries(fields)), fields };
      }
    }
  } catch (e) {
    yield { type: 'file_error', rule: 'parquet_unreadable', message: (e as Error).message.split('\n')[0] };
  }
}
