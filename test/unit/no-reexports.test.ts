/**
 * A name is imported from the file that defines it: no product file re-exports another's names
 * (`export { x } from`, `export *`), so a reader goes from a use to its definition in one hop.
 * test/support may gather helpers for the suites.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FOLDERS = [
  'api',
  'bench',
  'bus',
  'cli',
  'core',
  'devnet',
  'ingest',
  'schemas',
  'store',
  'streams',
  'views',
];

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('imports', () => {
  it('no product file re-exports what another file defines', () => {
    const reexports = FOLDERS.flatMap(tsFiles).flatMap((f) =>
      [
        ...readFileSync(join(ROOT, f), 'utf8').matchAll(
          /^export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s+from\s+'([^']+)'/gm,
        ),
      ].map((m) => `${f} re-exports ${m[1]}`),
    );
    expect(reexports).toEqual([]);
  });
});
