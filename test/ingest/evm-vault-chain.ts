/**
 * A real anvil with the devnet's contracts (one vault, `v0`) and the real pipeline (in-process
 * bus, consumers, chDB views) configured to ingest it: the chain tests that compare what is
 * stored with the chain's own logs and balances start from here.
 */
import { maxUint256 } from 'viem';
import type { Account } from 'viem/accounts';
import * as dv from '../../devnet/abis.ts';
import { type AnvilNode, anvilAccount, startAnvil } from '../../devnet/anvil.ts';
import { type DevnetAddresses, deployVaultSystem } from '../../devnet/deploy.ts';
import { type Pipeline, startPipeline } from '../support/standins/pipeline.ts';
import { localChain, sendTx, usdcVault } from './evm-support.ts';

export interface VaultChain {
  node: AnvilNode;
  d: DevnetAddresses;
  pipe: Pipeline;
}

/** Starts anvil (chain 31337, as `localChain` and `usdcVault` say), deploys one vault, and a pipeline whose chain is `localChain` with `chain` applied. */
export async function startVaultChain(chain: Record<string, unknown>): Promise<VaultChain> {
  const node = await startAnvil({ chainId: 31337 });
  try {
    const d = await deployVaultSystem(node.rpcUrl, { vaults: 1 });
    const v = d.vaults[0];
    const pipe = await startPipeline({
      config: {
        chains: [
          localChain({
            name: 'devnet',
            rpcUrls: [node.rpcUrl],
            maxBlockRange: 1000,
            atomicQueues: [v.queueVeda, v.queueNucleus],
            ...chain,
          }),
        ],
        vaults: [usdcVault({ slug: 'v0', name: 'v0', ...v, teller: v.tellerVeda, usdc: d.asset })],
      },
    });
    return { node, d, pipe };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

/** Mints `minted` of the asset to `holder`, approves the vault, and deposits `deposited` through its Veda teller. */
export async function depositIntoVault(
  { node, d }: VaultChain,
  holder: Account,
  minted: bigint,
  deposited: bigint,
): Promise<void> {
  const url = node.rpcUrl;
  const v = d.vaults[0];
  await sendTx(url, anvilAccount(0), d.asset, dv.mockUsdcAbi as never, 'mint', [holder.address, minted]);
  await sendTx(url, holder, d.asset, dv.mockUsdcAbi as never, 'approve', [v.share, maxUint256]);
  await sendTx(url, holder, v.tellerVeda, dv.tellerVedaAbi as never, 'deposit', [d.asset, deposited, 0n]);
}
