/**
 * ERC-7540 redemptions as the standard defines them, against the contract's own views: the
 * devnet's NestVault stand-in on anvil, driven over four UTC days through additive requests,
 * partial fulfilments, an `updateRedeem` decrease and one to zero, claims by the controller
 * (by shares and by assets) and by its operator (the RedeemOperator, approved on the
 * registry), an instant redemption and an AtomicQueue request beside them. The real EVM
 * ingester publishes into the in-process bus, the stream processor stores into chDB and the
 * metrics are settled; then, for every controller, the pending shares, claimable shares and
 * claimable assets the views give at the head and at the end of every past day equal what
 * `pendingRedeemRequest`, `claimableRedeemRequest` and `maxWithdraw` answer at that block, and
 * the API's details (pendingRedemptions, their value, the shortfall) and recent transactions
 * follow them.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPublicClient,
  type Hex,
  http,
  maxUint256,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import type { Account } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, listen } from '../../api/server.ts';
import { type Config, parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import * as dv from '../../devnet/abis.ts';
import { type AnvilNode, anvilAccount, startAnvil } from '../../devnet/anvil.ts';
import { type DevnetAddresses, deployVaultSystem, MULTICALL3_ADDRESS } from '../../devnet/deploy.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { publishRegistry } from '../../ingest/registry.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { createStore, type Store } from '../../store/client.ts';
import { StreamProcessor } from '../../streams/processor.ts';
import { migrate } from '../../views/migrate.ts';
import { settleMetrics } from '../../views/settle.ts';
import { anvilRpc, localChain, openBus, sendTx, untilCaughtUp, usdcVault } from '../ingest/evm-support.ts';

const DAY = 86_400;
/** Day 0 of the run: four UTC days before today. */
const DAY0 = Math.floor(Date.now() / 1000 / DAY) * DAY - 4 * DAY;
const deployer = anvilAccount(0);
const [alice, bob, carol] = [anvilAccount(1), anvilAccount(2), anvilAccount(3)];
const CONTROLLERS = [alice, bob, carol];
const E6 = 1_000_000n;
const lc = (a: string) => a.toLowerCase();
const utcDay = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

const root = mkdtempSync(join(tmpdir(), 'vs-erc7540-'));
let node: AnvilNode;
let d: DevnetAddresses;
let v: DevnetAddresses['vaults'][number];
let pub: PublicClient;
let config: Config;
let store: Store;
let server: Server;
let api: string;
/** The last block of each scripted UTC day. */
const lastBlockOf = new Map<string, bigint>();
const receipts: { name: string; r: TransactionReceipt }[] = [];

async function send(
  name: string,
  who: Account,
  to: Hex,
  abi: readonly unknown[],
  fn: string,
  args: unknown[],
) {
  const r = await sendTx(node.rpcUrl, who, to, abi as never, fn, args).catch((err: Error) => {
    throw new Error(`${name}: ${err.message}`);
  });
  receipts.push({ name, r });
  const day = utcDay(Number((await pub.getBlock({ blockNumber: r.blockNumber })).timestamp));
  lastBlockOf.set(day, r.blockNumber);
  return r;
}

/** The following transactions are mined from `t` on (a block each, a second apart). */
const travel = (t: number) => anvilRpc(node.rpcUrl, 'evm_setNextBlockTimestamp', [t]);

/** The keeper fulfils `shares` of `who`'s pending request (the vault is topped up with their assets first). */
async function fulfil(who: Account, shares: bigint, rate: bigint) {
  await send('topUp', deployer, d.asset, dv.mockUsdcAbi, 'mint', [v.nestVault, (shares * rate) / E6]);
  await send(`fulfil ${who.address}`, deployer, v.nestVault, dv.nestVaultAbi, 'fulfillRedeem', [
    who.address,
    shares,
  ]);
}

const request = (who: Account, shares: bigint) =>
  send(`request ${who.address}`, who, v.nestVault, dv.nestVaultAbi, 'requestRedeem', [
    shares,
    who.address,
    who.address,
  ]);

