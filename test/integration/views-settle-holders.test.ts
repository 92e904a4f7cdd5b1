/**
 * The holder tables are settled from the first changed day on
 * (views/settle/metrics_holders_daily.sql, metrics_holder_since.sql, migration 026), not from the
 * whole history. After each kind of change they equal the views that define them over the whole
 * history (holder_history_daily, holder_since, vault_top_holders), and the change moved exactly
 * the days it should: a transfer retracted 10 days back changes the counts from that day on and
 * not before, a chain that arrives late adds holders to an old day, a retraction that removes a
 * holder's latest crossing gives back its first holderSince (from the whole history), a replay
 * changes nothing, a vault's first rate leaves its top holders as they were, and a settle cut
 * short after the holder counts (a crash) is completed by the next one after a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { migrate } from '../../views/migrate.ts';
import { settleMetrics } from '../../views/settle.ts';
import { expectSettledEqualsViews, mint, rate, registry } from '../support/settle-rows.ts';

const DAY = 86_400;
const dir = mkdtempSync(join(tmpdir(), 'vs-settle-holders-'));
let config: Config;
let store: Store;
let db: string;
const TODAY = Math.floor(Date.now() / 1000 / DAY) * DAY;
const START = TODAY - 40 * DAY;
const ZERO = '0x0000000000000000000000000000000000000000';
const H = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const HOLDER_TABLES = ['metrics_holders_daily', 'metrics_holder_since', 'metrics_top_holders'];

/** A transfer on `chain` of vault sa; a retraction repeats the event with removed = 1 at a newer version. */
const transfer = (chain: number, t: number, from: string, to: string, amount: number) => ({
  ...mint('sa', chain, t, to, amount),
  from_address: from,
});
const retraction = (row: ReturnType<typeof transfer>) => ({ ...row, removed: 1, ver: row.ver + 100_000 });

/** Settles, then checks every holder table against its view. */
async function settleAndCompare(): Promise<void> {
  await settleMetrics(store);
  await expectSettledEqualsViews(store, HOLDER_TABLES);
}

/** Stored holder count at the end of each day (day -> end) of sa on `chain`. */
async function ends(chain: number): Promise<Map<string, number>> {
  const rows = await store.query<{ day: string; end: string }>(
    `SELECT toString(day) AS day, toString(end) AS end FROM ${db}.metrics_holders_daily FINAL
     WHERE vault = 'sa' AND chain_id = ${chain} ORDER BY day`,
  );
  return new Map(rows.map((r) => [r.day, Number(r.end)]));
}

async function since(holder: string): Promise<number | undefined> {
  const [r] = await store.query<{ s: string }>(
    `SELECT toString(toUnixTimestamp(since)) AS s FROM ${db}.metrics_holder_since FINAL
     WHERE vault = 'sa' AND chain_id = 98866 AND holder = '${holder}'`,
  );
  return r ? Number(r.s) : undefined;
}

const dayOf = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

