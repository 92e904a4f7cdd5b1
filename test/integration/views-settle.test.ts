/**
 * The metrics tables that views/settle.ts writes equal the views that define them
 * (test/support/settle-rows.ts settledTables: every vault and day recomputed from scratch), after a
 * first settle and after each kind of change a settle must follow: a retracted rate of an old
 * day, a chain that arrives late with 20 days of history, a backfill of rates before the first
 * day, a snapshot and a transfer in the past, a change of the primary chain, and a restart on
 * the same data directory. Each step also checks that the change did move the tables (so the equality
 * is not the same stale rows on both sides).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { migrate } from '../../views/migrate.ts';
import { writeServiceSettings } from '../../views/settings.ts';
import { settleMetrics } from '../../views/settle.ts';
import {
  ev,
  expectSettledEqualsViews as expectTablesEqualViews,
  mint,
  rate,
  registry,
  snapshot,
  USDC,
} from '../support/settle-rows.ts';

const DAY = 86_400;
const dir = mkdtempSync(join(tmpdir(), 'vs-settle-'));
let config: Config;
let store: Store;
let db: string;
const TODAY = Math.floor(Date.now() / 1000 / DAY) * DAY;
const START = TODAY - 60 * DAY;
const VAULTS = ['sa', 'sb'];

/** Settles; every settled table equals its views. Returns the tables' rows (to see that a change moved them). */
async function expectSettledEqualsViews(): Promise<string> {
  await settleMetrics(store);
  return expectTablesEqualViews(store);
}

