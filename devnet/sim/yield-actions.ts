/**
 * Yield assets on the devnet (composition, docs/architecture.md, Units and formulas compositionApy): each day the
 * assets' own accountants raise their rates (aggregator-priced ones also post the price to
 * their feed), and each vault's strategist moves funds through `BoringVault.manage`: buys a
 * yield asset with part of the vault's USDC at its teller, or sells part of one holding
 * (teller `bulkWithdraw` back to the vault) and buys another with the proceeds. Holdings
 * are booked from the simulator's own arithmetic (the tellers' `amount * 1e6 / rate` and
 * `shares * rate / 1e6`), prices as set.
 */
import { encodeFunctionData } from 'viem';
import { accountantAbi, boringVaultAbi, mockAggregatorAbi, mockUsdcAbi, tellerVedaAbi } from '../abis.ts';
import { AGGREGATOR_DECIMALS, YIELD_ASSETS, type YieldAssetAddresses } from '../deploy.ts';
import { ONE, type SimContext, type VaultState } from './context.ts';
import type { Rng } from './rng.ts';

const ZERO = '0x0000000000000000000000000000000000000000';

/** Books every yield asset's starting rate (read from its accountant) as of `at`. */
export async function setupYieldAssets(ctx: SimContext, at: number): Promise<void> {
  for (const y of ctx.addrs.yieldAssets) {
    const state = await ctx.chain.read<readonly unknown[]>(y.accountant, accountantAbi, 'accountantState');
    ctx.truth.yieldPrice(ctx.chain.chainId, y.slug, at, state[3] as bigint);
  }
}

/** Raises every yield asset's rate by a daily step drawn around its yearly drift (0.4x to 1.6x). */
export async function raiseYieldRates(ctx: SimContext, rng: Rng): Promise<void> {
  for (const [i, y] of ctx.addrs.yieldAssets.entries()) {
    const spec = YIELD_ASSETS[i];
    const old = ctx.truth.yieldRate(ctx.chain.chainId, y.slug);
    const stepPpb = BigInt(Math.round(((spec.aprBps * 1e5) / 365) * (0.4 + 1.2 * rng.next())));
    const rate = old + (old * stepPpb) / 1_000_000_000n;
    const tx = await ctx.chain.send(ctx.deployer, y.accountant, accountantAbi, 'updateExchangeRate', [rate]);
    if (y.aggregator !== ZERO)
      await ctx.chain.send(ctx.deployer, y.aggregator, mockAggregatorAbi, 'updateAnswer', [
        rate * 10n ** BigInt(AGGREGATOR_DECIMALS - 6),
      ]);
    ctx.truth.yieldPrice(ctx.chain.chainId, y.slug, tx.timestamp, rate);
    ctx.truth.did('yieldRateUpdate', tx.timestamp);
  }
}

const manage = (ctx: SimContext, v: VaultState, target: `0x${string}`, data: `0x${string}`) =>
  ctx.chain.send(ctx.deployer, v.addrs.share, boringVaultAbi, 'manage', [target, data, 0n]);

/** The vault buys yield asset `y` with `assets` of its USDC at the asset's teller. */
async function buy(ctx: SimContext, v: VaultState, y: YieldAssetAddresses, assets: bigint): Promise<void> {
  if (assets <= 0n) return;
  await manage(
    ctx,
    v,
    ctx.addrs.asset,
    encodeFunctionData({ abi: mockUsdcAbi, functionName: 'approve', args: [y.share, assets] }),
  );
  const tx = await manage(
    ctx,
    v,
    y.teller,
    encodeFunctionData({ abi: tellerVedaAbi, functionName: 'deposit', args: [ctx.addrs.asset, assets, 0n] }),
  );
  const shares = (assets * ONE) / ctx.truth.yieldRate(ctx.chain.chainId, y.slug);
  ctx.truth.moveYield(ctx.chain.chainId, v.addrs.share, y.slug, tx.timestamp, shares);
  ctx.truth.did('strategistBuy', tx.timestamp);
}

/** The vault sells `shares` of yield asset `y` back to USDC (the asset's vault is topped up first); returns the USDC. */
async function sell(ctx: SimContext, v: VaultState, y: YieldAssetAddresses, shares: bigint): Promise<bigint> {
  const assets = (shares * ctx.truth.yieldRate(ctx.chain.chainId, y.slug)) / ONE;
  await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'mint', [y.share, assets]);
  const tx = await manage(
    ctx,
    v,
    y.teller,
    encodeFunctionData({
      abi: tellerVedaAbi,
      functionName: 'bulkWithdraw',
      args: [ctx.addrs.asset, shares, 0n, v.addrs.share],
    }),
  );
  ctx.truth.moveYield(ctx.chain.chainId, v.addrs.share, y.slug, tx.timestamp, -shares);
  ctx.truth.did('strategistSell', tx.timestamp);
  return assets;
}

/**
 * One strategist move of vault `v`: with no yield holding yet (or 55% of the time) a buy of a
 * random asset with 10-40% of the vault's USDC (the treasury tops a vault with under 1,000 USDC
 * up to it first), else a rotation of 20-70% of one holding into another asset.
 */
export async function strategistMove(ctx: SimContext, v: VaultState, rng: Rng): Promise<void> {
  const assets = ctx.addrs.yieldAssets;
  if (!assets.length) return;
  const chainId = ctx.chain.chainId;
  const held = assets.filter((y) => ctx.truth.yieldHolding(chainId, v.addrs.share, y.slug) > 0n);
  if (!held.length || rng.chance(0.55)) {
    let usdc = await ctx.chain.read<bigint>(ctx.addrs.asset, mockUsdcAbi, 'balanceOf', [v.addrs.share]);
    if (usdc < 1_000n * ONE) {
      await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'mint', [
        v.addrs.share,
        1_000n * ONE - usdc,
      ]);
      usdc = 1_000n * ONE;
    }
    await buy(ctx, v, rng.pick(assets), (usdc * BigInt(rng.int(10, 40))) / 100n);
    return;
  }
  const from = rng.pick(held);
  const to = rng.pick(assets.filter((y) => y !== from));
  const shares = (ctx.truth.yieldHolding(chainId, v.addrs.share, from.slug) * BigInt(rng.int(20, 70))) / 100n;
  if (shares <= 0n) return;
  const proceeds = await sell(ctx, v, from, shares);
  if (to) await buy(ctx, v, to, proceeds);
}
