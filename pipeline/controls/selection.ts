/**
 * Which controls a run evaluates: every loaded definition, or those `--control` names, and the
 * datasets they read (CONTRACT §3), the only ones the run loads.
 */
import { ConfigError } from '../core/errors.js';
import { DATASETS } from '../contract/datasets.js';
import type { ControlDefinition } from './definitions.js';

/** The controls a run knows (every definition) and the ones it evaluates (its selection, in id order). */
export interface ControlSet {
  readonly all: readonly ControlDefinition[];
  readonly selected: readonly ControlDefinition[];
}

/**
 * Selects the controls `ids` names from `all` (every one when `ids` is empty), in the order of
 * `all`. Throws ConfigError (exit 2) naming an unknown id and the known ones.
 */
export function selectControls(all: readonly ControlDefinition[], ids: readonly string[]): ControlSet {
  if (ids.length === 0) return { all, selected: [...all] };
  const unknown = ids.filter((id) => !all.some((c) => c.control_id === id));
  if (unknown.length) throw new ConfigError(`unknown control(s) ${unknown.join(', ')}; known: ${all.map((c) => c.control_id).join(', ')}`);
  return { all, selected: all.filter((c) => ids.includes(c.control_id)) };
}

/** The datasets the controls read (CONTRACT §3), in the order of CONTRACT §2: the only ones a run loads. */
export function datasetsRead(controls: readonly ControlDefinition[]): string[] {
  const read = new Set(controls.flatMap((c) => c.reads));
  return DATASETS.map((d) => d.name).filter((n) => read.has(n));
}
