/**
 * Simulator actions of the operators: the queue solver, rate updates (one of which
 * pauses), fee claims, role and operator changes, the mint flow, and the one-off setup
 * after deployment (the NestVault keeper and the RedeemOperator are in
 * devnet/sim/nest-actions.ts).
 */
import { type Hex, parseEventLogs } from 'viem';
import {
  accountantAbi,
  atomicQueueNucleusAbi,
  atomicQueueVedaAbi,
  mockUsdcAbi,
  nestHubAccountantAbi,
  nestVaultAbi,
  operatorRegistryAbi,
  relayerAbi,
  rolesAuthorityAbi,
  shareOftAbi,
  tellerVedaAbi,
} from '../abis.ts';
import { addressHex } from '../solana/ledger.ts';
import type { SentTx } from './chain.ts';
import { FEE, FEE_RATES, feeOf, ONE, type SimContext, type VaultState } from './context.ts';

/** Role ids the simulator grants and revokes (the Nest numbering). */
const ROLES = [1, 2, 4, 5, 6, 11, 14];
/** Solana's LayerZero endpoint id: where the mint flow sends shares. */
const SOLANA_EID = 30168;

/** Sets the NestVault fees and grants the deployer its roles: SetFee and UserRoleUpdated history from day one. */
export async function setupVault(ctx: SimContext, v: VaultState): Promise<void> {
  for (const [kind, id] of Object.entries(FEE) as [keyof typeof FEE, number][])
    await ctx.chain.send(ctx.deployer, v.addrs.nestVault, nestVaultAbi, 'setFee', [id, FEE_RATES[kind]]);
  for (const role of [0, 4, 5]) {
    const tx = await ctx.chain.send(ctx.deployer, v.addrs.authority, rolesAuthorityAbi, 'setUserRole', [
      ctx.deployer.address,
      role,
      true,
    ]);
    ctx.truth.role({
      chainId: ctx.chain.chainId,
      share: v.addrs.share,
      authority: v.addrs.authority,
      user: ctx.deployer.address,
      role,
      enabled: true,
    });
    ctx.truth.did('roleChange', tx.timestamp);
  }
}

/**
 * The daily rate update (+0 to +0.04%), or with `pause` a +10% jump that the
 * accountant takes but pauses on (no Paused event). A paused accountant is
 * unpaused first. Skipped within the minimum delay, which would pause it.
 */
export async function updateRate(ctx: SimContext, v: VaultState, pause = false): Promise<void> {
  if (ctx.now() < v.lastRateUpdate + v.spec.minimumUpdateDelaySeconds + 1) return;
  if (v.spec.accountant === 'hub') return updateHubRate(ctx, v);
  if (v.paused) {
    const tx = await ctx.chain.send(ctx.deployer, v.addrs.accountant, accountantAbi, 'unpause');
    v.paused = false;
    const open = ctx.truth.pauses.find(
      (p) => p.chainId === ctx.chain.chainId && p.share === v.addrs.share && !p.unpausedAt,
    );
    if (open) open.unpausedAt = tx.timestamp;
  }
  const rate = pause ? (v.rate * 110n) / 100n : v.rate + (v.rate * BigInt(ctx.rng.int(0, 40))) / 100_000n;
  const tx = await ctx.chain.send(ctx.deployer, v.addrs.accountant, accountantAbi, 'updateExchangeRate', [
    rate,
  ]);
  v.rate = rate;
  v.lastRateUpdate = tx.timestamp;
  ctx.truth.rate(ctx.chain.chainId, v.addrs.share, tx.timestamp, rate);
  if (pause) {
    v.paused = true;
    ctx.truth.pauses.push({
      chainId: ctx.chain.chainId,
      share: v.addrs.share,
      at: tx.timestamp,
      rate: rate.toString(),
    });
  }
  ctx.truth.did(pause ? 'rateUpdatePausing' : 'rateUpdate', tx.timestamp);
}

