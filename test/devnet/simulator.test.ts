/**
 * The simulator on three anvil chains, 45 backfilled days and a few live ticks with
 * a reorg: its ground truth (booked from its own arithmetic) is compared with the
 * chains' state and logs read independently (balanceOf, totalSupply, getLogs,
 * contract views), so a wrong book or a wrong contract shows up here.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, createPublicClient, getAbiItem, http, type PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import * as abis from '../../devnet/abis.ts';
import { anvilAccount } from '../../devnet/anvil.ts';
import { type Devnet, type DevnetProgress, startDevnet } from '../../devnet/run.ts';
import type { GroundTruthJson } from '../../devnet/sim/truth-json.ts';

const DAYS = 45;
let devnet: Devnet;
let truth: GroundTruthJson;
let dir: string;
const progress: DevnetProgress[] = [];
const clients = new Map<number, PublicClient>();
const client = (chainId: number) => clients.get(chainId) as PublicClient;
const day = (t: bigint | number) => new Date(Number(t) * 1000).toISOString().slice(0, 10);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vs-devnet-'));
  const settings = parseConfig({
    devnet: {
      enabled: true,
      backfillDays: DAYS,
      liveIntervalMs: 0,
      reorgAtTick: 2,
      reorgHoldSeconds: 1,
      seed: 7,
    },
  }).devnet;
  devnet = await startDevnet({ settings, dataDir: dir, onProgress: (p) => progress.push(p) });
  for (let i = 0; i < 4; i++) await devnet.simulator.tick();
  truth = JSON.parse(readFileSync(devnet.truthFile, 'utf8'));
  for (const c of devnet.chains)
    clients.set(c.chainId, createPublicClient({ transport: http(c.rpcUrls?.[0]) }) as PublicClient);
}, 600_000);

afterAll(async () => {
  await devnet?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('devnet simulator', () => {
  it('returns config entries that the service config accepts', () => {
    const cfg = parseConfig({ chains: devnet.chains, vaults: devnet.vaults });
    expect(cfg.chains.map((c) => c.chainId)).toEqual([98866, 1, 56]);
    expect(cfg.chains[0].operatorRegistry).toBe(devnet.addresses.operatorRegistry);
    expect(cfg.vaults.map((v) => v.vaultAddress)).toEqual(devnet.addresses.vaults.map((v) => v.share));
    expect(truth.chainIds).toEqual([98866, 1, 56]);
    // The simulator's reorg (4 blocks) is deeper than confirmations but well inside the kept window.
    expect(cfg.chains.map((c) => [c.confirmations, c.reorgWindow])).toEqual([
      [0, 64],
      [0, 64],
      [0, 64],
    ]);
  });

  it('reports each backfilled day as every chain completes it, then going live', () => {
    expect(progress).toEqual([
      ...Array.from({ length: DAYS }, (_, i) => ({ phase: 'backfill', day: i + 1, days: DAYS })),
      { phase: 'live', day: DAYS, days: DAYS },
    ]);
  });

  it('did every kind of activity, including a silent pause and a reorg', () => {
    for (const a of [
      'depositVeda',
      'depositNucleus',
      'depositNest',
      'transfer',
      'queueRequest',
      'queueSolve',
      'bulkWithdraw',
      'nestRequestRedeem',
      'nestRequestAdded',
      'nestUpdateRedeem',
      'nestFulfill',
      'nestFulfillPart',
      'nestClaim',
      'nestClaimByOperator',
      'nestWithdraw',
      'instantRedeem',
      'roleChange',
      'operatorChange',
      'mintFlow',
      'rateUpdate',
      'rateUpdatePausing',
      'accountantFeesClaimed',
      'reorg',
      'bridgeOut',
      'bridgeIn',
    ])
      expect(truth.actions[a], a).toBeGreaterThan(0);
    // Some fulfilled shares are left claimable at the end, and some requests pending.
    expect(truth.nestControllers.some((x) => x.claimableShares !== '0')).toBe(true);
    expect(truth.nestControllers.some((x) => x.pending !== '0')).toBe(true);
    expect(truth.atomicRequests.some((r) => r.state === 'expired')).toBe(true);
    expect(truth.atomicRequests.some((r) => r.state === 'fulfilled')).toBe(true);
    expect(truth.to - truth.from).toBeGreaterThanOrEqual(DAYS * 86_400 - 86_400);
  });

  it('books every balance and supply exactly as the chains hold them', async () => {
    const a = devnet.addresses;
    const accounts: Address[] = [
      ...Array.from({ length: 10 }, (_, i) => anvilAccount(i).address),
      a.composer,
      a.oft,
      ...a.vaults.map((v) => v.nestVault),
    ];
    for (const chainId of truth.chainIds) {
      for (const v of a.vaults) {
        const booked = truth.balances[chainId]?.[v.share] ?? {};
        for (const holder of new Set([...accounts, ...(Object.keys(booked) as Address[])])) {
          const onChain = await client(chainId).readContract({
            address: v.share,
            abi: abis.boringVaultAbi,
            functionName: 'balanceOf',
            args: [holder],
          });
          expect(onChain, `${chainId} ${v.share} ${holder}`).toBe(BigInt(booked[holder] ?? '0'));
        }
        const supply = await client(chainId).readContract({
          address: v.share,
          abi: abis.boringVaultAbi,
          functionName: 'totalSupply',
        });
        expect(supply).toBe(BigInt(truth.supply[chainId][v.share]));
      }
    }
    for (const v of a.vaults) expect(truth.holders[v.share].length).toBeGreaterThanOrEqual(3);
  });

  it('has a close price for every backfilled day, equal to the last ExchangeRateUpdated of the day on chain', async () => {
    const event = getAbiItem({ abi: abis.accountantAbi, name: 'ExchangeRateUpdated' });
    for (const chainId of truth.chainIds) {
      for (const v of devnet.addresses.vaults) {
        const logs = await client(chainId).getLogs({
          address: v.accountant,
          event,
          fromBlock: 0n,
          toBlock: 'latest',
        });
        const fromLogs: Record<string, string> = {};
        for (const l of logs) fromLogs[day(l.args.currentTime as bigint)] = String(l.args.newRate);
        expect(truth.closePrices[chainId][v.share]).toEqual(fromLogs);
        expect(Object.keys(fromLogs).length).toBeGreaterThanOrEqual(DAYS);
      }
    }
  });

  it('paused without a Paused event, and the unpause is on chain', async () => {
    expect(truth.pauses.length).toBeGreaterThanOrEqual(1);
    for (const p of truth.pauses) {
      const v = devnet.addresses.vaults.find(
        (x) => x.share === p.share,
      ) as (typeof devnet.addresses.vaults)[number];
      const c = client(p.chainId);
      const paused = await c.getLogs({
        address: v.accountant,
        event: getAbiItem({ abi: abis.accountantAbi, name: 'Paused' }),
        fromBlock: 0n,
      });
      const unpaused = await c.getLogs({
        address: v.accountant,
        event: getAbiItem({ abi: abis.accountantAbi, name: 'Unpaused' }),
        fromBlock: 0n,
      });
      expect(paused).toHaveLength(0);
      expect(unpaused.length).toBe(
        truth.pauses.filter((x) => x.share === p.share && x.chainId === p.chainId && x.unpausedAt).length,
      );
      expect(p.unpausedAt).toBeGreaterThan(p.at);
    }
  });

  it('leaves each user’s latest queue request in the booked state on chain', async () => {
    const latest = new Map<string, GroundTruthJson['atomicRequests'][number]>();
    for (const r of truth.atomicRequests) latest.set(`${r.chainId}|${r.queue}|${r.user}`, r);
    for (const r of latest.values()) {
      const onChain = await client(r.chainId).readContract({
        address: r.queue,
        abi: abis.atomicQueueVedaAbi,
        functionName: 'getUserAtomicRequest',
        args: [r.user, r.share, r.want],
      });
      expect(onChain.offerAmount).toBe(r.state === 'fulfilled' ? 0n : BigInt(r.amount));
      expect(onChain.deadline).toBe(BigInt(r.deadline));
      if (r.state === 'expired') expect(r.deadline).toBeLessThan(truth.to);
    }
  });

  it('books NestVault requests, fees, roles and operators as the contracts hold them', async () => {
    for (const chainId of truth.chainIds) {
      const c = client(chainId);
      for (const v of devnet.addresses.vaults) {
        // The simulator's book of every controller equals the NestVault's own views at the head.
        const head = truth.contractViews.head.find((h) => h.chainId === chainId);
        const views = head?.vaults.find((x) => x.share === v.share);
        expect(views, `${chainId} head views`).toBeDefined();
        const book = truth.nestControllers.filter(
          (x) => x.chainId === chainId && x.nestVault === v.nestVault,
        );
        for (const h of Array.from({ length: 9 }, (_, i) => anvilAccount(i + 1).address)) {
          const read = async (functionName: string, args: unknown[]) =>
            String(
              await c.readContract({
                address: v.nestVault,
                abi: abis.nestVaultAbi,
                functionName,
                args,
              } as never),
            );
          const onChain = {
            pending: await read('pendingRedeemRequest', [0n, h]),
            claimableShares: await read('claimableRedeemRequest', [0n, h]),
            claimableAssets: await read('maxWithdraw', [h]),
          };
          const b = book.find((x) => x.controller === h);
          const booked = {
            pending: b?.pending ?? '0',
            claimableShares: b?.claimableShares ?? '0',
            claimableAssets: b?.claimableAssets ?? '0',
          };
          expect(booked, `${chainId} ${v.nestVault} ${h} booked`).toEqual(onChain);
          const zero = { pending: '0', claimableShares: '0', claimableAssets: '0' };
          expect(views?.controllers[h] ?? zero, `${chainId} ${v.nestVault} ${h} head views`).toEqual(onChain);
        }
        expect(views?.totalPendingShares).toBe(book.reduce((s, x) => s + BigInt(x.pending), 0n).toString());
        // Each day's views equal the booked events replayed up to that day's end.
        const events = truth.nestEvents.filter((e) => e.chainId === chainId && e.nestVault === v.nestVault);
        const days = truth.contractViews.days.filter((d) => d.chainId === chainId);
        expect(days.map((d) => d.day)).toHaveLength(DAYS);
        for (const d of days) {
          const state = new Map<
            string,
            { pending: bigint; claimableShares: bigint; claimableAssets: bigint }
          >();
          for (const e of events.filter((x) => x.at <= (d.time as number))) {
            const st = state.get(e.controller) ?? { pending: 0n, claimableShares: 0n, claimableAssets: 0n };
            const [n, assets] = [BigInt(e.shares), BigInt(e.assets ?? '0')];
            if (e.kind === 'request') st.pending += n;
            else if (e.kind === 'decrease') st.pending -= n;
            else if (e.kind === 'fulfil')
              Object.assign(st, {
                pending: st.pending - n,
                claimableShares: st.claimableShares + n,
                claimableAssets: st.claimableAssets + assets,
              });
            else
              Object.assign(st, {
                claimableShares: st.claimableShares - n,
                claimableAssets: st.claimableAssets - assets,
              });
            state.set(e.controller, st);
          }
          const replayed = Object.fromEntries(
            [...state]
              .filter(([, x]) => x.pending || x.claimableShares || x.claimableAssets)
              .map(([k, x]) => [
                k,
                {
                  pending: String(x.pending),
                  claimableShares: String(x.claimableShares),
                  claimableAssets: String(x.claimableAssets),
                },
              ]),
          );
          const dayViews = d.vaults.find((x) => x.share === v.share);
          expect(dayViews?.controllers, `${chainId} ${v.nestVault} ${d.day}`).toEqual(replayed);
          // The day's rate is the last one the simulator set on or before it.
          const set = Object.entries(truth.closePrices[chainId][v.share]).filter(
            ([day]) => day <= (d.day as string),
          );
          expect(dayViews?.rate, `${chainId} ${v.share} ${d.day} rate`).toBe(set.at(-1)?.[1]);
        }
        for (const [kind, id] of [
          ['instantRedemption', 0],
          ['deposit', 1],
          ['redemption', 2],
        ] as const) {
          const booked = truth.fees
            .filter((f) => f.chainId === chainId && f.share === v.share && f.kind === kind)
            .reduce((s, f) => s + BigInt(f.amount), 0n);
          if (kind === 'instantRedemption') {
            // Nest pays the instant-redemption fee to the share at once: nothing becomes claimable.
            const logs = await c.getLogs({
              address: v.nestVault,
              event: getAbiItem({ abi: abis.nestVaultAbi, name: 'InstantRedeem' }),
              fromBlock: 0n,
            });
            expect(
              logs.reduce((s, l) => s + (l.args.assets as bigint) - (l.args.postFeeAmount as bigint), 0n),
            ).toBe(booked);
            expect(booked, `${chainId} instant-redemption fees booked`).toBeGreaterThan(0n);
          }
          const claimable = await c.readContract({
            address: v.nestVault,
            abi: abis.nestVaultAbi,
            functionName: 'claimableFees',
            args: [id],
          });
          const claimed = await c.getLogs({
            address: v.nestVault,
            event: getAbiItem({ abi: abis.nestVaultAbi, name: 'FeeClaimed' }),
            args: { f: id },
            fromBlock: 0n,
          });
          expect(
            claimable + claimed.reduce((s, l) => s + (l.args.amount as bigint), 0n),
            `${chainId} ${kind}`,
          ).toBe(kind === 'instantRedemption' ? 0n : booked);
        }
        const feeLogs = await c.getLogs({
          address: v.accountant,
          event: getAbiItem({ abi: abis.accountantAbi, name: 'FeesClaimed' }),
          fromBlock: 0n,
        });
        const bookedClaims = truth.fees.filter(
          (f) => f.chainId === chainId && f.share === v.share && f.kind === 'accountantClaimed',
        );
        expect(bookedClaims.map((f) => f.amount)).toEqual(feeLogs.map((l) => String(l.args.amount)));
      }
      for (const r of truth.roles.filter((x) => x.chainId === chainId))
        expect(
          await c.readContract({
            address: r.authority,
            abi: abis.rolesAuthorityAbi,
            functionName: 'doesUserHaveRole',
            args: [r.user, r.role],
          }),
        ).toBe(r.enabled);
      for (const o of truth.operators.filter((x) => x.chainId === chainId))
        expect(
          await c.readContract({
            address: devnet.addresses.operatorRegistry,
            abi: abis.operatorRegistryAbi,
            functionName: 'isOperator',
            args: [o.controller, o.operator],
          }),
        ).toBe(o.enabled);
    }
  });

  it('moves shares between chains: every booked bridge has its OFTSent, and its OFTReceived once delivered', async () => {
    const a = devnet.addresses;
    const sentEvent = getAbiItem({ abi: abis.shareOftAbi, name: 'OFTSent' });
    const receivedEvent = getAbiItem({ abi: abis.shareOftAbi, name: 'OFTReceived' });
    expect(truth.bridges.filter((b) => b.receivedAt).length).toBeGreaterThan(0);
    for (const b of truth.bridges) {
      const [sent] = await client(b.srcChainId).getLogs({
        address: a.oft,
        event: sentEvent,
        args: { guid: b.guid },
        fromBlock: 0n,
      });
      expect(sent.args).toMatchObject({ fromAddress: b.user, amountSentLD: BigInt(b.amount) });
      const received = await client(b.dstChainId).getLogs({
        address: a.oft,
        event: receivedEvent,
        args: { guid: b.guid },
        fromBlock: 0n,
      });
      if (b.receivedAt === undefined) expect(received).toHaveLength(0);
      else {
        expect(received).toHaveLength(1);
        expect(received[0].args).toMatchObject({ toAddress: b.user, amountReceivedLD: BigInt(b.amount) });
        // Never before the send; the same second is possible: live ticks deliver what was sent
        // before the tick began, stamped by the other chain's node clock (whole seconds).
        expect(b.receivedAt).toBeGreaterThanOrEqual(b.sentAt);
      }
    }
  });

  it('reorged the primary chain: the orphaned transactions and blocks are gone', async () => {
    expect(truth.reorgs).toHaveLength(1);
    const [r] = truth.reorgs;
    expect(r.chainId).toBe(98866);
    const c = client(98866);
    for (const hash of r.orphanedTxs) await expect(c.getTransactionReceipt({ hash })).rejects.toThrow();
    const canonical = await c.getBlock({ blockNumber: BigInt(r.forkBlock) + 1n });
    expect(r.orphanedBlocks).not.toContain(canonical.hash);
    expect(await c.getBlockNumber()).toBeGreaterThan(BigInt(r.forkBlock) + BigInt(r.orphanedBlocks.length));
  });

  it('keeps going live on the node clock until stopped, rewriting the ground truth', async () => {
    const before = Object.values(devnet.simulator.truth.toJSON().actions).reduce((a, b) => a + b, 0);
    const head = await client(1).getBlock();
    devnet.simulator.startLive(20);
    await vi.waitFor(
      () =>
        expect(
          Object.values(devnet.simulator.truth.toJSON().actions).reduce((a, b) => a + b, 0),
          'live activity',
        ).not.toBe(before),
      { timeout: 30_000 },
    );
    await devnet.simulator.stop();
    const after = JSON.parse(readFileSync(devnet.truthFile, 'utf8')) as GroundTruthJson;
    expect(Object.values(after.actions).reduce((a, b) => a + b, 0)).toBeGreaterThan(before);
    const latest = await client(1).getBlock();
    expect(latest.number).toBeGreaterThan(head.number);
    // Live blocks carry wall-clock time, not simulated time.
    expect(Math.abs(Number(latest.timestamp) - Date.now() / 1000)).toBeLessThan(120);
  });
});
