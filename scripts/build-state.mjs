// Is the compiled CLI (dist/, written by scripts/build.mjs) there and newer than every source
// file it was built from? Shared by bin/vaultstream.mjs (which runs dist/ when it is, else the
// TypeScript through tsx) and scripts/build.mjs --if-stale. Plain JavaScript, Node built-ins only:
// it runs before anything is compiled, and on every start (one stat per source file, ~1 ms).
import { readFileSync, statSync } from 'node:fs';

/** The project root (a file: URL ending in `/`). */
export const ROOT = new URL('../', import.meta.url);
/** Written last by every build: `{ startedAt, entry, inputs }`, paths relative to ROOT. */
export const BUILD_INFO = new URL('dist/build-info.json', ROOT);

/**
 * `{ entry }` (a file: URL) when dist/ holds a build whose inputs are all unchanged since it
 * started (with `checkSources: false`, any build), else `{ reason }` saying why not.
 * @returns {{ entry: URL, reason?: undefined } | { entry?: undefined, reason: string }}
 */
export function compiledBuild({ checkSources = true } = {}) {
  let info;
  try {
    info = JSON.parse(readFileSync(BUILD_INFO, 'utf8'));
  } catch {
    return { reason: 'no build (dist/build-info.json missing): run npm run build' };
  }
  for (const file of checkSources ? info.inputs : []) {
    let mtimeMs;
    try {
      ({ mtimeMs } = statSync(new URL(file, ROOT)));
    } catch {
      return { reason: `build is stale: ${file} is gone` };
    }
    if (mtimeMs > info.startedAt) return { reason: `build is stale: ${file} changed since` };
  }
  return { entry: new URL(info.entry, ROOT) };
}
