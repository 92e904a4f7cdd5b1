/**
 * Unix seconds written to `DateTime` columns through the store's TabSeparated inserts
 * read back as the same instants in chDB, short values included (the store parses
 * dates with `best_effort`, which misreads a bare "1" or rejects "0").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { unixTime } from '../../schemas/columns.ts';
import { createStore } from '../../store/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-datetime-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('DateTime values in inserts', () => {
  it('stores 0, small, ordinary and last-second timestamps exactly; later ones as the last second', async () => {
    const store = await createStore(parseConfig({ dataDir: dir }));
    try {
      await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
      await store.command(
        `CREATE TABLE ${store.database}.dt (i UInt32, d DateTime('UTC')) ENGINE = MergeTree ORDER BY i`,
      );
      const input = [0, 1, 59, 86_400, 999_999_999, 1_767_225_600, 4_294_967_295, 18_446_744_073];
      await store.insert(
        'dt',
        input.map((s, i) => ({ i, d: unixTime(s) })),
      );
      const rows = await store.query<{ s: string }>(
        `SELECT toString(toUnixTimestamp(d)) AS s FROM ${store.database}.dt ORDER BY i`,
      );
      expect(rows.map((r) => Number(r.s))).toEqual(input.map((s) => Math.min(s, 4_294_967_295)));
    } finally {
      await store.close();
    }
  });
});