beforeAll(async () => {
  config = parseConfig({ dataDir: join(dir, 'data') });
  store = await createStore(config);
  db = config.store.database;
  await migrate(store, { database: db, cluster: '' });
  await store.insert('registry_raw', [registry('sa', [98866], '2026-01-01 00:00:00.000')]);
  await store.insert('rates_raw', [rate('sa', 98866, START + 60, 1_000_000)]);
  // Ten holders minted over the first ten days, one of them selling half to another on day 15.
  await store.insert('transfers_raw', [
    ...Array.from({ length: 10 }, (_, i) =>
      transfer(98866, START + i * DAY + 600, ZERO, H(i + 1), 1_000_000 * (i + 1)),
    ),
    transfer(98866, START + 15 * DAY + 600, H(1), H(11), 500_000),
  ]);
  await settleAndCompare();
}, 60_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the holder tables settled from the first changed day equal their views', () => {
  it('a transfer retracted 10 days back changes the counts from that day on, not before', async () => {
    const d = TODAY - 10 * DAY;
    const late = transfer(98866, d + 7200, H(2), H(12), 1_000_000);
    await store.insert('transfers_raw', [late]);
    await settleAndCompare();
    const before = await ends(98866);
    // H(2) sold half to H(12), a new holder from that day on; now the sale is retracted.
    await store.insert('transfers_raw', [retraction(late)]);
    await settleAndCompare();
    const after = await ends(98866);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [day, end] of after) {
      if (day < dayOf(d)) expect(end, day).toBe(before.get(day));
      else expect(end, day).toBe((before.get(day) ?? 0) - 1);
    }
    // And the counts are the exact numbers: 11 holders once H(12) is gone again.
    expect(after.get(dayOf(d))).toBe(11);
    expect(await since(H(12))).toBeUndefined();
  });

  it('a chain that arrives late adds holders to an old day (its first day counts its hours before as 0)', async () => {
    await store.insert('registry_raw', [registry('sa', [98866, 1], '2026-01-02 00:00:00.000')]);
    const first = START + 20 * DAY + 5 * 3600;
    await store.insert('transfers_raw', [
      transfer(1, first, ZERO, H(21), 3_000_000),
      transfer(1, first + 2 * DAY, ZERO, H(22), 3_000_000),
    ]);
    const main = await ends(98866);
    await settleAndCompare();
    const chain1 = await ends(1);
    expect(chain1.get(dayOf(first))).toBe(1);
    expect(chain1.get(dayOf(first + 2 * DAY))).toBe(2);
    expect(chain1.get(dayOf(first - DAY))).toBeUndefined();
    const [row] = await store.query<{ min: string; count: string }>(
      `SELECT toString(min) AS min, toString(count) AS count FROM ${db}.metrics_holders_daily FINAL
       WHERE vault = 'sa' AND chain_id = 1 AND day = toDate('${dayOf(first)}')`,
    );
    expect(row).toEqual({ min: '0', count: '24' });
    // The other chain's days did not move.
    expect(await ends(98866)).toEqual(main);
  });

  it('a retraction that removes the latest crossing of a holder gives back its first holderSince', async () => {
    // H(3) (minted on day 2) sells out on day 30 and buys again on day 32: holderSince day 32.
    const out = transfer(98866, START + 30 * DAY + 600, H(3), H(13), 3_000_000);
    const back = transfer(98866, START + 32 * DAY + 600, H(13), H(3), 1_000_000);
    await store.insert('transfers_raw', [out, back]);
    await settleAndCompare();
    expect(await since(H(3))).toBe(START + 32 * DAY + 600);
    // The sale on day 30 is retracted: H(3) never sold out, so holderSince is its mint of day 2,
    // which only the transfers before the changed day show.
    await store.insert('transfers_raw', [retraction(out)]);
    await settleAndCompare();
    expect(await since(H(3))).toBe(START + 2 * DAY + 600);
    const [top] = await store.query<{ s: string }>(
      `SELECT toString(toUnixTimestamp(since)) AS s FROM ${db}.metrics_top_holders FINAL
       WHERE vault = 'sa' AND chain_id = 98866 AND holder = '${H(3)}'`,
    );
    expect(Number(top.s)).toBe(START + 2 * DAY + 600);
  });

  it('a replay of transfers already stored changes nothing', async () => {
    const rows = [transfer(98866, TODAY - 3 * DAY, ZERO, H(14), 4_000_000)];
    await store.insert('transfers_raw', rows);
    await settleAndCompare();
    const once = await ends(98866);
    await store.insert('transfers_raw', rows);
    await settleAndCompare();
    expect(await ends(98866)).toEqual(once);
    expect(once.get(dayOf(TODAY - 3 * DAY))).toBe((once.get(dayOf(TODAY - 4 * DAY)) ?? 0) + 1);
  });

  it("a vault's first rate leaves its top holders as they were (the settle skips them on a rate)", async () => {
    await store.insert('registry_raw', [registry('sb', [98866], '2026-01-03 00:00:00.000')]);
    await store.insert('transfers_raw', [
      { ...mint('sb', 98866, START + DAY, H(31), 1_000_000), from_address: ZERO },
      { ...mint('sb', 98866, START + 2 * DAY, H(32), 2_000_000), from_address: ZERO },
    ]);
    await settleAndCompare();
    const top = async () =>
      (
        await store.query<{ r: string }>(
          `SELECT concat(holder, ':', toString(balance_raw), ':', toString(toUnixTimestamp(since))) AS r
           FROM ${db}.metrics_top_holders FINAL WHERE vault = 'sb' ORDER BY r`,
        )
      ).map((x) => x.r);
    const before = await top();
    expect(before).toEqual([`${H(31)}:1000000:${START + DAY}`, `${H(32)}:2000000:${START + 2 * DAY}`]);
    await store.insert('rates_raw', [rate('sb', 98866, TODAY - 600, 1_010_000)]);
    await settleAndCompare();
    expect(await top()).toEqual(before);
  });

  it('a settle cut short after the holder counts, then a restart: the next settle completes it', async () => {
    // H(15) buys on day 5: every holder table changes from day 5 on.
    await store.insert('transfers_raw', [transfer(98866, START + 5 * DAY + 900, ZERO, H(15), 9_000_000_000)]);
    // The settle stops (as the process would, killed) before it writes holderSince and the top holders.
    const crashing = new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== 'queryRaw') return typeof value === 'function' ? value.bind(target) : value;
        return (sql: string, opts?: object) => {
          if (sql.includes(`INTO ${db}.metrics_holder_since`)) throw new Error('killed mid-settle');
          return target.queryRaw(sql, opts as never);
        };
      },
    });
    await expect(settleMetrics(crashing)).rejects.toThrow('killed mid-settle');
    // H(1)..H(6) minted by day 5, and H(15): the counts were written, holderSince not.
    expect((await ends(98866)).get(dayOf(START + 5 * DAY))).toBe(7);
    expect(await since(H(15))).toBeUndefined();
    await store.close();
    store = await createStore(config);
    await settleAndCompare();
    expect(await since(H(15))).toBe(START + 5 * DAY + 900);
  });
});
