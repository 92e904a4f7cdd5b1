/** The data team's catalogue (docs/views.md) is generated from the migrations and kept current. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.ts';

describe('catalogue', () => {
  it('docs/views.md matches what `vaultstream catalogue` generates from the migrations', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vs-cat-'));
    try {
      const out = join(dir, 'views.md');
      const res = await runCli(['catalogue', '-o', out], { VAULTSTREAM_DATA_DIR: join(dir, 'data') });
      expect(res.code, res.stderr).toBe(0);
      const generated = readFileSync(out, 'utf8');
      for (const t of [
        'transfers_raw',
        'balances',
        'holder_counts_daily',
        'price_daily',
        'fees_daily',
        'mint_state',
      ])
        expect(generated).toContain(`## ${t}\n`);
      expect(readFileSync(join(ROOT, 'docs', 'views.md'), 'utf8')).toBe(generated);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
