/**
 * Simulator actions on the NestVaults (ERC-7540 redemptions, as Nest's NestVaultRedeemLogic
 * runs them): a holder's requests add up into one pending amount per controller, the keeper
 * fulfils all or part of it (the shares become claimable with their assets less the
 * redemption fee), a controller lowers what is pending (`updateRedeem`), and claims take all or
 * part of what is claimable (`redeem` or `withdraw`), by the controller or through the
 * RedeemOperator when the controller approved it; instant redemptions pay at once. Each books
 * its effect in the ground truth (balances, the controller's state, the event) from the
 * simulator's own arithmetic; devnet/sim/contract-views.ts reads the contracts' own numbers.
 */
import type { Address } from 'viem';
import type { HDAccount } from 'viem/accounts';
import { boringVaultAbi, mockUsdcAbi, nestVaultAbi, redeemOperatorAbi } from '../abis.ts';
import type { SentTx } from './chain.ts';
import { feeOf, holderWithShares, ONE, part, type SimContext, type VaultState } from './context.ts';
import type { NestEventTruth } from './truth-json.ts';

function booked(
  ctx: SimContext,
  nestVault: Address,
  e: Omit<NestEventTruth, 'chainId' | 'nestVault' | 'shares' | 'assets' | 'at'>,
  tx: SentTx,
  shares: bigint,
  assets?: bigint,
): void {
  ctx.truth.nestEvents.push({
    chainId: ctx.chain.chainId,
    nestVault,
    ...e,
    shares: shares.toString(),
    ...(assets === undefined ? {} : { assets: assets.toString() }),
    at: tx.timestamp,
  });
}

/** An ERC-7540 request: the shares move into the NestVault's escrow, added to the holder's pending shares. */
export async function nestRequestRedeem(ctx: SimContext, v: VaultState): Promise<void> {
  const who = holderWithShares(ctx, v);
  if (!who) return;
  const chainId = ctx.chain.chainId;
  const shares = part(ctx.truth.balanceOf(chainId, v.addrs.share, who.address), ctx.rng.int(10, 30));
  await ctx.chain.send(who, v.addrs.share, boringVaultAbi, 'approve', [v.addrs.nestVault, shares]);
  const tx = await ctx.chain.send(who, v.addrs.nestVault, nestVaultAbi, 'requestRedeem', [
    shares,
    who.address,
    who.address,
  ]);
  ctx.truth.move(chainId, v.addrs.share, who.address, v.addrs.nestVault, shares);
  const state = ctx.truth.nestState(chainId, v.addrs.nestVault, who.address);
  ctx.truth.did(state.pending > 0n ? 'nestRequestAdded' : 'nestRequestRedeem', tx.timestamp);
  state.pending += shares;
  booked(ctx, v.addrs.nestVault, { kind: 'request', controller: who.address, by: who.address }, tx, shares);
}

/** A controller lowers its pending request (`updateRedeem`, sometimes to 0): the difference comes back to it. */
export async function nestUpdateRedeem(ctx: SimContext, v: VaultState): Promise<void> {
  const chainId = ctx.chain.chainId;
  const open = ctx.truth.nestControllersOf(chainId, v.addrs.nestVault).filter((s) => s.pending > 0n);
  if (!open.length) return;
  const s = ctx.rng.pick(open);
  const who = holderOf(ctx, s.controller);
  const newShares = ctx.rng.chance(0.25) ? 0n : (s.pending * BigInt(ctx.rng.int(20, 80))) / 100n;
  if (newShares === s.pending) return;
  const tx = await ctx.chain.send(who, v.addrs.nestVault, nestVaultAbi, 'updateRedeem', [
    newShares,
    who.address,
    who.address,
  ]);
  const returned = s.pending - newShares;
  ctx.truth.move(chainId, v.addrs.share, v.addrs.nestVault, who.address, returned);
  s.pending = newShares;
  booked(
    ctx,
    v.addrs.nestVault,
    { kind: 'decrease', controller: who.address, by: who.address },
    tx,
    returned,
  );
  ctx.truth.did('nestUpdateRedeem', tx.timestamp);
}

/**
 * The keeper fulfils each pending request with probability `p`: all of it, or (half the time)
 * part of it; the escrowed shares are burnt and their assets less the redemption fee become
 * claimable (the vault is topped up with the assets first).
 */
export async function fulfillRedemptions(ctx: SimContext, p: number): Promise<void> {
  const chainId = ctx.chain.chainId;
  for (const v of ctx.vaults)
    for (const s of ctx.truth.nestControllersOf(chainId, v.addrs.nestVault)) {
      if (s.pending === 0n || !ctx.rng.chance(p)) continue;
      let shares = ctx.rng.chance(0.5) ? s.pending : part(s.pending, ctx.rng.int(30, 80));
      // The contract refuses a fulfilment that pays nothing after the fee.
      if ((shares * v.rate) / ONE <= feeOf('redemption', (shares * v.rate) / ONE)) shares = s.pending;
      const assets = (shares * v.rate) / ONE;
      const fee = feeOf('redemption', assets);
      if (assets <= fee) continue;
      await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'mint', [v.addrs.nestVault, assets]);
      const tx = await ctx.chain.send(ctx.deployer, v.addrs.nestVault, nestVaultAbi, 'fulfillRedeem', [
        s.controller,
        shares,
      ]);
      ctx.truth.move(chainId, v.addrs.share, v.addrs.nestVault, null, shares);
      ctx.truth.fee(chainId, v.addrs.share, tx.timestamp, 'redemption', fee);
      ctx.truth.did(shares === s.pending ? 'nestFulfill' : 'nestFulfillPart', tx.timestamp);
      s.pending -= shares;
      s.claimableShares += shares;
      s.claimableAssets += assets - fee;
      const by = ctx.deployer.address;
      booked(
        ctx,
        v.addrs.nestVault,
        { kind: 'fulfil', controller: s.controller, by },
        tx,
        shares,
        assets - fee,
      );
    }
}

