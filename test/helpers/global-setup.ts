/** Vitest global set-up: removes the test run's delivery cache (vitest.config.ts) when the run ends. */
import { rmSync } from 'node:fs';

export default function setup(): () => void {
  return () => {
    const dir = process.env.RECKON_CACHE_DIR;
    if (dir && dir.includes('reckon-test-cache-')) rmSync(dir, { recursive: true, force: true });
  };
}
