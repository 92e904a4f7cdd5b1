/**
 * The devnet's activity simulator (docs/architecture.md, Local chains): on every chain, a backfill of
 * whole UTC days written with time travel (each transaction stamped with its
 * simulated time), then live ticks on the node's clock, with one reorg on the
 * primary chain. Every chain gets its own seeded random stream, so a seed gives the
 * same history whatever the interleaving. The ground truth is written after the
 * backfill and after every live tick.
 */
import { existsSync } from 'node:fs';
import type { Logger } from '../core/log.ts';
import { silentLogger } from '../core/log.ts';
import { accountantAbi, boringVaultAbi, mockUsdcAbi, nestHubAccountantAbi, tellerVedaAbi } from './abis.ts';
import { anvilAccount } from './anvil.ts';
import type { DevnetAddresses, VaultSpec } from './deploy.ts';
import { bridgeOut, deliverBridged } from './sim/bridge-actions.ts';
import { SimChain } from './sim/chain.ts';
import { holderWithShares, part, type SimContext, type VaultState } from './sim/context.ts';
import { recordContractViews } from './sim/contract-views.ts';
import { nestDeposit, queueRequest, tellerDeposit, transfer } from './sim/holder-actions.ts';
import {
  claimFees,
  type HubAccountantState,
  mintFlow,
  operatorChange,
  roleChange,
  setupVault,
  solveRequests,
  updateRate,
} from './sim/keeper-actions.ts';
import {
  claimRedemptions,
  fulfillRedemptions,
  instantRedeem,
  nestRequestRedeem,
  nestUpdateRedeem,
} from './sim/nest-actions.ts';
import { Rng } from './sim/rng.ts';
import { GroundTruth, utcDay } from './sim/truth.ts';
import { raiseYieldRates, setupYieldAssets, strategistMove } from './sim/yield-actions.ts';
import type { SolanaSim } from './solana/sim.ts';

export interface SimulatorOptions {
  /** The chains, primary first (the mint flow and the reorg happen there). */
  chains: { chainId: number; rpcUrl: string }[];
  addresses: DevnetAddresses;
  specs: VaultSpec[];
  /** Whole UTC days before today to write; the nodes' latest block must be older than their start. */
  backfillDays: number;
  seed: number;
  /** Where the ground truth JSON goes. */
  truthFile: string;
  /** Live tick on which the primary chain reorgs (0 = never) and how long the orphaned blocks stay the head. */
  reorgAtTick?: number;
  reorgHoldMs?: number;
  /** When set, the orphaned blocks stay the head until this file exists (at most 600 s), not `reorgHoldMs`. */
  reorgReleaseFile?: string;
  /** Milliseconds since the epoch. */
  clock?: () => number;
  log?: Logger;
  /** Told as each backfill day is written on every chain (`day` of `days`, from 1). */
  onDay?: (day: number, days: number) => void;
  /** The Solana side: mint flows burn and mint there, and its holders trade the share. */
  solana?: SolanaSim;
  /**
   * Awaited at the end of each live tick, told the ticks so far: nothing is sent to the nodes
   * meanwhile (devnet/run.ts restarts them there, devnet/state-trim.ts).
   */
  afterTick?: (ticks: number) => Promise<void>;
}

export interface Simulator {
  readonly truth: GroundTruth;
  /** Writes the backfill days on every chain, then brings every chain to the clock's time. */
  backfill(): Promise<void>;
  /** One live round on every chain (the reorg happens on tick `reorgAtTick`). */
  tick(): Promise<void>;
  /**
   * Ticks every `intervalMs` until `stop()`, or until `maxTicks` ticks in all (0: no end); a
   * failed tick is logged and the next one runs.
   */
  startLive(intervalMs: number, maxTicks?: number): void;
  /** New connections to the nodes, restarted on the same URLs (call between ticks). */
  reconnect(): Promise<void>;
  stop(): Promise<void>;
}

