/**
 * BENCHMARKS.md's results section is what bench/results/latest.json says: bench/markdown.ts
 * (which npm run bench runs after a full run) checks it, as a child since test/ and bench/ are peers.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const path = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

describe('BENCHMARKS.md', () => {
  it('shows the committed results of every benchmark', () => {
    const doc = readFileSync(path('BENCHMARKS.md'), 'utf8');
    const latest = JSON.parse(readFileSync(path('bench/results/latest.json'), 'utf8'));
    for (const s of latest.scripts) expect(doc, s.name).toContain(`--only ${s.name}\``);
    // Exits 1 (and execFileSync throws) when the section differs from what the results generate.
    execFileSync(process.execPath, ['--import', 'tsx', path('bench/markdown.ts'), '--check'], {
      cwd: path('.'),
      stdio: 'pipe',
    });
  });
});
