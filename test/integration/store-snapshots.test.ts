/**
 * The store's snapshot API on chDB: snapshot tables (create and fill in the engine, count,
 * drop, failures typed and cleaned up, the sweep of stale ones), the spill files readers
 * tail while they are written, and the versioned life of snapshots when a build fails
 * part-way.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { silentLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';
import { SnapshotFile, snapshotDir } from '../../store/snapshot-file.ts';
import { type BuildingSnapshot, SnapshotVersions } from '../../store/snapshot-versions.ts';
import { createSnapshot, dropStaleSnapshots, SNAPSHOT_PREFIXES } from '../../store/snapshots.ts';
import { INTERNAL_PREFIXES } from '../../views/catalogue.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-snapshots-'));
let store: Store;

beforeAll(async () => {
  store = await createStore(parseConfig({ dataDir: dir }));
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const tables = async () =>
  (
    await store.query<{ name: string }>(
      'SELECT name FROM system.tables WHERE database = {db:String} ORDER BY name',
      {
        db: store.database,
      },
    )
  ).map((r) => r.name);

const spec = (select: string) => ({
  prefix: 'token_holders_snapshot_' as const,
  columns: "n UInt64 COMMENT 'n', sq String COMMENT 'n squared'",
  orderBy: 'n',
  comment: "a test's snapshot",
  select,
  params: { k: 1000 },
  settings: { max_threads: 1 },
});

async function bytesOf(reader: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const b of reader) parts.push(b);
  return Buffer.concat(parts).toString();
}

describe('snapshot tables', () => {
  it('are named as internal tables (docs/views.md, views/catalogue.ts)', () => {
    for (const p of SNAPSHOT_PREFIXES) expect(INTERNAL_PREFIXES.some((i) => p.startsWith(i))).toBe(true);
  });

  it('are created and filled by the engine with bound parameters, counted, and dropped once', async () => {
    const snap = await createSnapshot(
      store,
      spec('SELECT number AS n, toString(number * number) AS sq FROM numbers({k:UInt32})'),
    );
    expect(snap.name).toMatch(/^token_holders_snapshot_[0-9a-f]{16}$/);
    expect(snap.table).toBe(`${store.database}.${snap.name}`);
    expect(snap.rows).toBe(1000);
    const [row] = await store.query<{ s: string; c: string }>(
      `SELECT toString(sum(toUInt64(sq))) AS s, comment AS c FROM ${snap.table}, system.tables
       WHERE database = {db:String} AND name = {name:String} GROUP BY c`,
      { db: store.database, name: snap.name },
    );
    // sum of n^2 for n < 1000
    expect(row).toEqual({ s: String((999 * 1000 * 1999) / 6), c: "a test's snapshot" });
    await snap.drop();
    await snap.drop();
    expect(await tables()).not.toContain(snap.name);
  });

  it('fail as STORE_QUERY_FAILED with the engine error as cause, leaving no table', async () => {
    const before = await tables();
    const err = await createSnapshot(
      store,
      spec('SELECT number AS n, no_such_column AS sq FROM numbers(3)'),
    ).catch((e) => e);
    expect(err).toBeInstanceOf(VaultstreamError);
    expect(err.code).toBe('STORE_QUERY_FAILED');
    expect(String(err.cause?.message)).toMatch(/no_such_column/);
    expect(await tables()).toEqual(before);
  });

  it('refuse a prefix that is not a snapshot prefix', async () => {
    const bad = { ...spec('SELECT 1, 2'), prefix: 'vault_' as never };
    await expect(createSnapshot(store, bad)).rejects.toMatchObject({ code: 'BAD_INPUT' });
  });

  it('are swept when stale, except those kept; other tables never', async () => {
    const kept = await createSnapshot(
      store,
      spec('SELECT number AS n, toString(number) AS sq FROM numbers(2)'),
    );
    const old = await createSnapshot(
      store,
      spec('SELECT number AS n, toString(number) AS sq FROM numbers(2)'),
    );
    await store.command(
      `CREATE TABLE ${store.database}.not_a_snapshot (n UInt8) ENGINE = MergeTree ORDER BY n`,
    );
    // Younger than an hour: nothing is stale.
    expect(await dropStaleSnapshots(store, { keep: [kept.name] })).toEqual([]);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await dropStaleSnapshots(store, { keep: [kept.name], olderThanSeconds: 0 })).toEqual([old.name]);
    const names = await tables();
    expect(names).toContain(kept.name);
    expect(names).toContain('not_a_snapshot');
    expect(names).not.toContain(old.name);
  });
});

describe('snapshot files', () => {
  it('are read while written by readers that start at any time, each from the start', async () => {
    const file = await SnapshotFile.create(snapshotDir(dir), 'tail.json');
    const early = bytesOf(file.read());
    await file.append(Buffer.from('abc'));
    const middle = bytesOf(file.read());
    // More than one read's worth (256 KiB), so readers take it in pieces.
    const big = Buffer.alloc(3 << 20, 'x');
    await file.append(big);
    await file.append(Buffer.from('end'));
    await file.finish();
    const late = await bytesOf(file.read());
    const whole = `abc${big.toString()}end`;
    expect(await early).toBe(whole);
    expect(await middle).toBe(whole);
    expect(late).toBe(whole);
    await file.remove();
    expect(existsSync(file.path)).toBe(false);
  });

  it('fail their waiting readers when the writer fails', async () => {
    const file = await SnapshotFile.create(snapshotDir(dir), 'broken.json');
    await file.append(Buffer.from('partial'));
    const reading = bytesOf(file.read());
    const cause = new Error('engine went away');
    await file.fail(cause);
    const err = await reading.catch((e) => e);
    expect(err).toBeInstanceOf(VaultstreamError);
    expect(err.code).toBe('STORE_QUERY_FAILED');
    expect(err.cause).toBe(cause);
    await file.remove();
  });

  it("of dead processes are removed from the data directory's snapshot folder", () => {
    const folder = snapshotDir(dir);
    const dead = join(folder, `${2 ** 22 + 1}-token_holders_snapshot_0.json`); // above Linux's pid_max
    const mine = join(folder, `${process.pid}-token_holders_snapshot_1.json`);
    writeFileSync(dead, '{}');
    writeFileSync(mine, '{}');
    snapshotDir(dir);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(mine)).toBe(true);
  });
});

describe('versioned snapshots', () => {
  /** A snapshot whose body is a file, written by the test. */
  type FileSnap = BuildingSnapshot & { file: SnapshotFile; finish: (ok: boolean) => Promise<void> };

  it('fail the readers of a build that fails part-way, drop it, and build again on the next request', async () => {
    let builds = 0;
    const made: FileSnap[] = [];
    const versions = new SnapshotVersions<FileSnap>({
      name: 'test',
      log: silentLogger,
      version: () => 1,
      build: async () => {
        const file = await SnapshotFile.create(snapshotDir(dir), `v-${++builds}.json`);
        await file.append(Buffer.from(`build ${builds};`));
        let settle!: (ok: boolean) => void;
        const done = new Promise<void>((resolve, reject) => {
          settle = (ok) => (ok ? resolve() : reject(new Error('build failed')));
        });
        done.catch(() => undefined);
        const snap: FileSnap = {
          file,
          done,
          drop: () => file.remove(),
          finish: async (ok) => {
            if (ok) await file.finish();
            else await file.fail(new Error('build failed'));
            settle(ok);
          },
        };
        made.push(snap);
        return snap;
      },
    });
    versions.start();
    try {
      const a = await versions.acquire(); // readable before complete
      const reading = bytesOf(a.snapshot.file.read());
      await made[0].finish(false);
      await expect(reading).rejects.toMatchObject({ code: 'STORE_QUERY_FAILED' });
      await versions.settled();
      expect(existsSync(made[0].file.path)).toBe(true); // its reader still holds it
      await a.release();
      expect(existsSync(made[0].file.path)).toBe(false);

      const b = versions.acquire(); // a new build
      await new Promise((r) => setTimeout(r, 50));
      expect(made).toHaveLength(2);
      const lease = await b;
      const text = bytesOf(lease.snapshot.file.read());
      await lease.snapshot.file.append(Buffer.from('rest'));
      await made[1].finish(true);
      expect(await text).toBe('build 2;rest');
      await versions.settled();
      await lease.release();
      expect(existsSync(made[1].file.path)).toBe(true); // current: kept
    } finally {
      versions.stop();
    }
  });
});
