/**
 * Simulator actions of vault holders: deposits (both teller families and the
 * NestVault), transfers and atomic-queue requests (the ERC-7540 ones are in
 * devnet/sim/nest-actions.ts). Each books its effect in the ground truth from the
 * simulator's own arithmetic (the contracts' formulas on the rate it set).
 */
import type { Address } from 'viem';
import type { HDAccount } from 'viem/accounts';
import {
  atomicQueueNucleusAbi,
  atomicQueueVedaAbi,
  boringVaultAbi,
  mockUsdcAbi,
  nestVaultAbi,
  tellerNucleusAbi,
  tellerVedaAbi,
} from '../abis.ts';
import { feeOf, holderWithShares, ONE, part, type SimContext, type VaultState } from './context.ts';

/** Mints `amount` USDC to `who` and approves `spender` for it. */
async function fundAsset(ctx: SimContext, who: HDAccount, amount: bigint, spender: Address): Promise<void> {
  await ctx.chain.send(who, ctx.addrs.asset, mockUsdcAbi, 'mint', [who.address, amount]);
  await ctx.chain.send(who, ctx.addrs.asset, mockUsdcAbi, 'approve', [spender, amount]);
}

const randomAssets = (ctx: SimContext) =>
  BigInt(ctx.rng.int(100, 50_000)) * ONE + BigInt(ctx.rng.int(0, 999_999));

/** A deposit through the Veda or the Nucleus teller: shares = assets * 1e6 / rate. */
export async function tellerDeposit(ctx: SimContext, v: VaultState): Promise<void> {
  const who = ctx.rng.pick(ctx.holders);
  const assets = randomAssets(ctx);
  const veda = ctx.rng.chance(0.5);
  await fundAsset(ctx, who, assets, v.addrs.share);
  const tx = veda
    ? await ctx.chain.send(who, v.addrs.tellerVeda, tellerVedaAbi, 'deposit', [ctx.addrs.asset, assets, 0n])
    : await ctx.chain.send(who, v.addrs.tellerNucleus, tellerNucleusAbi, 'deposit', [
        ctx.addrs.asset,
        assets,
        0n,
      ]);
  ctx.truth.move(ctx.chain.chainId, v.addrs.share, null, who.address, (assets * ONE) / v.rate);
  ctx.truth.did(veda ? 'depositVeda' : 'depositNucleus', tx.timestamp);
}

/** A NestVault deposit: the deposit fee is taken in assets, shares = (assets - fee) * 1e6 / rate. */
export async function nestDeposit(ctx: SimContext, v: VaultState): Promise<void> {
  const who = ctx.rng.pick(ctx.holders);
  const assets = randomAssets(ctx);
  await fundAsset(ctx, who, assets, v.addrs.nestVault);
  const tx = await ctx.chain.send(who, v.addrs.nestVault, nestVaultAbi, 'deposit', [assets, who.address]);
  const fee = feeOf('deposit', assets);
  ctx.truth.move(ctx.chain.chainId, v.addrs.share, null, who.address, ((assets - fee) * ONE) / v.rate);
  ctx.truth.fee(ctx.chain.chainId, v.addrs.share, tx.timestamp, 'deposit', fee);
  ctx.truth.did('depositNest', tx.timestamp);
}

/** Part of a holder's shares to another holder. */
export async function transfer(ctx: SimContext, v: VaultState): Promise<void> {
  const from = holderWithShares(ctx, v);
  if (!from) return;
  const to = ctx.rng.pick(ctx.holders.filter((h) => h !== from));
  const amount = part(
    ctx.truth.balanceOf(ctx.chain.chainId, v.addrs.share, from.address),
    ctx.rng.int(1, 60),
  );
  const tx = await ctx.chain.send(from, v.addrs.share, boringVaultAbi, 'transfer', [to.address, amount]);
  ctx.truth.move(ctx.chain.chainId, v.addrs.share, from.address, to.address, amount);
  ctx.truth.did('transfer', tx.timestamp);
}

/**
 * An AtomicQueue request for shares -> USDC at 99% of the rate. `shortDeadline`
 * requests (2 h) are the ones the solver is meant to miss, so they expire.
 */
export async function queueRequest(ctx: SimContext, v: VaultState, shortDeadline: boolean): Promise<void> {
  const who = holderWithShares(ctx, v);
  if (!who) return;
  const chainId = ctx.chain.chainId;
  // One open request per (user, queue): updating it would overwrite the booked one.
  const veda = ctx.rng.chance(0.5);
  const queue = veda ? v.addrs.queueVeda : v.addrs.queueNucleus;
  if (
    ctx.truth.atomicRequests.some(
      (r) => r.queue === queue && r.chainId === chainId && r.user === who.address && r.state === 'open',
    )
  )
    return;
  const amount = part(ctx.truth.balanceOf(chainId, v.addrs.share, who.address), ctx.rng.int(10, 40));
  const deadline = ctx.now() + (shortDeadline ? 7_200 : 3 * 86_400);
  const atomicPrice = (v.rate * 99n) / 100n;
  await ctx.chain.send(who, v.addrs.share, boringVaultAbi, 'approve', [queue, amount]);
  const request = { deadline: BigInt(deadline), atomicPrice, offerAmount: amount, inSolve: false };
  const abi = veda ? atomicQueueVedaAbi : atomicQueueNucleusAbi;
  const tx = await ctx.chain.send(who, queue, abi, 'updateAtomicRequest', [
    v.addrs.share,
    ctx.addrs.asset,
    request,
  ]);
  ctx.truth.atomicRequests.push({
    chainId,
    share: v.addrs.share,
    queue,
    family: veda ? 'veda' : 'nucleus',
    user: who.address,
    want: ctx.addrs.asset,
    amount: amount.toString(),
    atomicPrice: atomicPrice.toString(),
    deadline,
    requestedAt: tx.timestamp,
    state: 'open',
  });
  ctx.truth.did('queueRequest', tx.timestamp);
}
