/**
 * The ISO 4217 currency table of CONTRACT §1 (code → minor-unit exponent), read from the copy of
 * `shared/spec/iso4217.csv` kept in `pipeline/reference/`. Its SHA-256 is the table version that
 * every manifest records. Intl's currency digits are not ISO 4217 and are never used.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { repoPath } from '../core/paths.js';

/** Currency code → exponent (number of minor-unit digits), plus the table's SHA-256. */
export interface CurrencyTable {
  readonly exponents: ReadonlyMap<string, number>;
  readonly sha256: string;
}

let cached: CurrencyTable | undefined;

/** Loads the bundled table once. Throws InternalError-worthy Error if the file is malformed. */
export function currencyTable(): CurrencyTable {
  if (cached) return cached;
  const bytes = readFileSync(repoPath('pipeline/reference/iso4217.csv'));
  const exponents = new Map<string, number>();
  const lines = bytes.toString('utf8').split(/\r?\n/).filter((l) => l.length > 0);
  for (const line of lines.slice(1)) {
    const [code, minor] = line.split(',');
    if (!/^[A-Z]{3}$/.test(code) || !/^[0-9]$/.test(minor ?? '')) throw new Error(`iso4217.csv: bad line ${line}`);
    exponents.set(code, Number(minor));
  }
  cached = { exponents, sha256: createHash('sha256').update(bytes).digest('hex') };
  return cached;
}