/**
 * Claims of what is claimable, each with probability `p` (the rest stays claimable): all of it
 * or part, by shares (`redeem`) or, now and then, by assets (`withdraw`); through the
 * RedeemOperator (which redeems by shares) when the controller approved it on the registry,
 * else by the controller. The shares and assets paid follow the contract's pro-rata rule.
 */
export async function claimRedemptions(ctx: SimContext, p: number): Promise<void> {
  const chainId = ctx.chain.chainId;
  for (const v of ctx.vaults)
    for (const s of ctx.truth.nestControllersOf(chainId, v.addrs.nestVault)) {
      if (s.claimableShares === 0n || !ctx.rng.chance(p)) continue;
      const viaOperator = ctx.truth.isOperator(chainId, s.controller, ctx.addrs.redeemOperator);
      const whole = ctx.rng.chance(0.5);
      const byAssets = !viaOperator && !whole && ctx.rng.chance(0.3);
      let shares = whole ? s.claimableShares : part(s.claimableShares, ctx.rng.int(20, 70));
      let assets =
        shares === s.claimableShares ? s.claimableAssets : (shares * s.claimableAssets) / s.claimableShares;
      if (byAssets) {
        assets = part(s.claimableAssets, ctx.rng.int(20, 70));
        shares =
          assets === s.claimableAssets ? s.claimableShares : (assets * s.claimableShares) / s.claimableAssets;
      }
      // The contract refuses a part that pays (or stands for) nothing: claim it all instead.
      const all = assets === 0n || shares === 0n;
      if (all) [shares, assets] = [s.claimableShares, s.claimableAssets];
      const who = holderOf(ctx, s.controller);
      let tx: SentTx;
      if (viaOperator)
        tx = await ctx.chain.send(ctx.deployer, ctx.addrs.redeemOperator, redeemOperatorAbi, 'redeem', [
          v.addrs.nestVault,
          s.controller,
          shares,
        ]);
      else if (byAssets && !all)
        tx = await ctx.chain.send(who, v.addrs.nestVault, nestVaultAbi, 'withdraw', [
          assets,
          who.address,
          who.address,
        ]);
      else
        tx = await ctx.chain.send(who, v.addrs.nestVault, nestVaultAbi, 'redeem', [
          shares,
          who.address,
          who.address,
        ]);
      s.claimableShares -= shares;
      s.claimableAssets -= assets;
      const by = viaOperator ? ctx.addrs.redeemOperator : s.controller;
      booked(ctx, v.addrs.nestVault, { kind: 'claim', controller: s.controller, by }, tx, shares, assets);
      ctx.truth.did(
        viaOperator ? 'nestClaimByOperator' : byAssets ? 'nestWithdraw' : 'nestClaim',
        tx.timestamp,
      );
    }
}

/**
 * An instant redemption, as Nest's NestVault does it: the shares go into the vault and are burnt,
 * their value less the instant-redemption fee is paid at once and the fee goes to the share (the
 * vault is topped up with the assets first).
 */
export async function instantRedeem(ctx: SimContext, v: VaultState): Promise<void> {
  const who = holderWithShares(ctx, v);
  if (!who) return;
  const chainId = ctx.chain.chainId;
  const shares = part(ctx.truth.balanceOf(chainId, v.addrs.share, who.address), ctx.rng.int(5, 20));
  const assets = (shares * v.rate) / ONE;
  if (assets <= feeOf('instantRedemption', assets)) return;
  await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'mint', [v.addrs.nestVault, assets]);
  await ctx.chain.send(who, v.addrs.share, boringVaultAbi, 'approve', [v.addrs.nestVault, shares]);
  const tx = await ctx.chain.send(who, v.addrs.nestVault, nestVaultAbi, 'instantRedeem', [
    shares,
    who.address,
    who.address,
  ]);
  ctx.truth.move(chainId, v.addrs.share, who.address, v.addrs.nestVault, shares);
  ctx.truth.move(chainId, v.addrs.share, v.addrs.nestVault, null, shares);
  ctx.truth.fee(
    chainId,
    v.addrs.share,
    tx.timestamp,
    'instantRedemption',
    feeOf('instantRedemption', assets),
  );
  ctx.truth.did('instantRedeem', tx.timestamp);
}

function holderOf(ctx: SimContext, address: Address): HDAccount {
  const h = ctx.holders.find((x) => x.address === address);
  if (!h) throw new Error(`devnet: no holder account ${address}`);
  return h;
}
