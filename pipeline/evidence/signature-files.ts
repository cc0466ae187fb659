/**
 * What an auditor needs to check break signatures with `ssh-keygen -Y verify` alone (issue 17):
 * for every signed break object in a bag (an event, a proposal, a withdrawal), its payload — the
 * exact signed bytes — and each SSH signature as files of their own under `data/signatures/`, the
 * registry versions that verified them under `data/signers/`, and `data/VERIFYING.txt` with one
 * exact command per signature. Everything is derived from the bag's own objects, so `evidence
 * verify` rebuilds it and compares (nothing here can be edited unnoticed).
 */
import { keyKind, type DecodedObject } from '../breaks/break-objects.js';
import { BREAK_NAMESPACE, registryKey } from '../signing/registry.js';
import { sshKeygenVerifyCommand } from '../signing/signatures.js';

/** A derived file of the bag: payload-relative path and bytes. */
export interface DerivedFile {
  readonly path: string;
  readonly bytes: Buffer;
}

/** `breaks/<id>/events/000003.json` → `signatures/<id>/events-000003` (the stem of its derived files). */
function stem(key: string): string {
  const [, id, ...rest] = key.split('/');
  return `signatures/${id}/${rest.join('-').replace(/\.json$/, '')}`;
}

const sigName = (i: number, role: string, signer: string) => `${i + 1}-${role}-${signer.replace(/[^A-Za-z0-9._@+-]/g, '_')}.sig`;

/** The payload and signature files of the signed objects among `objects` (sorted by key). */
export function signatureFiles(objects: readonly DecodedObject[]): DerivedFile[] {
  const out: DerivedFile[] = [];
  for (const o of [...objects].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    if (o.format !== 'v2' || o.signatures.length === 0 || keyKind(o.key) === 'observation') continue;
    const s = stem(o.key);
    out.push({ path: `${s}.payload`, bytes: Buffer.from(o.payload, 'utf8') });
    o.signatures.forEach((sig, i) => out.push({ path: `${s}.${sigName(i, sig.role, sig.signer)}`, bytes: Buffer.from(sig.sshsig, 'utf8') }));
  }
  return out;
}

/** Counts a bag's VERIFYING text states. */
export interface VerifyingCounts {
  readonly unsigned: number;
  readonly legacy: number;
  readonly byRun: number;
}

/** The text of `data/VERIFYING.txt` for the signed objects among `objects`. */
export function verifyingText(objects: readonly DecodedObject[], counts: VerifyingCounts): string {
  const commands: string[] = [];
  for (const o of [...objects].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    if (o.format !== 'v2' || o.signatures.length === 0 || keyKind(o.key) === 'observation') continue;
    const s = stem(o.key);
    commands.push(`# data/${o.key}`);
    o.signatures.forEach((sig, i) => commands.push(sshKeygenVerifyCommand({
      registryPath: `data/${registryKey(sig.registry_sha256)}`, signer: sig.signer, namespace: sig.namespace,
      signaturePath: `data/${s}.${sigName(i, sig.role, sig.signer)}`, payloadPath: `data/${s}.payload`,
    })));
  }
  const first = objects.find((o) => o.format === 'v2' && o.signatures.length > 0 && keyKind(o.key) !== 'observation');
  const example = first ? { key: `data/${first.key}`, stem: `data/${stem(first.key)}`, sig: sigName(0, first.signatures[0].role, first.signatures[0].signer) } : null;
  return `How to check the break signatures of this evidence package without reckon

Run every command from the bag's top folder (the one holding bagit.txt). You need OpenSSH's
ssh-keygen (8.2 or later) and coreutils; jq only for the optional checks of step 3.

1. Every file is the one packed:
     sha256sum -c manifest-sha256.txt

2. Who made each step. A person's break object (an event, a proposal, a withdrawal) is canonical
   JSON whose "payload" is the exact text that was signed. data/signatures/ holds each payload and
   each of its SSH signatures (namespace ${BREAK_NAMESPACE}) as files of their own; data/signers/
   holds the signer registry in force when each signature was made, named by its SHA-256. Every
   line below must print 'Good "${BREAK_NAMESPACE}" signature for <signer>'. A CONTAINED or CORRECTED
   step (and CLOSED where the configuration asks) carries two: the owner's (actor) and the
   approver's (approver), by two different signers with two different keys.
${commands.length ? commands.map((c) => `     ${c}`).join('\n') : '     (no signed break object in this package)'}

   Then check that each registry is one your organisation issued: sha256sum data/signers/*

3. Optional: the files of step 2 are the objects' own bytes (jq):${example ? `
     jq -j .payload ${example.key} | cmp - ${example.stem}.payload
     jq -j '.signatures[0].sshsig' ${example.key} | cmp - ${example.stem}.${example.sig}` : ' (nothing to compare)'}

4. Nothing was changed or removed afterwards. Each event's payload names "previous_event_sha256",
   the SHA-256 of the payload of the event before it (jq -j .payload FILE | sha256sum), so the log
   of a break is a hash chain. Events made by a run (actor reconciler: OPEN, reopened, automatic
   VERIFIED; ${counts.byRun} here) are not signed by a person: each carries a "binding" naming the
   manifest that lists its digest, and the manifests chain by previous_manifest_sha256. Every
   manifest lists the head digest of each break its run touched, and heads/<run_id>.json (its
   SHA-256 in the manifest) the head of every break of the store when the run published.

Not proven by a signature: ${counts.unsigned} unsigned step(s) (the configuration said signing.unsigned: true)
and ${counts.legacy} legacy object(s) written before break objects were signed.

'reckon evidence verify <this bag>' checks all of this, and the rest of the package.
`;
}