/** What the simulator mirrors of a NestHubAccountant's state (read once from the chain, then booked). */
interface HubState {
  lastGross: bigint;
  hwm: bigint;
  hwmAt: bigint;
  totalSharesLastUpdate: bigint;
  managementFee: bigint;
  performanceFee: bigint;
  hurdleRate: bigint;
}
const hubStates = new WeakMap<VaultState, HubState>();
const YEAR = 365n * 86_400n;

/** The hub accountant state `getAccountantState()` as viem decodes it. */
export type HubAccountantState = {
  feesOwedInBase: bigint;
  exchangeRate: bigint;
  lastUpdateTimestamp: bigint;
  isPaused: boolean;
  managementFee: number;
  highWaterMark: bigint;
  lastGrossRate: bigint;
  totalSharesLastUpdate: bigint;
  hwmLastUpdateTimestamp: bigint;
};

/**
 * The daily update of a hub accountant: the gross rate moves like the legacy one (+0 to +0.04%),
 * `totalShareSupply` is this chain's supply (each chain's hub stands alone on the devnet), and the
 * simulator computes the fees and the net rate as NestHubAccountant does, booking the management and
 * the performance fee as `accountantManagement` and `accountantPerformance` and the net rate as the
 * vault's rate.
 */
async function updateHubRate(ctx: SimContext, v: VaultState): Promise<void> {
  let h = hubStates.get(v);
  if (!h) {
    const s = await ctx.chain.read<HubAccountantState>(
      v.addrs.accountant,
      nestHubAccountantAbi,
      'getAccountantState',
    );
    const perf = await ctx.chain.read<readonly number[]>(
      v.addrs.accountant,
      nestHubAccountantAbi,
      'performanceFeeConfig',
    );
    h = {
      lastGross: s.lastGrossRate,
      hwm: s.highWaterMark,
      hwmAt: s.hwmLastUpdateTimestamp,
      totalSharesLastUpdate: s.totalSharesLastUpdate,
      managementFee: BigInt(s.managementFee),
      performanceFee: BigInt(perf[0]),
      hurdleRate: BigInt(perf[1]),
    };
    hubStates.set(v, h);
  }
  const gross = h.lastGross + (h.lastGross * BigInt(ctx.rng.int(0, 40))) / 100_000n;
  const supply = ctx.truth.supplyOf(ctx.chain.chainId, v.addrs.share);
  const tx = await ctx.chain.send(
    ctx.deployer,
    v.addrs.accountant,
    nestHubAccountantAbi,
    'updateExchangeRate',
    [gross, supply],
  );
  const at = BigInt(tx.timestamp);
  let management = 0n;
  let postManagement = gross;
  if (supply > 0n) {
    const basis = gross < h.lastGross ? gross : h.lastGross;
    const discount = (basis * h.managementFee * (at - BigInt(v.lastRateUpdate))) / (1_000_000n * YEAR);
    // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers)
    const shareBasis = h.totalSharesLastUpdate < supply ? h.totalSharesLastUpdate : supply;
    const haircut = (discount * shareBasis) / supply;
    postManagement = gross > haircut ? gross - haircut : 0n;
    management = (haircut * supply) / ONE;
  }
  let performance = 0n;
  let net = postManagement;
  const hurdleHwm = h.hwm + (h.hurdleRate * h.hwm * (at - h.hwmAt)) / (1_000_000n * YEAR);
  if (h.performanceFee > 0n && gross > hurdleHwm) {
    performance = ((((gross - hurdleHwm) * supply) / ONE) * h.performanceFee) / 1_000_000n;
    h.hwm = gross;
    h.hwmAt = at;
    if (performance > 0n && supply > 0n) {
      const perShare = (performance * ONE) / supply;
      net = postManagement > perShare ? postManagement - perShare : 0n;
    } else performance = 0n;
  }
  h.lastGross = gross;
  h.totalSharesLastUpdate = supply;
  v.rate = net;
  v.lastRateUpdate = tx.timestamp;
  ctx.truth.rate(ctx.chain.chainId, v.addrs.share, tx.timestamp, net);
  ctx.truth.fee(ctx.chain.chainId, v.addrs.share, tx.timestamp, 'accountantManagement', management);
  ctx.truth.fee(ctx.chain.chainId, v.addrs.share, tx.timestamp, 'accountantPerformance', performance);
  ctx.truth.did('rateUpdate', tx.timestamp);
}