const DAY = 86_400;
/** Holders are anvil accounts 1..9 (0 is the deployer, solver and keeper). */
const HOLDERS = Array.from({ length: 9 }, (_, i) => anvilAccount(i + 1));

type Action = (ctx: SimContext, v: VaultState) => Promise<unknown>;
const ACTIONS: [Action, number][] = [
  [tellerDeposit, 3],
  [nestDeposit, 2],
  [transfer, 3],
  [(c, v) => queueRequest(c, v, false), 1.5],
  [(c, v) => queueRequest(c, v, true), 0.7],
  [nestRequestRedeem, 1.2],
  [nestUpdateRedeem, 0.4],
  [instantRedeem, 0.7],
  [roleChange, 0.5],
  [(c) => operatorChange(c), 0.7],
  [(c) => bridgeOut(c), 0.8],
];
const PRIMARY_ACTIONS: [Action, number][] = [...ACTIONS, [(c) => mintFlow(c), 0.7]];

function pickAction(ctx: SimContext): Action {
  const table = ctx.primary ? PRIMARY_ACTIONS : ACTIONS;
  let r = ctx.rng.next() * table.reduce((s, [, w]) => s + w, 0);
  for (const [a, w] of table) {
    r -= w;
    if (r < 0) return a;
  }
  return table[0][0];
}

async function randomActions(ctx: SimContext, n: number, timeOf?: (i: number) => number): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (timeOf) ctx.chain.travelTo(timeOf(i));
    await pickAction(ctx)(ctx, ctx.rng.pick(ctx.vaults));
  }
}

/** One simulated UTC day on one chain starting at `day0` (Unix seconds). */
async function simulateDay(ctx: SimContext, day0: number, pauseToday: boolean): Promise<void> {
  ctx.deliverBefore = day0;
  const yieldRng = yieldRngs.get(ctx);
  ctx.chain.travelTo(day0 + 300);
  if (yieldRng) await raiseYieldRates(ctx, yieldRng);
  ctx.chain.travelTo(day0 + 600);
  for (const [i, v] of ctx.vaults.entries())
    await updateRate(ctx, v, pauseToday && i === 1 % ctx.vaults.length);
  const n = ctx.rng.int(6, 12);
  // In three blocks (01:00, 07:00, 13:00): a block costs the node about what a transaction
  // does, and every block is a state the node keeps (devnet/anvil.ts `keepStates`).
  await randomActions(ctx, n, (i) => day0 + 3_600 + Math.floor((i * 3) / n) * 6 * 3_600);
  if (ctx.solana) await solanaTransfers(ctx, day0 + 19 * 3_600);
  ctx.chain.travelTo(day0 + 20 * 3_600);
  await solveRequests(ctx, 0.6);
  await fulfillRedemptions(ctx, 0.7);
  ctx.chain.travelTo(day0 + 21 * 3_600);
  if (yieldRng) for (const v of ctx.vaults) await strategistMove(ctx, v, yieldRng);
  ctx.chain.travelTo(day0 + 22 * 3_600);
  await claimRedemptions(ctx, 0.6);
  await deliverBridged(ctx);
  if (Math.floor(day0 / DAY) % 7 === 6) for (const v of ctx.vaults) await claimFees(ctx, v);
  ctx.truth.expire(ctx.chain.chainId, day0 + DAY);
  // The day's last block is mined: the contracts' own numbers at the end of the day.
  await recordContractViews(ctx, utcDay(day0));
}

/** Transfers of the share between Solana holders (0-2, from the Solana side's own random stream). */
async function solanaTransfers(ctx: SimContext, at: number): Promise<void> {
  const done = (await ctx.solana?.activity(at)) ?? 0;
  for (let i = 0; i < done; i++) ctx.truth.did('solanaTransfer', at);
}

/** Each chain's random stream of the yield assets' rates and the strategist (apart from `ctx.rng`). */
const yieldRngs = new WeakMap<SimContext, Rng>();

