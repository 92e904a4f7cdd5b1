/**
 * `liveLiquidity=true` on details-lite and details: the liquid-asset balance held by the
 * vault is read from a real anvil chain at request time (`X-Liquidity-Source: live`);
 * without the flag, or when the chain cannot be reached, the last ASSET_BALANCE snapshot
 * answers (`snapshot`). The chain's first RPC URL is dead: the read goes through the next.
 */

import { createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vaultSchema } from '../../core/settings/registry.ts';
import { mockUsdcAbi } from '../../devnet/abis.ts';
import { type AnvilNode, DEPLOYER_KEY, freePort, startAnvil } from '../../devnet/anvil.ts';
import { type DevnetAddresses, deployVaultSystem } from '../../devnet/deploy.ts';
import { registryRecord } from '../../ingest/registry.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const SLUG = 'live-vault';
const CHAIN = 98866;
const SNAPSHOT_RAW = 5_000_000n; // 5 USDC in the last snapshot
const LIVE_RAW = 1_234_567_891n; // 1234.567891 USDC on chain at request time

let node: AnvilNode;
let api: ApiHarness;
let addrs: DevnetAddresses;

beforeAll(async () => {
  node = await startAnvil({ chainId: CHAIN });
  addrs = await deployVaultSystem(node.rpcUrl, { vaults: 1 });
  const wallet = createWalletClient({
    account: privateKeyToAccount(DEPLOYER_KEY),
    transport: http(node.rpcUrl),
  });
  await wallet.writeContract({
    address: addrs.asset,
    abi: mockUsdcAbi,
    functionName: 'mint',
    args: [addrs.vaults[0].share, LIVE_RAW],
    chain: null,
  });
  const vault = vaultSchema.parse({
    slug: SLUG,
    name: 'Live',
    symbol: 'LIVE',
    decimals: 6,
    vaultAddress: addrs.vaults[0].share,
    accountantAddress: addrs.vaults[0].accountant,
    chainIds: [CHAIN],
    liquidAssets: [{ contractAddress: addrs.asset, symbol: 'USDC', decimals: 6, price: 1, chainId: CHAIN }],
  });
  const now = Math.floor(Date.now() / 1000);
  const lines = [
    JSON.stringify({ family: 'registry', record: registryRecord(vault, Date.now()) }),
    JSON.stringify({
      family: 'snapshots',
      record: {
        vault: SLUG,
        chainId: CHAIN,
        blockNumber: 1,
        timestamp: now - 60,
        kind: 'ASSET_BALANCE',
        token: addrs.asset.toLowerCase(),
        amount: String(SNAPSHOT_RAW),
        decimals: 6,
      },
    }),
  ];
  api = await startApiHarness(lines, {
    // A dead first URL: the reader moves on to the chain's next one (rpc/evm-transport.ts).
    config: {
      chains: [
        { chainId: CHAIN, name: 'primary', rpcUrls: [`http://127.0.0.1:${await freePort()}`, node.rpcUrl] },
      ],
    },
  });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await node?.stop();
});

const units = (raw: bigint) => Number(raw) / 1e6;

describe('liveLiquidity', () => {
  it('reads the balance from the chain when asked, and from the snapshot otherwise', async () => {
    const live = await api.request(`/v1/vaults/${SLUG}/details-lite?liveLiquidity=true`);
    expect(live.status).toBe(200);
    expect(live.headers.get('x-liquidity-source')).toBe('live');
    expect(live.body.data.liquidFunds).toBe(units(LIVE_RAW));

    const details = await api.request('/v1/vaults/details?liveLiquidity=true');
    expect(details.headers.get('x-liquidity-source')).toBe('live');
    expect(details.body.data[0].liquidFunds).toBe(units(LIVE_RAW));

    const cached = await api.request(`/v1/vaults/${SLUG}/details-lite`);
    expect(cached.headers.get('x-liquidity-source')).toBeNull();
    expect(cached.body.data.liquidFunds).toBe(units(SNAPSHOT_RAW));
  });

  it('falls back to the snapshot, and says so, when the chain cannot be read', async () => {
    await node.stop();
    const res = await api.request(`/v1/vaults/${SLUG}/details-lite?liveLiquidity=true`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-liquidity-source')).toBe('snapshot');
    expect(res.body.data.liquidFunds).toBe(units(SNAPSHOT_RAW));
  });
});