/** The script: every ERC-7540 path over days 0..3 (day 4 is today, the head). */
async function drive() {
  // Two hours in: the accountant takes no rate within an hour of its deployment (it would pause).
  await travel(DAY0 + 7_200);
  await send('fee', deployer, v.nestVault, dv.nestVaultAbi, 'setFee', [2, { rate: 1_000, flat: 10_000n }]);
  await send('rate0', deployer, v.accountant, dv.accountantAbi, 'updateExchangeRate', [1_000_000n]);
  for (const who of CONTROLLERS) {
    await send('mint', deployer, d.asset, dv.mockUsdcAbi, 'mint', [who.address, 1_000n * E6]);
    await send('approveUsdc', who, d.asset, dv.mockUsdcAbi, 'approve', [v.nestVault, maxUint256]);
    await send('deposit', who, v.nestVault, dv.nestVaultAbi, 'deposit', [1_000n * E6, who.address]);
    await send('approveShare', who, v.share, dv.boringVaultAbi, 'approve', [v.nestVault, maxUint256]);
  }
  // Day 0: alice's two requests add up; bob requests; an AtomicQueue request of alice beside them.
  await request(alice, 100n * E6);
  await request(alice, 50n * E6);
  await request(bob, 80n * E6);
  await send('aqRequest', alice, v.queueVeda, dv.atomicQueueVedaAbi, 'updateAtomicRequest', [
    v.share,
    d.asset,
    { deadline: BigInt(DAY0 + 60 * DAY), atomicPrice: 990_000n, offerAmount: 5n * E6, inSolve: false },
  ]);
  // Day 1: a new rate; alice fulfilled in part and claims part of it; bob lowers his request, then is fulfilled.
  await travel(DAY0 + DAY + 3_600);
  await send('rate1', deployer, v.accountant, dv.accountantAbi, 'updateExchangeRate', [1_001_000n]);
  await fulfil(alice, 60n * E6, 1_001_000n);
  await send('aliceRedeem', alice, v.nestVault, dv.nestVaultAbi, 'redeem', [
    20n * E6,
    alice.address,
    alice.address,
  ]);
  await send('bobUpdate', bob, v.nestVault, dv.nestVaultAbi, 'updateRedeem', [
    30n * E6,
    bob.address,
    bob.address,
  ]);
  await fulfil(bob, 30n * E6, 1_001_000n);
  // Day 2: the operator claims what alice has claimable; she requests more (it adds up) and is
  // fulfilled in part again; bob withdraws part of his by assets; carol redeems instantly.
  await travel(DAY0 + 2 * DAY + 3_600);
  await send('approveOperator', alice, d.operatorRegistry, dv.operatorRegistryAbi, 'setOperator', [
    d.redeemOperator,
    true,
  ]);
  await send('operatorClaim', deployer, d.redeemOperator, dv.redeemOperatorAbi, 'redeem', [
    v.nestVault,
    alice.address,
    40n * E6,
  ]);
  await request(alice, 25n * E6);
  await fulfil(alice, 50n * E6, 1_001_000n);
  await send('bobWithdraw', bob, v.nestVault, dv.nestVaultAbi, 'withdraw', [
    12_345_678n,
    bob.address,
    bob.address,
  ]);
  await send('carolInstant', carol, v.nestVault, dv.nestVaultAbi, 'instantRedeem', [
    7n * E6,
    carol.address,
    carol.address,
  ]);
  // Day 3: alice takes her pending request to zero; carol requests twice and is fulfilled in part;
  // bob claims the rest of his.
  await travel(DAY0 + 3 * DAY + 3_600);
  await send('aliceCancel', alice, v.nestVault, dv.nestVaultAbi, 'updateRedeem', [
    0n,
    alice.address,
    alice.address,
  ]);
  await request(carol, 10n * E6);
  await request(carol, 5n * E6);
  await fulfil(carol, 4n * E6, 1_001_000n);
  const bobLeft = (await pub.readContract({
    address: v.nestVault,
    abi: dv.nestVaultAbi,
    functionName: 'claimableRedeemRequest',
    args: [0n, bob.address],
  })) as bigint;
  await send('bobRedeem', bob, v.nestVault, dv.nestVaultAbi, 'redeem', [bobLeft, bob.address, bob.address]);
}

/** The contract's own numbers of `controller` at `block`. */
async function onChain(controller: Hex, blockNumber?: bigint) {
  const read = async (functionName: string, args: unknown[]) =>
    String(
      await pub.readContract({
        address: v.nestVault,
        abi: dv.nestVaultAbi,
        functionName,
        args,
        blockNumber,
      } as never),
    );
  return {
    pending: await read('pendingRedeemRequest', [0n, controller]),
    claimableShares: await read('claimableRedeemRequest', [0n, controller]),
    claimableAssets: await read('maxWithdraw', [controller]),
  };
}