/** Solves each open, unexpired request with probability `p` (the rest wait, and may expire). */
export async function solveRequests(ctx: SimContext, p: number): Promise<void> {
  const chainId = ctx.chain.chainId;
  for (const r of ctx.truth.atomicRequests) {
    if (r.chainId !== chainId || r.state !== 'open' || r.deadline <= ctx.now() + 60 || !ctx.rng.chance(p))
      continue;
    const amount = BigInt(r.amount);
    // A holder who moved shares away since the request cannot be filled: it stays open and expires.
    if (ctx.truth.balanceOf(chainId, r.share, r.user) < amount) continue;
    const want = (BigInt(r.atomicPrice) * amount) / ONE;
    await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'mint', [ctx.deployer.address, want]);
    await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'approve', [r.queue, want]);
    const abi = r.family === 'veda' ? atomicQueueVedaAbi : atomicQueueNucleusAbi;
    const tx = await ctx.chain.send(ctx.deployer, r.queue, abi, 'solve', [
      r.share,
      r.want,
      [r.user],
      '0x',
      ctx.deployer.address,
    ]);
    ctx.truth.move(chainId, r.share, r.user, ctx.deployer.address, amount);
    Object.assign(r, { state: 'fulfilled', fulfilledAt: tx.timestamp, wantReceived: want.toString() });
    ctx.truth.did('queueSolve', tx.timestamp);
    await redeemSolverShares(ctx, r.share, amount);
  }
}

/** The solver redeems what it bought through the teller's bulkWithdraw (BulkWithdraw + Exit), topping the vault up first. */
async function redeemSolverShares(ctx: SimContext, share: `0x${string}`, shares: bigint): Promise<void> {
  const v = ctx.vaults.find((x) => x.addrs.share === share);
  if (!v) return;
  const assets = (shares * v.rate) / ONE;
  await ctx.chain.send(ctx.deployer, ctx.addrs.asset, mockUsdcAbi, 'mint', [share, assets]);
  const tx = await ctx.chain.send(ctx.deployer, v.addrs.tellerVeda, tellerVedaAbi, 'bulkWithdraw', [
    ctx.addrs.asset,
    shares,
    0n,
    ctx.deployer.address,
  ]);
  ctx.truth.move(ctx.chain.chainId, share, ctx.deployer.address, null, shares);
  ctx.truth.did('bulkWithdraw', tx.timestamp);
}

/** Claims the accountant's fees owed (amount as the chain accrued it, from the FeesClaimed log) and the NestVault's fees. */
export async function claimFees(ctx: SimContext, v: VaultState): Promise<void> {
  const owed =
    v.spec.accountant === 'hub'
      ? (
          await ctx.chain.read<HubAccountantState>(
            v.addrs.accountant,
            nestHubAccountantAbi,
            'getAccountantState',
          )
        ).feesOwedInBase
      : ((
          await ctx.chain.read<readonly unknown[]>(v.addrs.accountant, accountantAbi, 'accountantState')
        )[1] as bigint);
  if (owed > 0n) {
    const tx = await ctx.chain.send(ctx.deployer, v.addrs.accountant, accountantAbi, 'claimFees', [
      ctx.addrs.asset,
    ]);
    ctx.truth.fee(ctx.chain.chainId, v.addrs.share, tx.timestamp, 'accountantClaimed', owed);
    ctx.truth.did('accountantFeesClaimed', tx.timestamp);
  }
  for (const id of Object.values(FEE)) {
    const owed = await ctx.chain.read<bigint>(v.addrs.nestVault, nestVaultAbi, 'claimableFees', [id]);
    if (owed === 0n) continue;
    const tx = await ctx.chain.send(ctx.deployer, v.addrs.nestVault, nestVaultAbi, 'claimFees', [
      id,
      ctx.deployer.address,
    ]);
    ctx.truth.did('nestFeesClaimed', tx.timestamp);
  }
}

