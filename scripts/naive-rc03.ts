/**
 * The naive baseline of issue 5: RC03's posting-set balance, execution-to-posting and amount checks
 * and per-currency totals in plain Node streams (csv-parse) with decimal.js, everything in JS
 * maps — what a first attempt without a query engine looks like. It reads CSV only.
 * Usage: node dist/scripts/naive-rc03.js DIR START END
 */
import { createReadStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { Decimal } from 'decimal.js';
import { currencyTable } from '../pipeline/contract/currency.js';

Decimal.set({ precision: 80, rounding: Decimal.ROUND_HALF_EVEN });
const [dir, start, end] = process.argv.slice(2);
const inWindow = (t: string) => new Date(t).getTime() >= Date.parse(start) && new Date(t).getTime() < Date.parse(end);

async function* rows(dataset: string): AsyncGenerator<Record<string, string>> {
  for (const f of readdirSync(join(dir, dataset)).filter((x) => x.endsWith('.csv') && !x.startsWith('_')).sort()) {
    yield* createReadStream(join(dir, dataset, f)).pipe(parse({ columns: true, bom: true })) as AsyncIterable<Record<string, string>>;
  }
}

const sets = new Map<string, { inWindow: boolean; kinds: Set<string>; byCcy: Map<string, Decimal>; debitsByCcy: Map<string, Decimal>; executions: Set<string>; reverses: Set<string> }>();
const totals = new Map<string, { debit: Decimal; credit: Decimal; legs: number }>();
for await (const r of rows('ledger_postings')) {
  const s = sets.get(r.posting_set_id) ?? { inWindow: false, kinds: new Set(), byCcy: new Map(), debitsByCcy: new Map(), executions: new Set(), reverses: new Set() };
  sets.set(r.posting_set_id, s);
  const amt = new Decimal(r.amount_minor);
  if (inWindow(r.effective_at)) s.inWindow = true;
  s.kinds.add(r.kind);
  s.byCcy.set(r.currency, (s.byCcy.get(r.currency) ?? new Decimal(0)).plus(r.direction === 'DEBIT' ? amt : amt.neg()));
  if (r.direction === 'DEBIT') s.debitsByCcy.set(r.currency, (s.debitsByCcy.get(r.currency) ?? new Decimal(0)).plus(amt));
  if (r.execution_id) s.executions.add(r.execution_id);
  if (r.reverses_posting_set_id) s.reverses.add(r.reverses_posting_set_id);
}
const reversed = new Set<string>();
for (const s of sets.values()) if (s.kinds.has('REVERSAL')) for (const x of s.reverses) reversed.add(x);
const tradeSetsByExecution = new Map<string, string[]>();
let unbalanced = 0;
for (const [id, s] of sets) {
  if (s.inWindow) {
    for (const [ccy, net] of s.byCcy) { if (!net.isZero()) unbalanced++; const t = totals.get(ccy) ?? { debit: new Decimal(0), credit: new Decimal(0), legs: 0 }; totals.set(ccy, t); }
  }
  if (s.kinds.has('TRADE') && !reversed.has(id)) for (const e of s.executions) tradeSetsByExecution.set(e, [...(tradeSetsByExecution.get(e) ?? []), id]);
}
let withoutPosting = 0, multiple = 0, amountMismatch = 0;
const exps = currencyTable().exponents;
for await (const e of rows('executions')) {
  if (!inWindow(e.executed_at)) continue;
  const setsFor = tradeSetsByExecution.get(e.execution_id) ?? [];
  if (setsFor.length === 0) withoutPosting++;
  if (setsFor.length > 1) multiple++;
  const notional = new Decimal(e.fill_qty).times(e.price).toDecimalPlaces(exps.get(e.price_currency)!, Decimal.ROUND_HALF_EVEN).times(new Decimal(10).pow(exps.get(e.price_currency)!));
  for (const id of setsFor) if (!(sets.get(id)!.debitsByCcy.get(e.price_currency) ?? new Decimal(0)).equals(notional)) amountMismatch++;
}
process.stdout.write(`${JSON.stringify({ posting_sets: sets.size, unbalanced, withoutPosting, multiple, amountMismatch })}\n`);