beforeAll(async () => {
  node = await startAnvil({ chainId: 31337, timestamp: DAY0 });
  pub = createPublicClient({ transport: http(node.rpcUrl) }) as PublicClient;
  d = await deployVaultSystem(node.rpcUrl, { vaults: 1 });
  [v] = d.vaults;
  await drive();
  config = parseConfig({
    dataDir: join(root, 'data'),
    chains: [
      localChain({
        name: 'devnet',
        rpcUrls: [node.rpcUrl],
        atomicQueues: [v.queueVeda],
        operatorRegistry: d.operatorRegistry,
        redeemOperator: d.redeemOperator,
        multicall3: MULTICALL3_ADDRESS,
      }),
    ],
    vaults: [usdcVault({ slug: 'n7540', name: 'ERC-7540 vault', ...v, teller: v.tellerVeda, usdc: d.asset })],
  });
  store = await createStore(config);
  await migrate(store, { database: config.store.database, cluster: config.store.cluster });
  const bus = await openBus(join(root, 'bus'));
  const codec = new EventCodec();
  await publishRegistry(config, bus, codec);
  const processor = new StreamProcessor({ bus, store, codec, config, log: silentLogger });
  await processor.start();
  const ingest = startEvmIngest({ config, bus, codec, log: silentLogger });
  await untilCaughtUp(ingest, Number(await pub.getBlockNumber()), 60_000, 'the ingester');
  await ingest.stop();
  await processor.drained();
  await processor.stop();
  await bus.close();
  await settleMetrics(store);
  server = await listen(
    createApp({ store, config, dataVersion: () => 1, ready: () => true }),
    '127.0.0.1',
    0,
  );
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 240_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await store?.close();
  await node?.stop();
  rmSync(root, { recursive: true, force: true });
});

const db = () => config.store.database;
const getJson = async (path: string) => {
  const res = await fetch(`${api}${path}`);
  expect(res.status, path).toBe(200);
  return (await res.json()) as { data: any };
};

