/**
 * Property tests for the import readers, in process (no CLI): exact amount conversion against a
 * string model, and BAI2 / MT940 files generated with control totals computed by an independent
 * model — every total ties, and a single altered amount shows up in exactly the totals it feeds.
 * A failing case prints its fast-check seed and path; rerun with `{ seed, path }` to replay.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { majorPointToMinor, swiftAmountToMinor } from '../pipeline/import/amounts.js';
import { parseBai2 } from '../pipeline/import/bai2.js';
import { parseMt940 } from '../pipeline/import/mt940.js';
import { joinPages } from '../pipeline/import/pages.js';
import type { ProviderFile } from '../pipeline/import/model.js';

const file = (text: string, name = 'gen.txt'): ProviderFile => {
  const bytes = Buffer.from(text);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { path: name, name, bytes, sha256, fileId: `sha256:${sha256}` };
};
const CURRENCIES: [string, number][] = [['EUR', 2], ['JPY', 0], ['BHD', 3], ['CLF', 4], ['USD', 2]];

describe('amount conversion', () => {
  it('major units → minor units equals the string model; non-zero digits past the exponent are refused', () => {
    fc.assert(fc.property(
      fc.constantFrom(...CURRENCIES), fc.stringMatching(/^[0-9]{1,20}$/), fc.stringMatching(/^[0-9]{0,7}$/), fc.boolean(),
      ([ccy, exp], int, frac, swift) => {
        const where = { file: 'p' };
        const run = () => (swift ? swiftAmountToMinor(`${int},${frac}`, ccy, where, 'a') : majorPointToMinor(frac ? `${int}.${frac}` : int, ccy, where, 'a'));
        const excess = frac.slice(exp);
        if (/[^0]/.test(excess)) {
          expect(run).toThrow(/refused, not rounded/);
        } else {
          expect(run()).toBe(BigInt(int + frac.slice(0, exp).padEnd(exp, '0')));
        }
      },
    ), { numRuns: 500 });
  });
});

interface GenAccount { number: string; opening: bigint; details: { code: string; amount: bigint }[] }

/** BAI2 Appendix A ranges, written out here independently of the reader: credits 100–399 and 920–959. */
const isCredit = (code: string) => { const n = Number(code); return (n >= 100 && n <= 399) || (n >= 920 && n <= 959); };

/** An independent BAI2 writer: totals, counts and balances computed here, not by the reader. */
function writeBai2(accounts: GenAccount[]): { text: string; groupTotal: bigint } {
  const lines = ['01,SENDER,RECV,261102,0900,42,,,2/', '02,RECV,ORIG,1,261101,,USD,2/'];
  let groupTotal = 0n;
  let groupRecords = 2; // 02 and 98
  for (const a of accounts) {
    const credits = a.details.filter((d) => isCredit(d.code));
    const debits = a.details.filter((d) => !isCredit(d.code));
    const sum = (xs: { amount: bigint }[]) => xs.reduce((s, d) => s + d.amount, 0n);
    const closing = a.opening + sum(credits) - sum(debits);
    lines.push(`03,${a.number},USD,010,${a.opening},,,015,${closing},,/`);
    lines.push(`88,100,${sum(credits)},${credits.length},,400,${sum(debits)},${debits.length},/`);
    for (const d of a.details) lines.push(`16,${d.code},${d.amount},,BR,CR-${d.amount},TEXT/`);
    const total = a.opening + closing + sum(credits) + sum(debits) + sum(a.details);
    const records = 2 + a.details.length + 1;
    lines.push(`49,${total},${records}/`);
    groupTotal += total;
    groupRecords += records;
  }
  lines.push(`98,${groupTotal},${accounts.length},${groupRecords}/`);
  lines.push(`99,${groupTotal},1,${groupRecords + 2}/`);
  return { text: `${lines.join('\n')}\n`, groupTotal };
}

const genAccounts = fc.array(fc.record({
  number: fc.stringMatching(/^[0-9]{6,12}$/),
  opening: fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
  details: fc.array(fc.record({ code: fc.constantFrom('108', '195', '409', '475', '699', '925', '980'), amount: fc.bigInt({ min: 0n, max: 10n ** 11n }) }), { maxLength: 8 }),
}), { minLength: 1, maxLength: 4 });