/** Grants or revokes (the opposite of the current state) a random role of a random holder. */
export async function roleChange(ctx: SimContext, v: VaultState): Promise<void> {
  const user = ctx.rng.pick(ctx.holders).address;
  const role = ctx.rng.pick(ROLES);
  const has = await ctx.chain.read<boolean>(v.addrs.authority, rolesAuthorityAbi, 'doesUserHaveRole', [
    user,
    role,
  ]);
  const tx = await ctx.chain.send(ctx.deployer, v.addrs.authority, rolesAuthorityAbi, 'setUserRole', [
    user,
    role,
    !has,
  ]);
  ctx.truth.role({
    chainId: ctx.chain.chainId,
    share: v.addrs.share,
    authority: v.addrs.authority,
    user,
    role,
    enabled: !has,
  });
  ctx.truth.did('roleChange', tx.timestamp);
}

/** A holder flips the RedeemOperator's approval on the registry (auto-claim on or off). */
export async function operatorChange(ctx: SimContext): Promise<void> {
  const who = ctx.rng.pick(ctx.holders);
  const operator = ctx.addrs.redeemOperator;
  const enabled = !ctx.truth.isOperator(ctx.chain.chainId, who.address, operator);
  const tx = await ctx.chain.send(who, ctx.addrs.operatorRegistry, operatorRegistryAbi, 'setOperator', [
    operator,
    enabled,
  ]);
  ctx.truth.operator({ chainId: ctx.chain.chainId, controller: who.address, operator, enabled });
  ctx.truth.did('operatorChange', tx.timestamp);
}

/** The Solana -> primary chain mint flow on vault 0: relay, composer deposit, OFT send (or, one in four, a refund). */
export async function mintFlow(ctx: SimContext): Promise<SentTx> {
  const v = ctx.vaults[0];
  const nonce = `0x${ctx.rng
    .int(1, 2 ** 31)
    .toString(16)
    .padStart(64, '0')}` as Hex;
  const recipient = `0x${ctx.rng
    .int(1, 2 ** 31)
    .toString(16)
    .padStart(64, '7')}` as Hex;
  const assets = BigInt(ctx.rng.int(10, 5_000)) * ONE;
  // Every fourth flow from the second on is refunded: a short history has one too.
  const refund = (ctx.truth.count('mintFlow') + ctx.truth.count('mintFlowRefunded')) % 4 === 1;
  // With a Solana side, the flow starts there: the wallet burns the USDC and is the shares' recipient.
  const burn = await ctx.solana?.burn(ctx.now(), assets, ctx.addrs.composer, ctx.addrs.relayer);
  const tx = await ctx.chain.send(ctx.deployer, ctx.addrs.relayer, relayerAbi, 'relay', [
    nonce,
    assets,
    SOLANA_EID,
    burn ? addressHex(burn.wallet.address) : recipient,
    refund,
  ]);
  let shares: bigint | undefined;
  if (!refund) {
    const fee = feeOf('deposit', assets);
    shares = ((assets - fee) * ONE) / v.rate;
    ctx.truth.move(ctx.chain.chainId, v.addrs.share, null, ctx.addrs.composer, shares);
    ctx.truth.move(ctx.chain.chainId, v.addrs.share, ctx.addrs.composer, ctx.addrs.oft, shares);
    ctx.truth.fee(ctx.chain.chainId, v.addrs.share, tx.timestamp, 'deposit', fee);
  }
  if (burn && ctx.solana) {
    const [sent] = parseEventLogs({ abi: shareOftAbi, logs: (await tx.mined()).logs, eventName: 'OFTSent' });
    await ctx.solana.settle(burn, {
      nonce,
      relayTx: tx.hash,
      at: tx.timestamp,
      refunded: refund,
      guid: sent?.args.guid,
      shares: sent?.args.amountReceivedLD,
    });
  }
  ctx.truth.did(refund ? 'mintFlowRefunded' : 'mintFlow', tx.timestamp);
  return tx;
}
