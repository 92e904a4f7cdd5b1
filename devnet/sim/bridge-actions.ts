/**
 * Cross-chain share moves of vault 0 through its share OFT adapter: `bridgeOut`
 * locks a holder's shares on one chain (OFTSent), and the destination chain's own
 * simulator task delivers them (OFTReceived) on a later day or tick.
 * The adapter's liquidity on the destination is topped up by a deployer deposit.
 */
import { type Hex, parseEventLogs } from 'viem';
import { boringVaultAbi, mockUsdcAbi, shareOftAbi, tellerVedaAbi } from '../abis.ts';
import { holderWithShares, ONE, part, type SimContext } from './context.ts';

/** LayerZero endpoint ids of the chains. */
export const LZ_EIDS: Record<number, number> = {
  98866: 30370,
  1: 30101,
  56: 30102,
  8453: 30184,
  9745: 30383,
  42161: 30110,
  480: 30319,
  43114: 30106,
};

/** A holder sends part of their vault-0 shares to themselves on another simulated chain. */
export async function bridgeOut(ctx: SimContext): Promise<void> {
  const v = ctx.vaults[0];
  const dst = ctx.chainIds.filter((id) => id !== ctx.chain.chainId && LZ_EIDS[id]);
  const who = holderWithShares(ctx, v);
  if (!who || !dst.length || !LZ_EIDS[ctx.chain.chainId]) return;
  const dstChainId = ctx.rng.pick(dst);
  const amount = part(
    ctx.truth.balanceOf(ctx.chain.chainId, v.addrs.share, who.address),
    ctx.rng.int(10, 50),
  );
  await ctx.chain.send(who, v.addrs.share, boringVaultAbi, 'approve', [ctx.addrs.oft, amount]);
  const to = `0x${who.address.slice(2).toLowerCase().padStart(64, '0')}` as Hex;
  const tx = await ctx.chain.send(who, ctx.addrs.oft, shareOftAbi, 'send', [LZ_EIDS[dstChainId], to, amount]);
  const [sent] = parseEventLogs({ abi: shareOftAbi, logs: (await tx.mined()).logs, eventName: 'OFTSent' });
  ctx.truth.move(ctx.chain.chainId, v.addrs.share, who.address, ctx.addrs.oft, amount);
  ctx.truth.bridges.push({
    guid: sent.args.guid,
    srcChainId: ctx.chain.chainId,
    dstChainId,
    user: who.address,
    amount: amount.toString(),
    sentAt: tx.timestamp,
  });
  ctx.truth.did('bridgeOut', tx.timestamp);
}

/** Delivers the shares sent to this chain before `ctx.deliverBefore` (OFTReceived from the adapter). */
export async function deliverBridged(ctx: SimContext): Promise<void> {
  const chainId = ctx.chain.chainId;
  const v = ctx.vaults[0];
  // In the order they were sent (time, then source chain): the same whatever the order the
  // chains' tasks booked them in.
  const due = ctx.truth.bridges
    .filter((b) => b.dstChainId === chainId && b.receivedAt === undefined && b.sentAt < ctx.deliverBefore)
    .sort((a, b) => a.sentAt - b.sentAt || a.srcChainId - b.srcChainId);
  for (const b of due) {
    const amount = BigInt(b.amount);
    const liquidity = ctx.truth.balanceOf(chainId, v.addrs.share, ctx.addrs.oft);
    if (liquidity < amount) await topUpAdapter(ctx, amount - liquidity);
    const tx = await ctx.chain.send(ctx.deployer, ctx.addrs.oft, shareOftAbi, 'lzReceive', [
      b.guid,
      LZ_EIDS[b.srcChainId],
      b.user,
      amount,
    ]);
    ctx.truth.move(chainId, v.addrs.share, ctx.addrs.oft, b.user, amount);
    b.receivedAt = tx.timestamp;
    ctx.truth.did('bridgeIn', tx.timestamp);
  }
}

/** The deployer deposits enough for `shares` through the Veda teller and hands them to the adapter. */
async function topUpAdapter(ctx: SimContext, shares: bigint): Promise<void> {
  const v = ctx.vaults[0];
  const assets = (shares * v.rate + ONE - 1n) / ONE;
  await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'mint', [ctx.deployer.address, assets]);
  await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'approve', [v.addrs.share, assets]);
  const tx = await ctx.chain.send(ctx.deployer, v.addrs.tellerVeda, tellerVedaAbi, 'deposit', [
    ctx.addrs.asset,
    assets,
    0n,
  ]);
  const minted = (assets * ONE) / v.rate;
  ctx.truth.move(ctx.chain.chainId, v.addrs.share, null, ctx.deployer.address, minted);
  await ctx.chain.send(ctx.deployer, v.addrs.share, boringVaultAbi, 'transfer', [ctx.addrs.oft, minted]);
  ctx.truth.move(ctx.chain.chainId, v.addrs.share, ctx.deployer.address, ctx.addrs.oft, minted);
  ctx.truth.did('depositVeda', tx.timestamp);
}
