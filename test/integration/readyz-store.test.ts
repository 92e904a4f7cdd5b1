/**
 * `/readyz` and the store's writes (finding 6 of sql-findings.test.ts): while every insert fails
 * for lack of disk space the service is not ready, from the first failure (not after
 * api.readiness.maxLagSeconds), and ready again once an insert succeeds; and no reason shows a
 * path of this machine. The failures are real: the insert's spool file is a link to /dev/full,
 * where every write is ENOSPC.
 */
import { mkdtempSync, readdirSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readiness } from '../../api/readiness.ts';
import { watchStoreWrites } from '../../api/store-writable.ts';
import { parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';
import { migrate } from '../../views/migrate.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-readyz-store-'));
let raw: Store;
let writes: ReturnType<typeof watchStoreWrites>;
const spool = join(dir, 'insert-spool');

beforeAll(async () => {
  const cfg = parseConfig({ dataDir: dir });
  raw = await createStore(cfg);
  await migrate(raw, { database: cfg.store.database, cluster: cfg.store.cluster }, createLogger('silent'));
  writes = watchStoreWrites(raw);
}, 120_000);

afterAll(async () => {
  await raw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every spool file this process may write next is /dev/full. */
function fillDisk(): void {
  for (let n = 0; n < 2000; n++) symlinkSync('/dev/full', join(spool, `${process.pid}-${n}.tsv`));
}
function freeDisk(): void {
  for (const f of readdirSync(spool)) unlinkSync(join(spool, f));
}

const row = (slug: string) => ({ slug, status: 'active', name: slug, symbol: 'X', decimals: 18 });

describe('/readyz and the store', () => {
  it('is not ready from the first insert that fails for lack of space, and ready after one succeeds', async () => {
    const readiness = new Readiness({
      store: writes.store,
      maxLagSeconds: 60,
      chainIds: () => [],
      conditions: [writes.condition],
      minIntervalMs: 0,
    });
    await writes.store.insert('registry_raw', [row('a')]);
    expect((await readiness.check()).status).toBe('ready');
    fillDisk();
    try {
      await expect(writes.store.insert('registry_raw', [row('b')])).rejects.toMatchObject({ code: 'ENOSPC' });
      const report = await readiness.check();
      expect(report.status).toBe('not_ready');
      expect(report.reasons).toEqual([
        expect.stringMatching(/^store writes: writes fail for lack of disk space since /),
      ]);
    } finally {
      freeDisk();
    }
    await writes.store.insert('registry_raw', [row('c')]);
    expect((await readiness.check()).status).toBe('ready');
  });

  it("shows no path of this machine in any reason (a failing ingester's error names the bus's file)", async () => {
    let error = '';
    try {
      readdirSync(join(dir, 'bus', 'transfers-0', 'missing'));
    } catch (err) {
      error = `cannot append to bus log: ${(err as Error).message}`;
    }
    expect(error).toContain(dir);
    const readiness = new Readiness({
      store: raw,
      maxLagSeconds: 60,
      chainIds: () => [],
      progress: () => [{ chainId: 98866, phase: 'failing', head: 10, next: 5, lastError: error }],
      conditions: [{ name: 'bus', reasons: () => [error] }],
      minIntervalMs: 0,
    });
    const report = await readiness.check();
    expect(report.status).toBe('not_ready');
    const text = JSON.stringify(report);
    expect(text).toContain('cannot append to bus log');
    expect(text).not.toContain(dir);
    expect(text).not.toMatch(/"[^"]*\/(tmp|root|home|work)\//);
  });
});