describe('ERC-7540 redemptions against the NestVault views', () => {
  it('the script went through every path: additive requests, partial fills, decreases, claims by user and operator', async () => {
    const logs = await pub.getContractEvents({ address: v.nestVault, abi: dv.nestVaultAbi, fromBlock: 0n });
    const count = (name: string) => logs.filter((l) => l.eventName === name).length;
    expect([
      count('RedeemRequest'),
      count('RedeemFulfilled'),
      count('RedeemUpdated'),
      count('Withdraw'),
    ]).toEqual([6, 4, 2, 4]);
    const withdraws = logs.filter((l) => l.eventName === 'Withdraw') as unknown as {
      args: { caller: Hex };
    }[];
    expect(
      withdraws.some((l) => lc(l.args.caller) === lc(d.redeemOperator)),
      'an operator claim',
    ).toBe(true);
    // Something is left both pending and claimable at the head.
    expect((await onChain(carol.address)).pending).toBe(String(11n * E6));
    expect((await onChain(alice.address)).claimableShares).toBe(String(50n * E6));
  });

  it('each controller at the head: pending, claimable shares and assets equal the contract views', async () => {
    const rows = await store.query<{
      controller: string;
      pending: string;
      cs: string;
      ca: string;
      state: string;
    }>(
      `SELECT controller, toString(pending_shares) AS pending, toString(claimable_shares) AS cs,
         toString(claimable_assets) AS ca, state FROM ${db()}.erc7540_redemptions WHERE vault = 'n7540'`,
    );
    for (const c of CONTROLLERS) {
      const want = await onChain(c.address);
      const got = rows.find((r) => r.controller === lc(c.address));
      expect(
        { pending: got?.pending, claimableShares: got?.cs, claimableAssets: got?.ca },
        c.address,
      ).toEqual(want);
      expect(got?.state).toBe(
        want.pending !== '0' ? 'pending' : want.claimableShares !== '0' ? 'claimable' : 'done',
      );
    }
  });

  it('each controller at the end of every past day equals the contract views at that day’s last block', async () => {
    const rows = await store.query<{
      controller: string;
      day: string;
      pending: string;
      cs: string;
      ca: string;
    }>(
      `SELECT controller, toString(day) AS day, toString(pending_shares) AS pending,
         toString(claimable_shares) AS cs, toString(claimable_assets) AS ca
       FROM ${db()}.erc7540_redemptions_daily WHERE vault = 'n7540'`,
    );
    expect([...lastBlockOf.keys()].sort()).toEqual([0, 1, 2, 3].map((i) => utcDay(DAY0 + i * DAY)));
    let compared = 0;
    for (const [day, block] of lastBlockOf)
      for (const c of CONTROLLERS) {
        const want = await onChain(c.address, block);
        const got = rows.find((r) => r.controller === lc(c.address) && r.day === day);
        if (!got && want.pending === '0' && want.claimableShares === '0') continue; // before its first event
        expect(
          { pending: got?.pending, claimableShares: got?.cs, claimableAssets: got?.ca },
          `${c.address} ${day}`,
        ).toEqual(want);
        compared++;
      }
    // Every controller on every day from its first event on (carol's first is on day 3).
    expect(compared).toBe(9);
    // Today (no event since day 3) carries the last state on.
    const today = utcDay(Math.floor(Date.now() / 1000));
    for (const c of CONTROLLERS) {
      const got = rows.find((r) => r.controller === lc(c.address) && r.day === today);
      const want = await onChain(c.address);
      expect({ pending: got?.pending, claimableShares: got?.cs, claimableAssets: got?.ca }).toEqual(want);
    }
  });

  it('the pending value of every past day (pending_redemptions_daily) counts what was pending at that day’s end', async () => {
    const rows = await store.query<{ day: string; e18: string }>(
      `SELECT toString(day) AS day, toString(pending_redemptions_usd_e18) AS e18
       FROM ${db()}.pending_redemptions_daily WHERE vault = 'n7540'`,
    );
    // The current share price (the last rate, 1.001) in USD e18, the base asset at 1 USD.
    const shareUsdE18 = 1_001_000n * 10n ** 12n;
    for (const [day, block] of lastBlockOf) {
      let pending = 0n;
      for (const c of CONTROLLERS) pending += BigInt((await onChain(c.address, block)).pending);
      // The AtomicQueue request (open, long deadline) counts on every day.
      pending += 5n * E6;
      const row = rows.find((r) => r.day === day);
      expect(row?.e18, day).toBe(String((shareUsdE18 * pending) / E6));
    }
  });

  it('details: pendingRedemptions, their value and the shortfall follow the controllers pending now', async () => {
    const { data } = await getJson('/v1/vaults/details?status=all');
    const [vault] = data;
    let pending = 5n * E6; // the open AtomicQueue request
    for (const c of CONTROLLERS) pending += BigInt((await onChain(c.address)).pending);
    expect(vault.pendingRedemptions).toBe(Number(pending) / 1e6);
    expect(vault.pendingRedemptionsValue).toBeCloseTo((Number(pending) / 1e6) * 1.001, 9);
    expect(vault.shortfall).toBeCloseTo(Math.max(0, vault.pendingRedemptionsValue - vault.liquidFunds), 9);
  });

  it('recent transactions: each request (by its owner) and each claim (credited to its controller)', async () => {
    const { data } = await getJson('/v1/vaults/recent-transactions?status=all&limit=100');
    const rows = (data[0].recentTransactions as any[]).filter((r) =>
      ['REDEEM_REQUEST', 'WITHDRAW'].includes(r.transactionType),
    );
    const logs = (await pub.getContractEvents({
      address: v.nestVault,
      abi: dv.nestVaultAbi,
      fromBlock: 0n,
    })) as any[];
    const want = logs
      .filter((l) => l.eventName === 'RedeemRequest' || l.eventName === 'Withdraw')
      .map((l) =>
        l.eventName === 'RedeemRequest'
          ? {
              type: 'REDEEM_REQUEST',
              user: lc(l.args.owner),
              shares: Number(l.args.shares) / 1e6,
              tx: l.transactionHash,
            }
          : {
              type: 'WITHDRAW',
              user: lc(l.args.controller),
              shares: Number(l.args.shares) / 1e6,
              tx: l.transactionHash,
            },
      );
    // The AtomicQueue request is a REDEEM_REQUEST too.
    want.push({
      type: 'REDEEM_REQUEST',
      user: lc(alice.address),
      shares: 5,
      tx: (receipts.find((x) => x.name === 'aqRequest') as { r: TransactionReceipt }).r.transactionHash,
    });
    const got = rows.map((r) => ({
      type: r.transactionType,
      user: lc(r.user),
      shares: r.shares,
      tx: r.transactionHash,
    }));
    const key = (x: { tx: string; type: string }) => `${x.tx}|${x.type}`;
    expect(got.sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
      want.sort((a, b) => key(a).localeCompare(key(b))),
    );
  });
});
