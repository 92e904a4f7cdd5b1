/**
 * Publishes the configured vault registry as registry events, so a registry change
 * flows through the bus and the views like any other data.
 */
import { topicName } from '../bus/partition.ts';
import type { Bus } from '../bus/types.ts';
import type { Config } from '../core/config.ts';
import type { VaultConfig } from '../core/settings/registry.ts';
import type { EventCodec } from '../schemas/codec.ts';
import type { RegistryRecord } from '../schemas/records.ts';

export function registryRecord(v: VaultConfig, updatedAt: number): RegistryRecord {
  return {
    slug: v.slug,
    status: v.status,
    updatedAt,
    vaultAddress: v.vaultAddress,
    name: v.name,
    symbol: v.symbol,
    decimals: v.decimals,
    chainIds: v.chainIds,
    solanaMint: v.solana?.mintAddress ?? '',
    baseAssetUsdPrice: String(v.baseAsset.usdPrice),
    baseAssetDecimals: v.baseAsset.decimals,
    info: JSON.stringify(v),
  };
}

export async function publishRegistry(
  cfg: Config,
  bus: Bus,
  codec: EventCodec,
  now = Date.now(),
): Promise<number> {
  const msgs = await Promise.all(
    cfg.vaults.map(async (v) => ({
      key: v.slug,
      value: await codec.encode('registry', registryRecord(v, now)),
    })),
  );
  if (msgs.length) await bus.publish(topicName(cfg.topicPrefix, 'registry'), msgs);
  return msgs.length;
}
