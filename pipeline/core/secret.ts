/**
 * A secret value (a private key's text, a passphrase) that never prints: `String(secret)`,
 * `JSON.stringify`, template literals and `util.inspect` (console.log, pino, vitest snapshots) all
 * give `[redacted]`. Only `reveal()` gives the value, and only the code that uses it calls that.
 */
import { inspect } from 'node:util';

/** Text shown wherever a Secret is printed. */
export const REDACTED = '[redacted]';

/** Holds one secret string; see the module comment. */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret itself: pass it straight to the code that needs it, never to a message. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${REDACTED})`;
  }
}
