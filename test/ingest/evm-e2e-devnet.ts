/**
 * The devnet run of the EVM end-to-end test: the project's contracts deployed on
 * anvil (`devnet/deploy.ts`) and driven through deposits (both teller families), a
 * share transfer, NestVault request/fill/claim, rate updates (one out of bounds:
 * paused without an event), a fee claim, a role grant and AtomicQueue requests on
 * both queue variants (one cancelled, one solved). Every receipt is kept by name so
 * the test can derive what the ingester must publish.
 */
import { type Abi, type Hex, maxUint256, type TransactionReceipt } from 'viem';
import type { Account } from 'viem/accounts';
import * as dv from '../../devnet/abis.ts';
import { anvilAccount } from '../../devnet/anvil.ts';
import { type DevnetAddresses, deployVaultSystem } from '../../devnet/deploy.ts';
import { anvilRpc, sendTx } from './evm-support.ts';

const deployer = anvilAccount(0);
/** The depositor and requester of every user action of the run. */
export const alice = anvilAccount(1);
const bob = anvilAccount(2);

export interface DevnetRun {
  d: DevnetAddresses;
  /** The receipt of every transaction, by the name the run gave it. */
  receipts: Record<string, TransactionReceipt>;
}

/** Deploys two vaults on the node at `rpcUrl` and sends the run's transactions, each required to succeed. */
export async function driveDevnet(rpcUrl: string): Promise<DevnetRun> {
  const receipts: Record<string, TransactionReceipt> = {};
  const send = async (
    name: string,
    who: Account,
    address: Hex,
    abi: Abi,
    functionName: string,
    args: unknown[],
  ) => {
    const r = await sendTx(rpcUrl, who, address, abi, functionName, args).catch((err: Error) => {
      throw new Error(`${name}: ${err.message}`);
    });
    receipts[name] = r;
    return r;
  };
  const later = (s: number) => anvilRpc(rpcUrl, 'evm_increaseTime', [s]);

  const d = await deployVaultSystem(rpcUrl, { vaults: 2 });
  const [v0, v1] = d.vaults;
  await send('mint', deployer, d.asset, dv.mockUsdcAbi, 'mint', [alice.address, 1_000_000_000n]);
  await send('mintSolver', deployer, d.asset, dv.mockUsdcAbi, 'mint', [deployer.address, 1_000_000_000n]);
  for (const spender of [v0.share, v1.share, v0.nestVault])
    await send(`approve-${spender}`, alice, d.asset, dv.mockUsdcAbi, 'approve', [spender, maxUint256]);
  await send('depositVeda', alice, v0.tellerVeda, dv.tellerVedaAbi, 'deposit', [d.asset, 100_000_000n, 0n]);
  await send('depositNucleus', alice, v1.tellerNucleus, dv.tellerNucleusAbi, 'deposit', [
    d.asset,
    50_000_000n,
    0n,
  ]);
  await send('transfer', alice, v0.share, dv.boringVaultAbi, 'transfer', [bob.address, 10_000_000n]);
  await send('nestDeposit', alice, v0.nestVault, dv.nestVaultAbi, 'deposit', [30_000_000n, alice.address]);
  await send('approveNest', alice, v0.share, dv.boringVaultAbi, 'approve', [v0.nestVault, maxUint256]);
  await send('nestRequest', alice, v0.nestVault, dv.nestVaultAbi, 'requestRedeem', [
    10_000_000n,
    alice.address,
    alice.address,
  ]);
  await send('nestFulfill', deployer, v0.nestVault, dv.nestVaultAbi, 'fulfillRedeem', [
    alice.address,
    10_000_000n,
  ]);
  await send('nestClaim', alice, v0.nestVault, dv.nestVaultAbi, 'redeem', [
    10_000_000n,
    alice.address,
    alice.address,
  ]);
  await later(3_601);
  await send('rate1', deployer, v0.accountant, dv.accountantAbi, 'updateExchangeRate', [1_001_000n]);
  await later(7_200);
  await send('rate2', deployer, v0.accountant, dv.accountantAbi, 'updateExchangeRate', [1_002_000n]);
  await send('claim', deployer, v0.accountant, dv.accountantAbi, 'claimFees', [d.asset]);
  await later(3_601);
  await send('ratePaused', deployer, v0.accountant, dv.accountantAbi, 'updateExchangeRate', [2_000_000n]);
  await send('role', deployer, v0.authority, dv.rolesAuthorityAbi, 'setUserRole', [bob.address, 4, true]);
  const deadline = BigInt(Math.floor(Date.now() / 1000) + 30 * 86_400);
  const req = (amount: bigint) => ({
    deadline,
    atomicPrice: 1_000_500n,
    offerAmount: amount,
    inSolve: false,
  });
  await send('request', alice, v0.queueVeda, dv.atomicQueueVedaAbi, 'updateAtomicRequest', [
    v0.share,
    d.asset,
    req(20_000_000n),
  ]);
  await send('request1', alice, v0.queueNucleus, dv.atomicQueueNucleusAbi, 'updateAtomicRequest', [
    v1.share,
    d.asset,
    req(5_000_000n),
  ]);
  await send('cancel1', alice, v0.queueNucleus, dv.atomicQueueNucleusAbi, 'updateAtomicRequest', [
    v1.share,
    d.asset,
    req(0n),
  ]);
  await send('approveQueue', alice, v0.share, dv.boringVaultAbi, 'approve', [v0.queueVeda, maxUint256]);
  await send('approveSolver', deployer, d.asset, dv.mockUsdcAbi, 'approve', [v0.queueVeda, maxUint256]);
  await send('solve', deployer, v0.queueVeda, dv.atomicQueueVedaAbi, 'solve', [
    v0.share,
    d.asset,
    [alice.address],
    '0x',
    deployer.address,
  ]);
  return { d, receipts };
}