describe('BAI2 control totals', () => {
  it('every total of a consistent file ties; the written lines are signed by type code', () => {
    fc.assert(fc.property(genAccounts, (accounts) => {
      const { text } = writeBai2(accounts);
      const r = parseBai2(file(text), 0);
      expect(r.checks.filter((c) => c.status !== 'ok')).toEqual([]);
      expect(r.checks.length).toBe(accounts.length * 7 + 6);
      const signed = accounts.flatMap((a) => a.details.map((d) => (isCredit(d.code) ? d.amount : -d.amount)));
      expect(r.statements.flatMap((s) => s.lines.map((l) => l.amountMinor))).toEqual(signed);
    }), { numRuns: 100 });
  });

  it('one detail amount altered after the totals were written: the account, group and file totals disagree by exactly that much', () => {
    fc.assert(fc.property(genAccounts.filter((a) => a[0].details.length > 0), fc.bigInt({ min: 1n, max: 10n ** 6n }), (accounts, delta) => {
      const { text } = writeBai2(accounts);
      const d = accounts[0].details[0];
      const lines = text.split('\n');
      const i = lines.findIndex((l) => l.startsWith(`16,${d.code},${d.amount},`));
      lines[i] = lines[i].replace(`16,${d.code},${d.amount},`, `16,${d.code},${d.amount + delta},`);
      const r = parseBai2(file(lines.join('\n')), 0);
      const bad = r.checks.filter((c) => c.status === 'mismatch');
      const byName = Object.fromEntries(bad.map((c) => [`${c.check}|${c.scope.startsWith('account') ? 'a' : c.scope}`, BigInt(c.recomputed) - BigInt(c.declared)]));
      expect(byName['bai2.49.account_control_total|a']).toBe(delta);
      expect(byName['bai2.98.group_control_total|' + bad.find((c) => c.check === 'bai2.98.group_control_total')!.scope]).toBe(delta);
      expect(byName['bai2.99.file_control_total|file']).toBe(delta);
      const credit = isCredit(d.code);
      expect(byName[`bai2.03.${credit ? '100.total_credits' : '400.total_debits'}|a`]).toBe(delta);
      expect(byName['bai2.balance_rollforward|a']).toBe(credit ? delta : -delta);
      expect(bad.length).toBe(5);
    }), { numRuns: 100 });
  });
});

describe('MT940 pages', () => {
  it('a statement split into pages at random points joins back, ties and chains; marks C/D/RC/RD sign as the balances confirm', () => {
    const line = fc.record({ mark: fc.constantFrom('C', 'D', 'RC', 'RD'), amount: fc.bigInt({ min: 1n, max: 10n ** 9n }) });
    fc.assert(fc.property(fc.bigInt({ min: -(10n ** 10n), max: 10n ** 10n }), fc.array(line, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 4 }), (opening, ls, nPages) => {
      const sign = (m: string) => (m === 'C' || m === 'RD' ? 1n : -1n);
      const fmt = (v: bigint) => { const a = v < 0n ? -v : v; const s = a.toString().padStart(3, '0'); return `${s.slice(0, -2)},${s.slice(-2)}`; };
      const bal = (tag: string, v: bigint) => `:${tag}:${v < 0n ? 'D' : 'C'}261102EUR${fmt(v)}`;
      const per = Math.ceil(ls.length / nPages);
      const pages: string[] = [];
      let running = opening;
      const chunks = Array.from({ length: Math.ceil(ls.length / per) }, (_, k) => ls.slice(k * per, (k + 1) * per));
      chunks.forEach((chunk, k) => {
        const open = running;
        for (const l of chunk) running += sign(l.mark) * l.amount;
        const last = k === chunks.length - 1;
        pages.push([`:20:REF${k}`, ':25:ACC-9', `:28C:5/${k + 1}`, bal(k === 0 ? '60F' : '60M', open),
          ...chunk.map((l) => `:61:261102${l.mark}${fmt(l.amount)}NTRFNONREF`), bal(last ? '62F' : '62M', running), '-'].join('\n'));
      });
      const parsed = parseMt940(file(pages.join('\n')), 0);
      const joined = joinPages(parsed.statements);
      expect(joined.statements).toHaveLength(1);
      const [s] = joined.statements;
      expect(s.complete).toBe(true);
      expect(s.opening!.amountMinor).toBe(opening);
      expect(s.closing!.amountMinor).toBe(running);
      expect(s.lines.map((l) => l.amountMinor)).toEqual(ls.map((l) => sign(l.mark) * l.amount));
      const all = [...joined.checks.values()].flat();
      expect(all.filter((c) => c.status !== 'ok')).toEqual([]);
      expect(all.filter((c) => c.check === 'mt940.page_chain')).toHaveLength(chunks.length - 1);
    }), { numRuns: 200 });
  });
});
