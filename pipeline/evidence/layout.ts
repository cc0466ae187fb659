/**
 * Where things sit inside an evidence bag's payload (`data/`), shared by packing and verifying.
 *
 *   report.html                                   the run report of every run in scope
 *   README.txt                                    this layout, for a person opening the bag
 *   chain.json                                    the store's manifest chain links at packing time
 *   manifests/<seq>-<run_id>.json, .sha256        the manifests in scope, bytes as published
 *   outputs/<table>/window_date=…/run=…/…parquet  each in-scope run's output objects (store keys)
 *   breaks/<break_id>/events/NNNNNN.json          each break's full event log, bytes as stored
 *   breaks/<break_id>/observations/<run_id>.json  each observation of it
 *   breaks/<break_id>/proposals/NNNNNN-<sha>.json each proposal (and `.withdrawal.json`)
 *   breaks/<break_id>/break.json                  the state and version the log replays to, as recorded
 *   heads/<run_id>.json                           each run's checkpoint of every break's head
 *   signers/<sha256>.allowed_signers              each signer registry version a signature names
 *   signatures/<break_id>/<object>.payload, .sig  each signed object's payload and signatures, apart
 *   VERIFYING.txt                                 how to check the signatures with ssh-keygen alone
 *   inputs/<run_id>/objects.json                  the input checksum list (from the manifest)
 *   inputs/<run_id>/checksums.sha256              the same as `sha256sum -c` input
 *   inputs/<run_id>/files/<dataset>/<file>        the inputs themselves (with --include-inputs)
 *   lineage/<run_id>.openlineage.json             one OpenLineage run event per run
 */

/** Payload-relative paths (without the `data/` prefix). */
export const LAYOUT = {
  report: 'report.html',
  readme: 'README.txt',
  chain: 'chain.json',
  manifest: (storeKey: string) => storeKey,
  breakEvent: (breakId: string, version: number) => `breaks/${breakId}/events/${String(version).padStart(6, '0')}.json`,
  breakObservation: (breakId: string, runId: string) => `breaks/${breakId}/observations/${runId}.json`,
  breakSummary: (breakId: string) => `breaks/${breakId}/break.json`,
  verifying: 'VERIFYING.txt',
  inputObjects: (runId: string) => `inputs/${runId}/objects.json`,
  inputChecksums: (runId: string) => `inputs/${runId}/checksums.sha256`,
  inputFile: (runId: string, safePath: string) => `inputs/${runId}/files/${safePath}`,
  lineage: (runId: string) => `lineage/${runId}.openlineage.json`,
} as const;

/**
 * A file path from a source location made safe for every file system and ZIP reader: each
 * `/`-separated segment keeps `[A-Za-z0-9._-]` and percent-encodes every other UTF-8 byte (and
 * `%` itself), and the segments `.` and `..` are encoded whole. Input file names are hostile; the
 * original path is kept beside the safe one in `objects.json`.
 */
export function safeBagPath(path: string): string {
  return path.split('/').map((seg) => {
    if (seg === '.' || seg === '..' || seg === '') return [...Buffer.from(seg || '%', 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
    return [...Buffer.from(seg, 'utf8')].map((b) => (/[A-Za-z0-9._-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
  }).join('/');
}

/** One line of a `sha256sum` file, escaping a name that holds `\` or a newline the way GNU coreutils does. */
export function sha256sumLine(sha256: string, path: string): string {
  if (!/[\\\n\r]/.test(path)) return `${sha256}  ${path}\n`;
  return `\\${sha256}  ${path.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}\n`;
}

/** The README placed in every bag's payload. */
export const README = `reckon evidence package (BagIt 1.0, RFC 8493)

Verify it with:  reckon evidence verify <this bag or .zip>
or with any BagIt tool; manifest-sha256.txt also reads with 'sha256sum -c' from the bag folder.

data/report.html                      the run report: open in any browser; no script, no network
data/chain.json                       links of the store's manifest chain when this bag was packed
data/manifests/                       run manifests as published (canonical JSON) and their .sha256
data/outputs/                         the runs' output tables (Parquet), as published
data/breaks/<id>/events/              each break's full, append-only event log (signed, hash-chained)
data/breaks/<id>/observations/        each run's observation of the break
data/breaks/<id>/proposals/           proposals waiting for (or given) a countersignature, withdrawals
data/breaks/<id>/break.json           state and version the log replays to
data/heads/<run_id>.json              each run's checkpoint of every break's head
data/signers/                         the signer registries (allowed_signers) the signatures name
data/signatures/                      each signed object's payload and signatures as separate files
data/VERIFYING.txt                    how to check the signatures with ssh-keygen -Y verify alone
data/inputs/<run_id>/objects.json     every input object the run read: size, SHA-256, rows
data/inputs/<run_id>/checksums.sha256 the same list for 'sha256sum -c'
data/inputs/<run_id>/files/           the inputs themselves, when packed with --include-inputs
                                      (names percent-encoded; objects.json maps them back)
data/lineage/<run_id>.openlineage.json  OpenLineage run event: window as nominalTime, parent run for reruns
`;
