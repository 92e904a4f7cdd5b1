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
        'holder_history_daily',
        'price_daily',
        'fees_daily',
        'mint_state',
        'vault_tvl_daily',
        'nav_apy_daily',
        'fees_daily_by_kind',
      ])
        expect(generated).toContain(`## ${t}\n`);
      expect(readFileSync(join(ROOT, 'docs', 'views.md'), 'utf8')).toBe(generated);
      // Every table and view says what it is, every column what it means (and its unit).
      const tables = generated.split('\n# Queries')[0];
      expect(tables.match(/^## /gm)?.length).toBeGreaterThan(50);
      expect(tables).not.toContain('(no comment)');
      const columns = tables.split('\n').filter((l) => /^\| \w+ \| `/.test(l));
      expect(columns.length).toBeGreaterThan(400);
      expect(columns.filter((l) => /\|\s*\|$/.test(l))).toEqual([]);
      // The example queries follow, as the tests run them.
      for (const q of ['01-daily-tvl-per-vault.sql', '10-vault-day-overview.sql', 'api-vault-numbers.sql'])
        expect(generated).toContain(`## ${q}\n\n\`\`\`sql\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
