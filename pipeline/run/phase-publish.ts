/**
 * Phase 6, publish (CONTRACT §6): the commit point. Gathers the code parts (SQL and definition
 * hashes, version, commit, fingerprints), then under the store's publish lock checks the leases'
 * fencing tokens and writes the manifest once (publish/manifest-document.ts builds it), first
 * completing a publication an earlier run left half-written, and listing the run's staged break
 * plan and heads checkpoint. Fault points `manifest_written` (manifest without its `.sha256`) and
 * `published` (manifest written, outputs and break objects still staged).
 */
import { readFile } from 'node:fs/promises';
import { repoPath } from '../core/paths.js';
import { wideSql } from '../controls/wide.js';
import { currencyTable } from '../contract/currency.js';
import type { OutputObject } from '../outputs/outputs.js';
import { codeFingerprint, inputsFingerprint } from '../publish/fingerprint.js';
import { checkFencing } from '../publish/lease.js';
import { publishManifest } from '../publish/manifest-chain.js';
import { manifestDocument, type CodeParts, type ManifestParts } from '../publish/manifest-document.js';
import { planKey } from '../breaks/break-plan.js';
import { archiveRegistry, BREAK_NAMESPACE } from '../signing/registry.js';
import { manifestSigning } from '../signing/pipeline-signer.js';
import type { BreakLogRecord, ManifestV1 } from '../../manifests/v1/schema.js';
import { timed, type EvaluatedControls, type LoadedInputs, type RunContext, type SettledResults } from './context.js';

/** A published manifest: its store key, SHA-256 and document. */
export interface Published { readonly key: string; readonly sha256: string; readonly manifest: ManifestV1 }

/** Publishes the run's manifest. Throws ConcurrencyError (exit 5) when a lease was taken over. */
export async function publishRun(ctx: RunContext, inputs: LoadedInputs, evaluated: EvaluatedControls, settled: SettledResults, outputs: readonly OutputObject[]): Promise<Published> {
  const { code, fingerprints } = await timed(ctx.timings, 'code_ms', async () => {
    const inputObjects = [...inputs.loaded.datasets.flatMap((d) => d.files.map((f) => ({ path: f.path, sha256: f.sha256 }))), ...Object.values(inputs.controlFiles).flat()];
    return {
      code: await codeParts(ctx, evaluated),
      fingerprints: { inputs_sha256: inputsFingerprint(inputObjects), code_sha256: await codeFingerprint(), config_sha256: ctx.req.config.sha256 },
    };
  });
  const publishStart = performance.now();
  // The registry that verifies the manifest's signature is kept before the manifest is written.
  if (ctx.req.signers) await archiveRegistry(ctx.store, ctx.req.signers);
  const signer = ctx.req.pipeline?.signer ?? null;
  const published = await publishManifest(ctx.store, ctx.runId, async (chain) => {
    await checkFencing(ctx.store, ctx.leases);
    // The manifest's own write and what follows it (promotion, break writes, verification, release) cannot be in it.
    ctx.timings.publish_ms = Math.round(performance.now() - publishStart);
    ctx.timings.wall_ms = Math.round(performance.now() - ctx.originMs);
    return manifestDocument(manifestParts(ctx, inputs, settled, outputs, { code, fingerprints, chain, notes: [...inputs.notes, ...evaluated.notes], evaluation: evaluated.evaluation }));
  }, { signer, onRepair: (r) => ctx.logger.warn(r.message), fault: ctx.fault });
  await ctx.fault('published');
  return published;
}

/** The manifest's break log record: signing mode and registry, the staged plan, the heads checkpoint, automatic verifications. */
function breakLog(ctx: RunContext, settled: SettledResults): BreakLogRecord {
  const { plan, heads } = settled;
  return {
    signing: { mode: ctx.req.config.config.signing.unsigned ? 'unsigned' : 'signed', namespace: BREAK_NAMESPACE, registry_sha256: ctx.req.signers?.sha256 ?? null },
    plan: { key: planKey(ctx.runId), sha256: plan.sha256, events: plan.events, observations: plan.observations },
    heads: { ...heads },
    verified: plan.verified.map((v) => ({ break_id: v.break_id, control_id: v.control_id, kind: v.kind, key: v.key, head: v.head, event: v.event })),
  };
}

/** The SQL and control definitions (every control's, not only the selected ones), version and commit the run used. */
async function codeParts(ctx: RunContext, evaluated: EvaluatedControls): Promise<CodeParts> {
  const { req } = ctx;
  const wide = wideSql();
  const sql = [...evaluated.commonSql.map((c) => ({ path: c.path, sha256: c.sha256 })), { path: wide.path, sha256: wide.sha256 }, ...req.controls.all.flatMap((c) => c.sqlFiles)];
  // Each definition by its own path (a test-only control lives outside controls/).
  const control_definitions = req.controls.all.map((c) => ({ ...c.definitionFile }));
  const pkg = JSON.parse(await readFile(repoPath('package.json'), 'utf8')) as { version: string };
  return {
    version: pkg.version, commit: await codeCommit(), sql, control_definitions,
    config: { path: req.config.path ?? null, sha256: req.config.sha256 },
    currency_table: { path: 'pipeline/reference/iso4217.csv', sha256: currencyTable().sha256 },
    rounding_mode: req.config.config.rounding_mode,
  };
}

/** The git commit of the code, read from `.git` (null outside a checkout). */
async function codeCommit(): Promise<string | null> {
  try {
    const head = (await readFile(repoPath('.git/HEAD'), 'utf8')).trim();
    if (!head.startsWith('ref: ')) return head;
    return (await readFile(repoPath(`.git/${head.slice(5)}`), 'utf8')).trim();
  } catch { return null; }
}

function manifestParts(
  ctx: RunContext, inputs: LoadedInputs, settled: SettledResults, outputs: readonly OutputObject[],
  more: Pick<ManifestParts, 'code' | 'fingerprints' | 'chain' | 'notes' | 'evaluation'>,
): ManifestParts {
  const { req, runId } = ctx;
  return {
    ...more,
    identity: {
      run_id: runId, trigger: req.trigger, reason: req.reason, parent_run_id: req.rerunOf, window: { start: req.window.start, end: req.window.end },
      controls: req.controls.selected.map((c) => c.control_id), started_at: ctx.startedAt.toISOString(), finished_at: new Date().toISOString(),
    },
    sources: {
      location: req.sources, datasets: inputs.loaded.datasets, remote: inputs.located.remote, controlFiles: inputs.controlFiles,
      cutoffMappings: inputs.loaded.cutoffMappings, quarantine: inputs.loaded.quarantine, plan: inputs.located.plan,
    },
    results: settled.results, results_digest: settled.resultsDigest, breaks: settled.breaks, outputs, leases: ctx.leases, breakLog: breakLog(ctx, settled),
    signing: req.pipeline?.record ?? manifestSigning(null, 'no-registry'),
    runtime: {
      node: process.version, timings_ms: ctx.timings, outcome: settled.outcome,
      duckdb: { threads: inputs.engine.threads, memory_limit: inputs.engine.memory_limit, storage: inputs.engine.storage, estimated_bytes: inputs.engine.estimated_bytes },
    },
  };
}
