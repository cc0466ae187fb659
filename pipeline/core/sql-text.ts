/**
 * Quoting for the SQL text reckon composes at run time (the rest of its SQL lives in `sql/`):
 * identifiers and string literals, each quoted the one way DuckDB reads back exactly.
 */

/** A quoted SQL identifier: `"name"`, inner double quotes doubled. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A SQL string literal: `'text'`, inner single quotes doubled. */
export const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;
