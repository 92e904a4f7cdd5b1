/**
 * The shared GET /v1/token-holders snapshots over the activity scenario in chDB: one
 * snapshot per data version read by every request (one encoding of the body, in one file),
 * the first build read while it is still being encoded, the previous complete snapshot
 * served while a new version's builds, and a superseded snapshot (table and file) dropped
 * once its last reader is done. New data is a mint written to transfers_raw (the views fill
 * as in production); its expected row is derived here from the mint and the scenario.
 */
import { existsSync, readdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TokenHolderSnapshots, tokenHolderSnapshotsOf } from '../../api/handlers/holders.ts';
import { snapshotTokenHolders, type TokenHolder } from '../../api/read/holders-token-holders.ts';
import { loadRegistry } from '../../api/read/registry.ts';
import { createApp, listen } from '../../api/server.ts';
import { silentLogger } from '../../core/log.ts';
import { buildActivityScenario, NOW, NOW_MS, units } from '../support/activity-scenario.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const s = buildActivityScenario();
const alpha = s.vaults.find((v) => v.record.slug === 'alpha')!;
const CHAIN = alpha.record.chainIds[0];
let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness(s.lines, { clock: () => NOW_MS });
});
afterAll(() => api?.close());

/** Names of the snapshot tables in the store. */
async function snapshotTables(): Promise<string[]> {
  const rows = await api.store.query<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = {db:String} AND startsWith(name, 'token_holders_snapshot_')
     ORDER BY name`,
    { db: api.store.database },
  );
  return rows.map((r) => r.name);
}

async function tableExists(qualified: string): Promise<boolean> {
  const [db, name] = qualified.split('.');
  const rows = await api.store.query(
    'SELECT 1 FROM system.tables WHERE database = {db:String} AND name = {name:String}',
    { db, name },
  );
  return rows.length === 1;
}

/** The rows of a fresh, unshared snapshot of the store's current data (dropped after). */
async function freshRows(): Promise<TokenHolder[]> {
  const snap = await snapshotTokenHolders(api.store, await loadRegistry(api.store));
  try {
    const rows: TokenHolder[] = [];
    for await (const page of snap.pages(1000)) rows.push(...page);
    return rows;
  } finally {
    await snap.drop();
  }
}

/** The whole body of a snapshot, as its readers get it. */
async function bodyText(body: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const b of body) parts.push(b);
  return Buffer.concat(parts).toString('utf8');
}

/** The body files in the data directory's snapshot folder. */
const bodyFiles = () => readdirSync(join(api.dataDir, 'snapshots'));

let mints = 0;
/** Mints `raw` alpha shares on its first EVM chain to a new holder (`name`, or a fresh address); returns the row it must produce. */
async function mintToNewHolder(raw: bigint, name?: string): Promise<TokenHolder> {
  mints++;
  const holder = name ?? `0x${(0xbee000 + mints).toString(16).padStart(40, '0')}`;
  const block = 900_000_000 + mints;
  await api.store.insert('transfers_raw', [
    {
      event_id: `${CHAIN}:0xnew${mints}:0`,
      chain_id: CHAIN,
      block_number: block,
      block_hash: `0xnew${mints}`,
      block_time: new Date(NOW * 1000).toISOString().slice(0, 19).replace('T', ' '),
      tx_hash: `0xtxnew${mints}`,
      log_index: 0,
      removed: 0,
      ver: 1,
      vault: 'alpha',
      token: alpha.record.vaultAddress,
      from_address: '0x0000000000000000000000000000000000000000',
      to_address: holder,
      amount: raw.toString(),
    },
  ]);
  // Expected value from the scenario: raw / 10^decimals shares at rate x base USD price.
  const [int, frac = ''] = alpha.record.baseAssetUsdPrice.split('.');
  const shareUsdE18 = (alpha.rate * BigInt(int + frac.padEnd(18, '0'))) / 10n ** BigInt(alpha.rateDecimals);
  const decimals = alpha.record.decimals;
  return {
    address: holder,
    tokenAddress: alpha.record.vaultAddress,
    balance: units(raw, decimals),
    value: units((raw * shareUsdE18) / 10n ** BigInt(decimals), 18),
  };
}

describe('one snapshot per data version', () => {
  it('serves concurrent and later requests of one version from the same snapshot table', async () => {
    const [a, b] = await Promise.all([api.request('/v1/token-holders'), api.request('/v1/token-holders')]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const tables = await snapshotTables();
    expect(tables).toHaveLength(1);
    const c = await api.request('/v1/token-holders');
    expect(await snapshotTables()).toEqual(tables); // reused, not rebuilt
    const truth = await freshRows();
    expect(truth.length).toBeGreaterThan(0);
    // One body file for the version, shared by the three requests.
    expect(bodyFiles()).toEqual([`${process.pid}-${tables[0]}.json`]);
    for (const res of [a, b, c]) {
      // Byte for byte what JSON.stringify writes for the rows read back from the table.
      expect(res.text).toBe(JSON.stringify({ data: { holders: truth, count: truth.length } }));
      expect(res.headers.get('x-data-version')).toBe('1');
      expect(res.headers.get('x-snapshot-stale')).toBeNull();
      expect(res.headers.get('x-data-watermark')).toMatch(/^\d{4}-\d\d-\d\dT/);
      // Whole seconds since the snapshot was built: present, an integer, and no older than this process.
      const age = res.headers.get('x-snapshot-age');
      expect(age).toMatch(/^\d+$/);
      expect(Number(age)).toBeLessThanOrEqual(Math.ceil((Date.now() - performance.timeOrigin) / 1000));
    }
  });
});

describe('bands', () => {
  it('cuts the rows into value bands whose concatenation is the one-band order, ties included', async () => {
    // Three holders of equal value (a cut may fall on them): they stay in one band, in address order.
    const tied = [
      await mintToNewHolder(777_000n),
      await mintToNewHolder(777_000n),
      await mintToNewHolder(777_000n),
    ];
    // A holder whose name needs escapes in TSV and in JSON, and is not ASCII: its band takes the general path.
    const odd = await mintToNewHolder(5_000_000n, 'odd "holder"\\ \t\n\u0001 Ω');
    const truth = await freshRows();
    const at = truth.findIndex((r) => r.address === tied[0].address);
    expect(truth.slice(at, at + 3)).toEqual(tied);
    expect(truth).toContainEqual(odd);
    const snap = await snapshotTokenHolders(api.store, await loadRegistry(api.store), { bandRows: 3 });
    try {
      expect(snap.bands).toBeGreaterThan(5);
      const rows: TokenHolder[] = [];
      for await (const page of snap.pages(4)) rows.push(...page);
      expect(rows).toEqual(truth);
      expect(await bodyText(snap.body())).toBe(
        JSON.stringify({ data: { holders: truth, count: truth.length } }),
      );
    } finally {
      await snap.drop();
    }
  });
});

describe('reader counting across a rebuild', () => {
  let snaps: TokenHolderSnapshots;
  let version = 1;
  beforeAll(() => {
    snaps = tokenHolderSnapshotsOf(
      { store: api.store, config: api.config, log: silentLogger, dataVersion: () => version },
      { minGapMs: 0 },
    );
  });
  afterAll(() => snaps.stop());

  it('reads the first build while it is encoded, then keeps the old snapshot through a rebuild', async () => {
    // No complete snapshot yet: the lease is on the build in flight, readable before it is done.
    const first = await snaps.acquire();
    let firstDone = false;
    void first.snapshot.done.then(() => (firstDone = true));
    const text = await bodyText(first.snapshot.body());
    expect(firstDone).toBe(true); // the reader waited for the end of the encoding
    const oldRows: TokenHolder[] = [];
    for await (const page of first.snapshot.pages(5)) oldRows.push(...page);
    expect(oldRows).toEqual(await freshRows());
    expect(text).toBe(JSON.stringify({ data: { holders: oldRows, count: oldRows.length } }));
    expect(first.version).toBe('1');
    expect(first.snapshot.watermark).toEqual(expect.any(Number));

    const added = await mintToNewHolder(123_456_789n);
    version = 2;
    const pending = snaps.acquire(); // starts the rebuild and answers without waiting for it
    let rebuilt = false;
    const settled = snaps.settled().then(() => (rebuilt = true));
    const during = await pending;
    expect(rebuilt).toBe(false);
    expect(during.snapshot.table).toBe(first.snapshot.table);
    expect(during.version).toBe('1');
    expect(during.stale).toBe(true);
    await settled;
    expect(await bodyText(during.snapshot.body())).toBe(text); // still readable after the new one replaced it

    const next = await snaps.acquire();
    expect(next.version).toBe('2');
    expect(next.stale).toBe(false);
    expect(next.snapshot.table).not.toBe(first.snapshot.table);
    const newRows: TokenHolder[] = [];
    for await (const page of next.snapshot.pages(5)) newRows.push(...page);
    expect(newRows).toContainEqual(added);
    expect(newRows.filter((r) => r.address !== added.address)).toEqual(oldRows);
    expect(newRows).toEqual(await freshRows());
    expect(await bodyText(next.snapshot.body())).toBe(
      JSON.stringify({ data: { holders: newRows, count: newRows.length } }),
    );

    // The old table and file live until both of their readers let go; the current ones stay.
    const oldFile = `${process.pid}-${first.snapshot.table.split('.')[1]}.json`;
    await first.release();
    await first.release(); // idempotent: must not count twice
    expect(await tableExists(first.snapshot.table)).toBe(true);
    expect(bodyFiles()).toContain(oldFile);
    await during.release();
    expect(await tableExists(first.snapshot.table)).toBe(false);
    expect(bodyFiles()).not.toContain(oldFile);
    await next.release();
    expect(await tableExists(next.snapshot.table)).toBe(true);
    expect(
      existsSync(join(api.dataDir, 'snapshots', `${process.pid}-${next.snapshot.table.split('.')[1]}.json`)),
    ).toBe(true);
  });
});

describe('GET /v1/token-holders across a data-version change', () => {
  let version = 1;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const app = createApp({
      store: api.store,
      config: api.config,
      dataVersion: () => version,
      ready: () => true,
    });
    server = await listen(app, '127.0.0.1', 0);
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/token-holders`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const get = async () => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    return {
      version: res.headers.get('x-data-version'),
      stale: res.headers.get('x-snapshot-stale'),
      body: await res.json(),
    };
  };

  it('answers the previous complete snapshot (marked stale) until the new version is built', async () => {
    const before = await get();
    expect(before.version).toBe('1');
    expect(before.body.data.holders).toEqual(await freshRows());

    const added = await mintToNewHolder(42_000_000n);
    version = 2;
    const during = await get();
    expect(during.version).toBe('1');
    expect(during.stale).toBe('1');
    expect(during.body).toEqual(before.body);

    // The rebuild runs in the background (at most one per few seconds): ask until it lands.
    let after = during;
    for (let i = 0; i < 120 && after.version !== '2'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      after = await get();
    }
    expect(after.version).toBe('2');
    expect(after.stale).toBeNull();
    const holders: TokenHolder[] = after.body.data.holders;
    expect(holders).toContainEqual(added);
    expect(holders.filter((r) => r.address !== added.address)).toEqual(before.body.data.holders);
    expect(after.body.data.count).toBe(before.body.data.count + 1);
  });
});
