/**
 * `liveLiquidity=true`: the vault's configured liquid-asset balances read from the
 * chains at request time (`balanceOf(vault)` on each asset, through the service's EVM
 * transport: every RPC URL of the chain, the request timeout, retries). Any chain that
 * cannot be read makes the reader throw, and the answer falls back to the last snapshots
 * (api/read/vault-composition.ts `currentBalances`).
 */
import { type Address, createPublicClient, erc20Abi, type PublicClient } from 'viem';
import type { Config } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { chainTransport } from '../../rpc/evm-transport.ts';
import type { RegistryVault } from './registry.ts';
import type { LiquidBalance, LiveLiquidityReader } from './vault-composition.ts';

/** A reader over the chains of `config` (one viem client per chain, reused across requests). */
export function chainLiquidityReader(config: Config): LiveLiquidityReader {
  const clients = new Map<number, PublicClient>();
  const clientOf = (chainId: number): PublicClient => {
    let client = clients.get(chainId);
    if (client) return client;
    const chain = config.chains.find((c) => c.chainId === chainId);
    if (!chain?.rpcUrls.length)
      throw new VaultstreamError('CONFIG_INVALID', `no RPC configured for chain ${chainId}`);
    // An API request waits on this read: one pass over the chain's URLs (at least one retry),
    // not the ingester's full retry budget, before the answer falls back to the snapshots; a rate
    // limit gets no more attempts than any other fault.
    const maxAttempts = Math.min(config.ingest.maxAttempts, Math.max(2, chain.rpcUrls.length));
    client = createPublicClient({
      transport: chainTransport(chain, config.ingest, { maxAttempts, rateLimitedAttempts: 1 }),
    });
    clients.set(chainId, client);
    return client;
  };
  return {
    balances: (v: RegistryVault): Promise<LiquidBalance[]> =>
      Promise.all(
        v.info.liquidAssets.map(async (a) => ({
          chainId: a.chainId,
          contractAddress: a.contractAddress.toLowerCase(),
          amount: await clientOf(a.chainId).readContract({
            address: a.contractAddress as Address,
            abi: erc20Abi,
            functionName: 'balanceOf',
            args: [v.vaultAddress as Address],
          }),
        })),
      ),
  };
}

const readers = new WeakMap<Config, LiveLiquidityReader>();

/** The reader of `config`, made once per config object. */
export function liquidityReaderFor(config: Config): LiveLiquidityReader {
  let reader = readers.get(config);
  if (!reader) {
    reader = chainLiquidityReader(config);
    readers.set(config, reader);
  }
  return reader;
}