beforeAll(async () => {
  config = parseConfig({ dataDir: join(dir, 'data') });
  store = await createStore(config);
  db = config.store.database;
  await migrate(store, { database: db, cluster: '' });
  await store.insert(
    'registry_raw',
    VAULTS.map((v) => registry(v, [98866], '2026-01-01 00:00:00.000')),
  );
  for (const v of VAULTS) {
    await store.insert(
      'rates_raw',
      Array.from({ length: 60 }, (_, d) => rate(v, 98866, START + d * DAY + 3600, 1_000_000 + d * 200)),
    );
    await store.insert('transfers_raw', [
      mint(v, 98866, START + 100, '0x00000000000000000000000000000000000000a1', 5_000_000_000),
      mint(v, 98866, START + 20 * DAY, '0x00000000000000000000000000000000000000a2', 2_000_000_000),
    ]);
    await store.insert(
      'snapshots_raw',
      Array.from({ length: 60 }, (_, d) => [
        snapshot(v, START + d * DAY + 7200, 'ASSET_BALANCE', USDC, 1_000_000_000 + d),
        snapshot(v, START + d * DAY + 7200, 'COMPOSITION', 'tbill', 0, {
          apy7d: '4.5',
          apy30d: '4.7',
          weight: '50',
        }),
      ]).flat(),
    );
  }
  await store.insert('blocks_raw', [
    {
      chain_id: 98866,
      block_number: 1,
      block_hash: '0xb',
      parent_hash: '0x1',
      block_time: TODAY,
      removed: 0,
      ver: 1,
    },
  ]);
}, 60_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the settled metrics tables equal their views', () => {
  let before = '';
  it('after the first settle (the whole history)', async () => {
    before = await expectSettledEqualsViews();
    const [n] = await store.query<{ n: string }>(
      `SELECT toString(count()) AS n FROM ${db}.metrics_chain_daily FINAL`,
    );
    expect(Number(n.n)).toBe(2 * 61);
  });

  it('after a rate of an old day is retracted', async () => {
    const [old] = await store.query<{ id: string; n: number; rate: string }>(
      `SELECT event_id AS id, block_number AS n, toString(rate) AS rate FROM ${db}.rates_raw
       WHERE vault = 'sa' AND block_time = toDateTime(${START + 10 * DAY + 3600})`,
    );
    const retraction = rate('sa', 98866, START + 10 * DAY + 3600, Number(old.rate), 1, old.id);
    await store.insert('rates_raw', [
      {
        ...retraction,
        block_number: old.n,
        block_hash: `0x${old.n.toString(16)}`,
        tx_hash: `0x${old.n.toString(16)}`,
      },
    ]);
    const after = await expectSettledEqualsViews();
    expect(after).not.toBe(before);
    before = after;
  });

  it('after a chain arrives late with 20 days of history, and a backfill before the first day', async () => {
    await store.insert('registry_raw', [registry('sb', [98866, 1], '2026-01-02 00:00:00.000')]);
    await store.insert(
      'rates_raw',
      Array.from({ length: 20 }, (_, d) => rate('sb', 1, START + (30 + d) * DAY + 600, 1_000_000 + d * 333)),
    );
    await store.insert('transfers_raw', [
      mint('sb', 1, START + 31 * DAY, '0x00000000000000000000000000000000000000b1', 7_000_000_000),
    ]);
    await store.insert(
      'rates_raw',
      Array.from({ length: 5 }, (_, d) => rate('sa', 98866, START - (5 - d) * DAY, 990_000 + d * 100)),
    );
    const after = await expectSettledEqualsViews();
    expect(after).not.toBe(before);
    before = after;
  });

  it('after the primary chain changes (config mintFlow.primaryChainId, service_settings)', async () => {
    const priceChain = async () =>
      (
        await store.query<{ c: number }>(
          `SELECT chain_id AS c FROM ${db}.metrics_vault_current FINAL WHERE vault = 'sb'`,
        )
      )[0].c;
    await writeServiceSettings(store, { primaryChainId: 98866 });
    await expectSettledEqualsViews();
    // sb's latest rate is on 98866, its chain-1 rates are older: the primary chain wins either way.
    expect(Number(await priceChain())).toBe(98866);
    await writeServiceSettings(store, { primaryChainId: 1 });
    const after = await expectSettledEqualsViews();
    expect(Number(await priceChain())).toBe(1);
    expect(after).not.toBe(before);
    before = after;
  });

  it('after redemption requests, one of them later filled (metrics_pending_redemptions)', async () => {
    const request = (id: string, kind: string, amount: number) => ({
      ...ev('sa', 98866, TODAY - 3600),
      queue: '0x00000000000000000000000000000000000000ee',
      kind,
      request_id: id,
      user: '0x00000000000000000000000000000000000000a1',
      offer_token: `0x${'7a'.repeat(20)}`,
      want_token: USDC,
      amount: String(amount),
      min_price: '1000000',
      want_decimals: 6,
      deadline: TODAY + 30 * DAY,
    });
    await store.insert('redemptions_raw', [
      request('1', 'REQUEST', 1_000_000),
      request('2', 'REQUEST', 2_000_000),
    ]);
    const open = await expectSettledEqualsViews();
    expect(open).toContain('|2000000|');
    await store.insert('redemptions_raw', [request('2', 'FILL', 2_000_000)]);
    const after = await expectSettledEqualsViews();
    expect(after).not.toContain('|2000000|');
    before = after;
  });

  it('after ERC-7540 requests that add up, a part fulfilled, then the rest taken off (metrics_pending_redemptions)', async () => {
    const controller = '0x00000000000000000000000000000000000000c7';
    const event = (n: number, kind: string, amount: number, assets = 0) => ({
      ...ev('sa', 98866, TODAY - 3000 + n, 0, `7540-${n}`),
      queue: '0x00000000000000000000000000000000000000e7',
      kind,
      request_id: controller,
      user: controller,
      offer_token: `0x${'7a'.repeat(20)}`,
      want_token: USDC,
      amount: String(amount),
      min_price: '0',
      want_decimals: 6,
      deadline: 4_294_967_295,
      assets: String(assets),
    });
    await store.insert('redemptions_raw', [
      event(1, 'REDEEM_REQUEST', 3_000_000),
      event(2, 'REDEEM_REQUEST', 4_000_000),
      event(3, 'REDEEM_FULFILLED', 2_500_000, 2_480_000),
    ]);
    const pending = await expectSettledEqualsViews();
    expect(pending).toContain(`|${controller}|`);
    expect(pending).toContain('|4500000|');
    await store.insert('redemptions_raw', [event(4, 'REDEEM_DECREASED', 4_500_000)]);
    const after = await expectSettledEqualsViews();
    expect(after).not.toContain(`|${controller}|`);
    before = after;
  });

  it('after deposits and withdrawals, one of them retracted (metrics_volume, the head)', async () => {
    const activity = (t: number, kind: string, assets: number, removed = 0, id?: string, n?: number) => {
      const e = ev('sa', 98866, t, removed, id);
      const b = n ?? e.block_number;
      return {
        ...e,
        block_number: b,
        block_hash: `0x${b.toString(16)}`,
        tx_hash: `0x${b.toString(16)}`,
        kind,
        user: '0x00000000000000000000000000000000000000a1',
        shares: String(assets),
        shares_token: `0x${'7a'.repeat(20)}`,
        assets: String(assets),
        assets_token: USDC,
        assets_decimals: 6,
      };
    };
    const rows = [
      activity(TODAY - 7200, 'DEPOSIT', 3_000_000),
      activity(TODAY - 7200, 'WITHDRAW', 1_000_000),
      activity(START + 10 * DAY, 'DEPOSIT', 5_000_000),
      activity(TODAY - 60, 'REDEEM_REQUEST', 9_000_000),
    ];
    const retract = (r: (typeof rows)[number]) =>
      activity(r.block_time, r.kind, Number(r.assets), 1, r.event_id, r.block_number);
    const volume = async () =>
      (
        await store.query<{ r: string }>(
          `SELECT concat(toString(toUnixTimestamp(block_time)), ':', toString(assets)) AS r
           FROM ${db}.metrics_volume FINAL WHERE vault = 'sa' ORDER BY r`,
        )
      ).map((x) => x.r);
    await store.insert('activity_raw', rows);
    await expectSettledEqualsViews();
    expect(await volume()).toEqual([`${START + 10 * DAY}:5000000`, `${TODAY - 7200}:4000000`]);
    await store.insert('activity_raw', [retract(rows[0])]);
    await expectSettledEqualsViews();
    expect(await volume()).toEqual([`${START + 10 * DAY}:5000000`, `${TODAY - 7200}:1000000`]);
    // Every row retracted: the volume rows get tombstones (and the activity test below starts empty).
    await store.insert('activity_raw', rows.slice(1).map(retract));
    const none = await expectSettledEqualsViews();
    expect(await volume()).toEqual([]);
    before = none;
  });

  it('after the watermark moves back three days (the head: latest settled day and watermark)', async () => {
    const head = async () =>
      (
        await store.query<{ w: string }>(
          `SELECT toString(watermark) AS w FROM ${db}.metrics_vault_head FINAL WHERE vault = 'sa'`,
        )
      )[0];
    // The ingester publishes an older block again (as after a reorg, at a newer insert sequence):
    // the chain watermark moves back three days, and so does the latest settled day.
    await store.insert('blocks_raw', [
      {
        chain_id: 98866,
        block_number: 2,
        block_hash: '0xb2',
        parent_hash: '0xb',
        block_time: TODAY - 3 * DAY,
        removed: 0,
        ver: 2,
      },
    ]);
    const back = await expectSettledEqualsViews();
    const h = await head();
    expect(h.w).toBe(new Date((TODAY - 3 * DAY) * 1000).toISOString().slice(0, 19).replace('T', ' '));
    expect(back).not.toBe(before);
    before = back;
  });

  it('after a past snapshot and transfer, and after a restart on the same data directory', async () => {
    await store.insert('snapshots_raw', [
      snapshot('sa', START + 40 * DAY + 9000, 'ASSET_BALANCE', USDC, 9_000_000_000),
    ]);
    await store.insert('transfers_raw', [
      mint('sa', 98866, START + 45 * DAY, '0x00000000000000000000000000000000000000a3', 1_000_000_000),
    ]);
    await store.close();
    store = await createStore(config);
    const after = await expectSettledEqualsViews();
    expect(after).not.toBe(before);
  });
});

