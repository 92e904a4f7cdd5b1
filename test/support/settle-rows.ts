/**
 * Raw rows for the settle suites (views-settle*, views-transactions): a registry entry of a
 * test vault on the primary chain, and events with a block number unique across the process
 * (rates, mints, snapshots), written straight into the raw tables.
 */
import { vaultSchema } from '../../core/settings/registry.ts';

export const USDC = '0x00000000000000000000000000000000c0ffee01';

export function registry(slug: string, chainIds: number[], updatedAt: string) {
  const info = vaultSchema.parse({
    slug,
    name: slug,
    symbol: slug.toUpperCase(),
    decimals: 6,
    vaultAddress: `0x${'7a'.repeat(19)}${slug === 'sa' ? '01' : '02'}`,
    accountantAddress: `0x${'ac'.repeat(19)}${slug === 'sa' ? '01' : '02'}`,
    chainIds,
    chain: {
      primary: { startBlock: 0, accountantType: 'hub' },
      mainnet: { startBlock: 0, accountantType: 'spoke' },
    },
    liquidAssets: [{ contractAddress: USDC, symbol: 'USDC', decimals: 6, chainId: 98866 }],
    targetComposition: [{ slug: 'tbill', name: 'T-Bill', description: 'Treasury bills', image: '' }],
  });
  return {
    slug,
    status: 'active',
    updated_at: updatedAt,
    vault_address: info.vaultAddress,
    name: info.name,
    symbol: info.symbol,
    decimals: 6,
    chain_ids: chainIds,
    solana_mint: '',
    base_asset_usd_price: '1',
    base_asset_decimals: 6,
    info: JSON.stringify(info),
  };
}

let block = 1;
export const ev = (vault: string, chain: number, t: number, removed = 0, id?: string) => {
  const n = block++;
  return {
    event_id: id ?? `${chain}:0x${n.toString(16)}:0`,
    chain_id: chain,
    block_number: n,
    block_hash: `0x${n.toString(16)}`,
    block_time: t,
    tx_hash: `0x${n.toString(16)}`,
    log_index: 0,
    removed,
    ver: n,
    vault,
  };
};
export const rate = (vault: string, chain: number, t: number, r: number, removed = 0, id?: string) => ({
  ...ev(vault, chain, t, removed, id),
  accountant: '0xacc',
  rate: String(r),
  rate_decimals: 6,
  source: 'EVENT',
  is_paused: 0,
});
export const mint = (vault: string, chain: number, t: number, to: string, amount: number) => ({
  ...ev(vault, chain, t),
  token: `0x${'7a'.repeat(20)}`,
  from_address: '0x0000000000000000000000000000000000000000',
  to_address: to,
  amount: String(amount),
});
export const snapshot = (
  vault: string,
  t: number,
  kind: string,
  token: string,
  amount: number,
  extra = {},
) => ({
  vault,
  chain_id: 98866,
  block_number: t,
  ts: t,
  kind,
  token,
  amount: String(amount),
  decimals: 6,
  usd_price: '1',
  is_paused: 0,
  ...extra,
});