/** Sends transactions that a reorg then discards (booked nowhere but in `reorgs`), and replaces them. */
/** Until `file` exists (checked every 100 ms, at most 600 s), or `holdMs` without one. */
async function hold(holdMs: number, file: string | undefined): Promise<void> {
  if (!file) return new Promise((r) => setTimeout(r, holdMs));
  const until = Date.now() + 600_000;
  while (!existsSync(file) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
}

async function reorg(
  ctx: SimContext,
  release: { holdMs: number; file?: string },
  log: Logger,
): Promise<void> {
  const id = await ctx.chain.snapshot();
  const fork = await ctx.chain.pub.getBlockNumber();
  const orphans = [];
  const v = ctx.vaults[0];
  const from = holderWithShares(ctx, v);
  if (from) {
    const to = HOLDERS.find((h) => h !== from) ?? from;
    const amount = part(ctx.truth.balanceOf(ctx.chain.chainId, v.addrs.share, from.address), 50);
    orphans.push(await ctx.chain.send(from, v.addrs.share, boringVaultAbi, 'transfer', [to.address, amount]));
  }
  const depositor = HOLDERS[0];
  orphans.push(
    await ctx.chain.send(depositor, ctx.addrs.asset, mockUsdcAbi, 'mint', [depositor.address, 1_000_000n]),
  );
  orphans.push(
    await ctx.chain.send(depositor, ctx.addrs.asset, mockUsdcAbi, 'approve', [v.addrs.share, 1_000_000n]),
  );
  orphans.push(
    await ctx.chain.send(depositor, v.addrs.tellerVeda, tellerVedaAbi, 'deposit', [
      ctx.addrs.asset,
      1_000_000n,
      0n,
    ]),
  );
  log.info(
    {
      chainId: ctx.chain.chainId,
      fork: fork.toString(),
      blocks: orphans.length,
      txs: orphans.map((o) => o.hash),
    },
    'devnet: blocks to be reorged out',
  );
  await hold(release.holdMs, release.file);
  await ctx.chain.revert(id);
  // The replacement chain is longer than the orphaned one, so followers switch to it.
  await randomActions(ctx, orphans.length + 2);
  await tellerDeposit(ctx, v);
  ctx.truth.reorgs.push({
    chainId: ctx.chain.chainId,
    forkBlock: fork.toString(),
    orphanedBlocks: await Promise.all(orphans.map(async (o) => (await o.mined()).blockHash)),
    orphanedTxs: orphans.map((o) => o.hash),
    at: ctx.chain.now(),
  });
  ctx.truth.did('reorg', ctx.chain.now());
}

/** Builds the per-chain contexts (reading each accountant's deployment-time state) and the simulator. */
export async function createSimulator(opts: SimulatorOptions): Promise<Simulator> {
  const clock = opts.clock ?? Date.now;
  const log = opts.log ?? silentLogger;
  const truth = new GroundTruth(
    opts.seed,
    opts.chains.map((c) => c.chainId),
    opts.addresses,
  );
  truth.solana = opts.solana;
  const contexts: SimContext[] = [];
  for (const [i, c] of opts.chains.entries()) {
    const chain = new SimChain(c.chainId, c.rpcUrl, clock);
    const vaults: VaultState[] = [];
    for (const [vi, spec] of opts.specs.entries()) {
      const addrs = opts.addresses.vaults[vi];
      if (spec.accountant === 'hub') {
        const h = await chain.read<HubAccountantState>(
          addrs.accountant,
          nestHubAccountantAbi,
          'getAccountantState',
        );
        vaults.push({
          spec,
          addrs,
          rate: h.exchangeRate,
          lastRateUpdate: Number(h.lastUpdateTimestamp),
          paused: h.isPaused,
        });
        continue;
      }
      const state = await chain.read<readonly unknown[]>(addrs.accountant, accountantAbi, 'accountantState');
      vaults.push({
        spec,
        addrs,
        rate: state[3] as bigint,
        lastRateUpdate: Number(state[6]),
        paused: state[7] as boolean,
      });
    }
    contexts.push({
      chain,
      primary: i === 0,
      deliverBefore: 0,
      chainIds: opts.chains.map((x) => x.chainId),
      addrs: opts.addresses,
      truth,
      rng: new Rng(opts.seed * 1_000_003 + c.chainId),
      deployer: anvilAccount(0),
      holders: HOLDERS,
      vaults,
      now: () => chain.now(),
      ...(i === 0 && opts.solana ? { solana: opts.solana } : {}),
    });
    yieldRngs.set(contexts[contexts.length - 1], new Rng(opts.seed * 7_919 + c.chainId * 13 + 5));
  }
  let ticks = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const tick = async () => {
    ticks++;
    const tickStart = Math.floor(clock() / 1000);
    await Promise.all(
      contexts.map(async (ctx) => {
        ctx.deliverBefore = tickStart;
        if (ctx.primary && ticks === opts.reorgAtTick)
          await reorg(ctx, { holdMs: opts.reorgHoldMs ?? 8_000, file: opts.reorgReleaseFile }, log);
        // The tick's transactions in one block (devnet/sim/chain.ts).
        await ctx.chain.startTick();
        for (const v of ctx.vaults) await updateRate(ctx, v);
        await randomActions(ctx, ctx.rng.int(1, 3));
        if (ctx.solana) await solanaTransfers(ctx, ctx.chain.now());
        await solveRequests(ctx, 0.3);
        await fulfillRedemptions(ctx, 0.3);
        await claimRedemptions(ctx, 0.6);
        await deliverBridged(ctx);
        ctx.truth.expire(ctx.chain.chainId, ctx.chain.now());
        await ctx.chain.endTick();
        await recordContractViews(ctx);
      }),
    );
    truth.write(opts.truthFile);
    await opts.afterTick?.(ticks);
  };

  return {
    truth,
    async backfill() {
      const today = Math.floor(clock() / 1000 / DAY) * DAY;
      const first = today - opts.backfillDays * DAY;
      const pauseDay = first + Math.floor((opts.backfillDays * 2) / 3) * DAY;
      await Promise.all(
        contexts.map(async (ctx) => {
          await ctx.chain.startHistory();
          ctx.chain.travelTo(first - 3_600);
          for (const v of ctx.vaults) await setupVault(ctx, v);
          await setupYieldAssets(ctx, ctx.now());
        }),
      );
      // Day by day on every chain at once: a chain starts a day once every chain has written the
      // previous one, so the bridges it delivers (sent before the day began) are the same
      // whatever the speed of each chain.
      for (let day0 = first, day = 1; day0 < today; day0 += DAY, day++) {
        await Promise.all(contexts.map((ctx) => simulateDay(ctx, day0, ctx.primary && day0 === pauseDay)));
        opts.onDay?.(day, opts.backfillDays);
      }
      await Promise.all(
        contexts.map(async (ctx) => {
          await ctx.chain.goLive(Math.floor(clock() / 1000));
          await recordContractViews(ctx);
        }),
      );
      truth.write(opts.truthFile);
      log.info({ days: opts.backfillDays, actions: truth.toJSON().actions }, 'devnet: backfill written');
    },
    tick,
    startLive(intervalMs, maxTicks = 0) {
      const loop = () => {
        if (stopped || (maxTicks > 0 && ticks >= maxTicks)) return;
        running = tick()
          .catch((err: unknown) => log.error({ err: String(err) }, 'devnet: simulator tick failed'))
          .finally(() => {
            if (!stopped) timer = setTimeout(loop, intervalMs);
          });
      };
      timer = setTimeout(loop, intervalMs);
    },
    async reconnect() {
      await Promise.all(contexts.map((ctx) => ctx.chain.reconnect()));
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await Promise.all(contexts.map((ctx) => ctx.chain.close()));
    },
  };
}