describe('the holder tables (migration 024) follow transfers, their retraction and the clock', () => {
  const A3 = '0x00000000000000000000000000000000000000a3';
  const A4 = '0x00000000000000000000000000000000000000a4';
  const transfer = (t: number, from: string, to: string, amount: number, removed = 0, id?: string) => ({
    ...mint('sa', 98866, t, to, amount),
    ...(id && { event_id: id, block_hash: id.split(':')[1] }),
    removed,
    from_address: from,
  });
  const since = async (holder: string) =>
    (
      await store.query<{ s: string }>(
        `SELECT toString(toUnixTimestamp(since)) AS s FROM ${db}.metrics_top_holders FINAL
         WHERE vault = 'sa' AND holder = '${holder}'`,
      )
    )[0]?.s;

  it('a holder who sells out and buys again, then the buy retracted (a reorg)', async () => {
    await expectSettledEqualsViews();
    const first = await since(A3);
    expect(first).toBe(String(START + 45 * DAY));
    await store.insert('transfers_raw', [transfer(START + 50 * DAY, A3, A4, 1_000_000_000)]);
    await expectSettledEqualsViews();
    expect(await since(A3)).toBeUndefined();
    const buy = transfer(START + 52 * DAY, '0x0000000000000000000000000000000000000000', A3, 3_000_000_000);
    await store.insert('transfers_raw', [buy]);
    const bought = await expectSettledEqualsViews();
    expect(await since(A3)).toBe(String(START + 52 * DAY));
    await store.insert('transfers_raw', [{ ...buy, removed: 1, ver: buy.ver + 1000 }]);
    const retracted = await expectSettledEqualsViews();
    expect(await since(A3)).toBeUndefined();
    expect(retracted).not.toBe(bought);
  });

  it("today's holder counts are settled again in a new UTC hour", async () => {
    await expectSettledEqualsViews();
    const [s] = await store.query<{ since: string; version: string }>(
      `SELECT toString(since) AS since, toString(version) AS version FROM ${db}.metrics_settle_state FINAL`,
    );
    // As if the last settle ran an hour ago: today's row then had a sample less (here: a wrong one).
    await store.command(
      `INSERT INTO ${db}.metrics_holders_daily
       SELECT vault, chain_id, day, start, end, min, max, average, count - 1, version + 1, 0
       FROM ${db}.metrics_holders_daily FINAL WHERE day = today()`,
    );
    await store.insert('metrics_settle_state', [
      {
        id: 0,
        since: s.since,
        settled_day: new Date(TODAY * 1000).toISOString().slice(0, 10),
        settled_hour: Math.floor(Date.now() / 3_600_000) * 3600 - 3600,
        version: s.version,
        holder_state: 1,
      },
    ]);
    await expectSettledEqualsViews();
  });

  it('with nothing new, a settle writes nothing, on a vault of two chains with their blocks', async () => {
    // Chain 1's watermark after 98866's: the watermarks' map is built in the order the rows come.
    await store.insert('blocks_raw', [
      {
        chain_id: 1,
        block_number: 7,
        block_hash: '0xc',
        parent_hash: '0x2',
        block_time: TODAY,
        removed: 0,
        ver: 1,
      },
    ]);
    await settleMetrics(store);
    for (let i = 0; i < 5; i++) expect((await settleMetrics(store)).settled.size, `settle ${i + 2}`).toBe(0);
  });
});
