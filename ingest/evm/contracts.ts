/**
 * Which contracts a chain's ingester watches, from the vault registry (`vaults[]`)
 * and the chain's settings (`chains[].atomicQueues`, `predicateProxies`): share,
 * teller, accountant and authority of each vault on the chain, its separate OFT adapter
 * (`coreShareOftAddress`), the NestVaults of its `coreVaults`, the chain's AtomicQueues (shared by every vault: a request's
 * offer token names the vault) and its OperatorRegistry (`chains[].operatorRegistry`, shared by every vault).
 */
import type { Hex } from 'viem';
import type { Config } from '../../core/config.ts';
import type { ChainConfig, VaultConfig } from '../../core/settings/registry.ts';
import type { ContractRole } from './decode.ts';

export interface WatchedContract {
  address: string;
  role: ContractRole;
  /** Vaults the contract serves (an authority may be shared; a queue serves all). */
  vaults: VaultConfig[];
  /** NestVault: its deposit asset on this chain ('' when unknown). */
  asset?: string;
}

/** Decimals and USD price of a token, as the registry knows it. */
export interface AssetInfo {
  decimals: number;
  usdPrice: string;
}

export interface ChainContracts {
  chain: ChainConfig;
  vaults: VaultConfig[];
  byAddress: Map<string, WatchedContract>;
  /** Share token (lower-case) to its vault. */
  byShare: Map<string, VaultConfig>;
  predicateProxies: Set<string>;
  /** Every watched address: the `address` filter of `eth_getLogs`. */
  addresses: Hex[];
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** A config price as a plain decimal string (`String(1e-7)` would say `1e-7`). */
export function decimalText(n: number): string {
  const s = String(n);
  return /e/i.test(s) ? n.toFixed(20).replace(/\.?0+$/, '') : s;
}

/** The contracts watched on `chain`. */
export function chainContracts(config: Config, chain: ChainConfig): ChainContracts {
  const vaults = config.vaults.filter((v) => v.chainIds.includes(chain.chainId));
  const byAddress = new Map<string, WatchedContract>();
  const add = (address: string, role: ContractRole, vault: VaultConfig | VaultConfig[], asset?: string) => {
    if (!ADDRESS.test(address)) return;
    const key = address.toLowerCase();
    const list = Array.isArray(vault) ? vault : [vault];
    const cur = byAddress.get(key);
    if (cur) {
      for (const v of list) if (!cur.vaults.includes(v)) cur.vaults.push(v);
      return;
    }
    byAddress.set(key, { address: key, role, vaults: [...list], asset });
  };
  for (const v of vaults) {
    add(v.vaultAddress, 'share', v);
    add(v.tellerContractAddress, 'teller', v);
    add(v.accountantAddress, 'accountant', v);
    add(v.authorityAddress, 'authority', v);
    // A share that is its own OFT (NestShareOFT) keeps the share role: one address, one decoding per log.
    add(v.coreShareOftAddress, 'oft', v);
    for (const cv of v.coreVaults) {
      const onChain = cv.chainAssets.find((a) => a.chainId === chain.chainId);
      if (cv.chainAssets.length && !onChain) continue;
      add(cv.coreVaultAddress, 'nestVault', v, onChain?.assetAddress.toLowerCase() ?? '');
    }
  }
  for (const q of chain.atomicQueues) add(q, 'queue', vaults);
  // The chain-wide ERC-7540 operator registry: a NestVault's isOperator is its own approval OR the registry's.
  if (vaults.length) add(chain.operatorRegistry, 'operatorRegistry', vaults);
  return {
    chain,
    vaults,
    byAddress,
    byShare: new Map(vaults.map((v) => [v.vaultAddress.toLowerCase(), v])),
    predicateProxies: new Set(chain.predicateProxies.map((p) => p.toLowerCase())),
    addresses: [...byAddress.keys()] as Hex[],
  };
}

/**
 * Decimals and USD price of `token` for `vault`: a configured liquid asset of the
 * chain, else the share itself, else on-chain `decimals()` (from `readDecimals`)
 * valued at the base asset's price (fees and redemptions are paid in the base asset).
 */
export function assetInfo(
  vault: VaultConfig,
  chainId: number,
  token: string,
  readDecimals: Map<string, number>,
): AssetInfo {
  const t = token.toLowerCase();
  const liquid = vault.liquidAssets.find(
    (a) => a.chainId === chainId && a.contractAddress.toLowerCase() === t,
  );
  if (liquid) return { decimals: liquid.decimals, usdPrice: decimalText(liquid.price) };
  if (t === vault.vaultAddress.toLowerCase()) return { decimals: vault.decimals, usdPrice: '0' };
  return {
    decimals: readDecimals.get(t) ?? vault.baseAsset.decimals,
    usdPrice: decimalText(vault.baseAsset.usdPrice),
  };
}
