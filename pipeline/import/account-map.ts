/**
 * The account map of `reckon import --account-map FILE`: how a provider's account and venue
 * names become ours, and each account's statement calendar (IANA timezone and cutoff, CONTRACT
 * §2 `bank_statements`). A JSON document, validated once and frozen; every problem is reported
 * with its path before anything is imported (ConfigError, exit 2).
 *
 * ```json
 * { "accounts": [ { "provider_account": "NL26VAYB8060476890", "currency": "EUR",
 *                   "account_id": "BANK-EUR-1", "bank_id": "VAYBNL2A",
 *                   "timezone": "Europe/Amsterdam", "cutoff": "18:00" } ],
 *   "venues":   [ { "sender_comp_id": "XLON", "venue_id": "XLON" } ] }
 * ```
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from '../core/zod.js';
import { ConfigError } from '../core/errors.js';
import { ianaZone } from '../contract/local-time.js';
import { parseCutoff, parseId } from '../contract/values.js';

const idText = z.string().refine((s) => s.length > 0 && parseId(s).ok, { message: 'not an id (non-empty, no |, no control characters, no leading or trailing white space)' });

const AccountEntry = z.object({
  provider_account: z.string().min(1),
  currency: z.string().regex(/^[A-Z]{3}$/).optional(),
  account_id: idText.optional(),
  bank_id: idText.optional(),
  timezone: z.string().refine((s) => ianaZone(s) !== null, { message: 'not an IANA time zone' }).optional(),
  cutoff: z.string().refine((s) => parseCutoff(s).ok, { message: 'not a cutoff HH:MM or HH:MM:SS' }).optional(),
}).strict();

const VenueEntry = z.object({ sender_comp_id: z.string().min(1), venue_id: idText }).strict();

const AccountMapSchema = z.object({
  accounts: z.array(AccountEntry).default([]),
  venues: z.array(VenueEntry).default([]),
}).strict();

/** One account's mapping: our account id, the bank's id and the statement calendar, each optional. */
export type AccountMapEntry = z.infer<typeof AccountEntry>;

/** The validated account map plus the SHA-256 of the file it came from. */
export interface AccountMap {
  readonly accounts: readonly AccountMapEntry[];
  readonly venues: readonly z.infer<typeof VenueEntry>[];
  readonly path: string | null;
  readonly sha256: string | null;
}

/** The empty map (no file given). */
export const EMPTY_ACCOUNT_MAP: AccountMap = Object.freeze({ accounts: [], venues: [], path: null, sha256: null });

/** Reads and validates an account map; throws ConfigError listing every problem with its path. */
export async function loadAccountMap(path: string): Promise<AccountMap> {
  let bytes: Buffer;
  try { bytes = await readFile(path); } catch (e) { throw new ConfigError(`account map cannot be read: ${(e as Error).message}`, path); }
  let doc: unknown;
  try { doc = JSON.parse(bytes.toString('utf8')); } catch (e) { throw new ConfigError(`account map is not JSON: ${(e as Error).message}`, path); }
  const parsed = AccountMapSchema.safeParse(doc);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`account map is not valid:\n  ${problems.join('\n  ')}`, path);
  }
  const seen = new Set<string>();
  for (const a of parsed.data.accounts) {
    const k = `${a.provider_account}|${a.currency ?? ''}`;
    if (seen.has(k)) throw new ConfigError(`account map lists provider_account ${a.provider_account}${a.currency ? ` ${a.currency}` : ''} twice`, path);
    seen.add(k);
  }
  return Object.freeze({ ...parsed.data, path, sha256: createHash('sha256').update(bytes).digest('hex') });
}

/** The entry for a provider account: an exact currency match first, then one without currency. */
export function lookupAccount(map: AccountMap, providerAccount: string | null, currency: string | null): AccountMapEntry | undefined {
  if (providerAccount === null) return undefined;
  return map.accounts.find((a) => a.provider_account === providerAccount && a.currency !== undefined && a.currency === currency)
    ?? map.accounts.find((a) => a.provider_account === providerAccount && a.currency === undefined);
}

/** Our venue id for a FIX SenderCompID: the map's, else the SenderCompID itself. */
export function venueIdFor(map: AccountMap, senderCompId: string): string {
  return map.venues.find((v) => v.sender_comp_id === senderCompId)?.venue_id ?? senderCompId;
}
