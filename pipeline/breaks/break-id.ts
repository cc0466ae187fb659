/** Break identity (CONTRACT §5): `(control_id, kind, key)` → a stable id, equal in every store and run. */
import { sha256Hex } from '../core/digest.js';

/** `brk-` and the first 24 hex digits of SHA-256 over `control_id|kind|key`. */
export function breakId(controlId: string, kind: string, key: string): string {
  return `brk-${sha256Hex(`${controlId}\u0000${kind}\u0000${key}`).slice(0, 24)}`;
}
