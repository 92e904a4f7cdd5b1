/**
 * bench/ and test/ are independent: no file of one imports a file of the other (what both need
 * lives in product code, e.g. devnet/synthetic-transfers.ts, devnet/emitter.ts and
 * devnet/kafka-mock.ts). The smoke test runs bench/run.ts as a command, which is not an import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** Every source file under `dir` (skipping results, caches and node_modules). */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(m?[jt]s|tsx)$/.test(f) && !/(^|[\\/])(\.tmp|results|node_modules)[\\/]/.test(f))
    .map((f) => join(ROOT, dir, f));
}

/** The files a source imports by relative path (static, `export ... from` and dynamic imports). */
function importedFiles(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s));
}

const inside = (file: string, dir: string) => file.startsWith(join(ROOT, dir) + sep);

function crossings(from: string, to: string): string[] {
  return sources(from).flatMap((file) =>
    importedFiles(file)
      .filter((target) => inside(target, to))
      .map((target) => `${relative(ROOT, file)} imports ${relative(ROOT, target)}`),
  );
}

describe('bench/ and test/ are independent', () => {
  it('finds the imports it checks (the scanner reads static, re-export and dynamic imports)', () => {
    expect(importedFiles(join(ROOT, 'bench', 'pipeline.ts'))).toContain(
      join(ROOT, 'devnet', 'synthetic-transfers.ts'),
    );
    expect(importedFiles(join(ROOT, 'test', 'support', 'kafka-broker.ts'))).toContain(
      join(ROOT, 'devnet', 'kafka-mock.ts'),
    );
    expect(sources('bench').length).toBeGreaterThan(5);
    expect(sources('test').length).toBeGreaterThan(50);
  });

  it('no file under bench/ imports one under test/', () => {
    expect(crossings('bench', 'test')).toEqual([]);
  });

  it('no file under test/ imports one under bench/', () => {
    expect(crossings('test', 'bench')).toEqual([]);
  });
});
