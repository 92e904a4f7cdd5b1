/**
 * The ground truth as the deployed contracts themselves answer it: their own view functions
 * read at one block (a simulated day's last block, or the head), in one Multicall3 call per
 * chain. Per vault: the accountant's `getRate()` and `feesOwedInBase`, the NestVault's
 * `totalPendingShares()` and `claimableFees(f)`, and for every holder account (the only
 * controllers the simulator has) `pendingRedeemRequest(0, c)`, `claimableRedeemRequest(0, c)`
 * and `maxWithdraw(c)`. A misreading of the standard by the simulator's own bookkeeping shows
 * up against these.
 */
import type { ContractFunctionParameters } from 'viem';
import { accountantAbi, nestHubAccountantAbi, nestVaultAbi } from '../abis.ts';
import type { SimContext, VaultState } from './context.ts';
import type { ContractViewsTruth, VaultViewsTruth } from './truth-json.ts';

/** The NestVault fee ids read (instant redemption, deposit, redemption). */
const FEE_IDS = [0, 1, 2];

function vaultCalls(ctx: SimContext, v: VaultState): ContractFunctionParameters[] {
  const nest = (functionName: string, args: unknown[] = []) =>
    ({ address: v.addrs.nestVault, abi: nestVaultAbi, functionName, args }) as ContractFunctionParameters;
  const hub = v.spec.accountant === 'hub';
  return [
    { address: v.addrs.accountant, abi: accountantAbi, functionName: 'getRate' },
    hub
      ? { address: v.addrs.accountant, abi: nestHubAccountantAbi, functionName: 'getAccountantState' }
      : { address: v.addrs.accountant, abi: accountantAbi, functionName: 'accountantState' },
    nest('totalPendingShares'),
    ...FEE_IDS.map((f) => nest('claimableFees', [f])),
    ...ctx.holders.flatMap((h) => [
      nest('pendingRedeemRequest', [0n, h.address]),
      nest('claimableRedeemRequest', [0n, h.address]),
      nest('maxWithdraw', [h.address]),
    ]),
  ];
}

/** Reads every vault's views at the chain's latest block and books them (`day`: the UTC day it ends). */
export async function recordContractViews(ctx: SimContext, day?: string): Promise<void> {
  const calls = ctx.vaults.map((v) => vaultCalls(ctx, v));
  const { block, time, results } = await ctx.chain.readAll(ctx.addrs.multicall3, calls.flat());
  let i = 0;
  const next = () => results[i++];
  const vaults = ctx.vaults.map((v): VaultViewsTruth => {
    const rate = next() as bigint;
    const state = next();
    // The hub's state is a struct; the legacy accountant's getter returns its fields in order.
    const feesOwed =
      v.spec.accountant === 'hub'
        ? (state as { feesOwedInBase: bigint }).feesOwedInBase
        : ((state as readonly unknown[])[1] as bigint);
    const totalPendingShares = next() as bigint;
    const claimableFees = FEE_IDS.map(() => (next() as bigint).toString());
    const controllers: VaultViewsTruth['controllers'] = {};
    for (const h of ctx.holders) {
      const [pending, claimableShares, claimableAssets] = [next(), next(), next()] as bigint[];
      if (pending || claimableShares || claimableAssets)
        controllers[h.address] = {
          pending: pending.toString(),
          claimableShares: claimableShares.toString(),
          claimableAssets: claimableAssets.toString(),
        };
    }
    return {
      share: v.addrs.share,
      rate: rate.toString(),
      feesOwed: feesOwed.toString(),
      totalPendingShares: totalPendingShares.toString(),
      claimableFees,
      controllers,
    };
  });
  const views: ContractViewsTruth = { chainId: ctx.chain.chainId, block: block.toString(), vaults };
  ctx.truth.contractViews(day ? { ...views, day, time } : views);
}
