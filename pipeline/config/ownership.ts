/**
 * Who acts on a difference and how (issue 19): the owning team, how to reach it, the paging route
 * its alerts go to, and the runbook with its first step. Defaults come from the control
 * definitions (`controls/rcNN/control.json`, per control and per difference kind); the
 * configuration overrides them. Pure: the configuration and the definition are passed in.
 */
import type { ControlDefinition, Runbook } from '../controls/definitions.js';
import type { Config } from './config.js';

/** The resolved owner of one (control, kind). */
export interface Ownership {
  /** Team id: what triage's --owner and `breaks list --owner` name. */
  readonly owner: string;
  readonly owner_name: string;
  readonly contact: string;
  /** The route name alerts go to (the configuration's `alerts.routes`, else `alerts.default_route`). */
  readonly route: string;
  readonly runbook: Runbook;
}

type Level = Partial<Ownership>;

/**
 * The owner of `kind` of the control `def` under `config`. Levels, most specific first: the
 * configuration's `by_kind[kind]`, the definition's `by_kind[kind]`, the configuration's control
 * entry, the definition (the order of SLAs, config.ts slaSeconds). The team — owner, its name,
 * contact and route — comes from the most specific level that names an owner, and from levels
 * more specific than it: a team set in the configuration never inherits another team's contact
 * or route (without its own, the name and route are the team id and the contact says none is
 * configured). The runbook is the most specific one, with the configuration's `runbooks[id]`
 * changes applied.
 */
export function ownershipOf(config: Config, def: ControlDefinition, kind?: string): Ownership {
  const cfg = config.controls[def.control_id];
  const levels: Level[] = [kind ? cfg?.by_kind?.[kind] : undefined, kind ? def.by_kind[kind] : undefined, cfg, def]
    .map((l) => (l ?? {}) as Level);
  const teamLevel = levels.findIndex((l) => l.owner !== undefined);
  const team = levels.slice(0, teamLevel + 1);
  const owner = levels[teamLevel].owner!;
  const runbook = levels.find((l) => l.runbook !== undefined)!.runbook!;
  return {
    owner,
    owner_name: team.find((l) => l.owner_name !== undefined)?.owner_name ?? owner,
    contact: team.find((l) => l.contact !== undefined)?.contact ?? `${owner} (no contact configured)`,
    route: team.find((l) => l.route !== undefined)?.route ?? owner,
    runbook: { ...runbook, ...(config.runbooks[runbook.id] ?? {}) },
  };
}

/** A short line for people: `Order operations (order-operations), Order operations on-call, route order-operations`. */
export function ownerLine(o: Pick<Ownership, 'owner' | 'owner_name' | 'contact' | 'route'>): string {
  const name = o.owner_name === o.owner ? o.owner : `${o.owner_name} (${o.owner})`;
  return `${name}; contact ${o.contact}; route ${o.route}`;
}
