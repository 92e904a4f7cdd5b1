/**
 * GET /v1/vaults, /vaults/details, /vaults/{slug}, /vaults/{slug}/details-lite over
 * the vault scenario replayed through the CLI into chDB. Expected values are
 * computed here from the scenario's events (test/support/vault-scenario.ts).
 */
import { describe, expect, it } from 'vitest';
import { vaultDetails, vaultDetailsLite, vaultInfo } from '../../api/http/resources.ts';
import { responseBodies } from '../../api/http/responses.ts';
import type { RegistryVault } from '../../api/read/registry.ts';
import { liquidKey, liveLiquidFundsE18 } from '../../api/read/vault-composition.ts';
import { decimalE18 } from '../../api/read/vault-numbers.ts';
import { useVaultApi } from '../support/api-fixture.ts';
import { DAY } from '../support/events.ts';
import {
  activity,
  alphaRate,
  blocks,
  dayTs,
  MAINNET,
  NOW,
  PRIMARY,
  redemptions,
  SLUG,
  TODAY,
  vaultConfigs,
} from '../support/vault-scenario.ts';
import {
  truthDecimals,
  truthHolders,
  truthLiquid,
  truthNavApy,
  truthSettledThrough,
  truthTvl,
} from '../support/vault-truth.ts';

const api = useVaultApi();
const get = api.get;

/** Relative closeness for USD and percent numbers (the API converts exact values once). */
function near(actual: number, expected: number, rel = 1e-9) {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(Math.abs(expected) * rel + 1e-9);
}

const slugsOf = (body: { data: { slug: string }[] }) => body.data.map((v) => v.slug);
const configOf = (slug: string) => vaultConfigs.find((v) => v.slug === slug) as (typeof vaultConfigs)[number];

const latestSettledIndex = (slug: string) => Math.floor((truthSettledThrough(slug) - dayTs(0)) / DAY) - 1;

describe('GET /v1/vaults', () => {
  it('filters by status (default active; status wins over live; live=false is every other status)', async () => {
    expect(slugsOf((await get('/v1/vaults')).body)).toEqual([SLUG.alpha]);
    expect(slugsOf((await get('/v1/vaults?status=all')).body)).toEqual([SLUG.alpha, SLUG.beta, SLUG.gamma]);
    expect(slugsOf((await get('/v1/vaults?live=false')).body)).toEqual([SLUG.beta, SLUG.gamma]);
    expect(slugsOf((await get('/v1/vaults?live=true')).body)).toEqual([SLUG.alpha]);
    expect(slugsOf((await get('/v1/vaults?status=disabled')).body)).toEqual([SLUG.gamma]);
    expect(slugsOf((await get('/v1/vaults?status=coming_soon&live=true')).body)).toEqual([SLUG.beta]);
    expect(slugsOf((await get('/v1/vaults?status=hidden')).body)).toEqual([]);
  });

  it('rejects a bad status with a 400 naming it', async () => {
    const res = await api.request('/v1/vaults?status=live');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_PARAMETER');
    expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(['status']);
  });

  it('answers VaultInfo with exactly the spec fields, the configured statics filled in', async () => {
    const { body, headers } = await get('/v1/vaults?status=all');
    responseBodies['GET /vaults'].parse(body);
    const alpha = body.data[0];
    expect(Object.keys(alpha)).toEqual(Object.keys(vaultInfo.shape));
    for (const hidden of ['status', 'chainIds', 'baseAsset', 'roles'])
      expect(alpha).not.toHaveProperty(hidden);
    const cfg = configOf(SLUG.alpha);
    expect(alpha.vaultAddress).toBe(cfg.vaultAddress);
    expect(alpha.liquidAssets).toEqual(cfg.liquidAssets);
    expect(alpha.targetComposition).toEqual(cfg.targetComposition);
    expect(alpha.decimalsOverride).toEqual([{ '1': 18 }]);
    expect(alpha.chain.primary).toEqual({ startBlock: 5, accountantType: 'hub' });
    expect(alpha.chain.mainnet).toEqual({ startBlock: 7, accountantType: 'spoke' });
    expect(alpha.chain.avalanche).toEqual({ startBlock: 0, accountantType: '' });
    expect(alpha.solana).toEqual({
      mintAddress: '',
      oftStoreAddress: '',
      composerAddress: '',
      decimals: 0,
      startBlock: 0,
    });
    // The answer's watermark is the oldest chain watermark among the vaults' chains (chain 1 lags).
    expect(headers.get('x-data-watermark')).toBe(new Date(Math.max(...blocks[MAINNET]) * 1000).toISOString());
  });

  it('computes tvl, numHolders, volume24h and sec30d from the events', async () => {
    const { body } = await get('/v1/vaults?status=all');
    const [alpha, beta, gamma] = body.data;
    near(alpha.tvl, truthTvl(SLUG.alpha, TODAY));
    near(beta.tvl, truthTvl(SLUG.beta, TODAY));
    expect(gamma.tvl).toBe(0);
    expect(alpha.numHolders).toBe(truthHolders(SLUG.alpha));
    expect(alpha.numHolders).toBe(7);
    expect(beta.numHolders).toBe(1);
    const counted = activity.filter(
      (a) =>
        a.vault === SLUG.alpha &&
        ['DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM'].includes(a.kind) &&
        a.ts > NOW - DAY &&
        a.ts <= NOW,
    );
    const volume = counted.reduce((s, a) => s + Number(a.assets) / 10 ** a.assetsDecimals, 0);
    expect(volume).toBe(6503); // 5000 + 1200.5 + 300 + 2.5: the window and kinds are what is tested
    near(alpha.volume24h, volume * 0.9995);
    expect(beta.volume24h).toBe(0);
    // Alpha settles through yesterday 06:00 (chain 1), so its latest settled day is the day before yesterday.
    expect(latestSettledIndex(SLUG.alpha)).toBe(TODAY - 2);
    expect(latestSettledIndex(SLUG.gamma)).toBe(TODAY - 1);
    near(alpha.sec30d, truthNavApy(SLUG.alpha, PRIMARY, TODAY - 2).sec30d as number);
    near(gamma.sec30d, truthNavApy(SLUG.gamma, PRIMARY, TODAY - 1).sec30d as number);
    expect(gamma.sec30d).toBeGreaterThan(0);
  });
});

describe('GET /v1/vaults/{slug}', () => {
  it('answers one vault of any status, as in the list', async () => {
    const list = (await get('/v1/vaults?status=all')).body.data;
    const { body } = await get(`/v1/vaults/${SLUG.gamma}`);
    responseBodies['GET /vaults/{slug}'].parse(body);
    expect(body.data).toEqual(list[2]);
  });

  it('is 404 for an unknown slug', async () => {
    const res = await api.request('/v1/vaults/no-such-vault');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
    expect((await api.request('/v1/vaults/no-such-vault/details-lite')).status).toBe(404);
  });
});

describe('GET /v1/vaults/{slug}/details-lite', () => {
  it('answers the metrics of docs/architecture.md, Units and formulas', async () => {
    const { body } = await get(`/v1/vaults/${SLUG.alpha}/details-lite`);
    responseBodies['GET /vaults/{slug}/details-lite'].parse(body);
    const d = body.data;
    expect(Object.keys(d)).toEqual(Object.keys(vaultDetailsLite.shape));
    const tvl = truthTvl(SLUG.alpha, TODAY);
    near(d.tvl, tvl);
    near(d.tvl30DayChange, (tvl / truthTvl(SLUG.alpha, TODAY - 30) - 1) * 100);
    expect(d.tvl30DayChange).not.toBe(0);
    const apy = truthNavApy(SLUG.alpha, PRIMARY, TODAY - 2);
    near(d.apy.rolling7d, apy.rolling7d as number);
    near(d.apy.rolling30d, apy.rolling30d as number);
    near(d.apy.sec30d, apy.sec30d as number);
    expect(d.tokenPrice).toBe(Number(alphaRate(TODAY)) / 1e6);
    expect(d.tokenPriceUpdatedAtEpoch).toBe(dayTs(TODAY) + 8 * 3600);
    const liquid = truthLiquid(SLUG.alpha, NOW);
    // Today's USDC balance snapshot (09:00) and chain 1's USDT at 0.9991.
    near(liquid, 144_000.123456 + 71_500 * 0.9991);
    near(d.liquidFunds, liquid);
    near(d.liquidFundsRange, (liquid / tvl) * 100);
    expect(d.holders).toBe(truthHolders(SLUG.alpha));
  });

  it('uses the snapshots for liveLiquidity=true and says so in X-Liquidity-Source', async () => {
    const plain = await get(`/v1/vaults/${SLUG.alpha}/details-lite`);
    expect(plain.headers.get('x-liquidity-source')).toBeNull();
    const live = await get(`/v1/vaults/${SLUG.alpha}/details-lite?liveLiquidity=true`);
    expect(live.headers.get('x-liquidity-source')).toBe('snapshot');
    expect(live.body).toEqual(plain.body);
    const bad = await api.request(`/v1/vaults/${SLUG.alpha}/details-lite?liveLiquidity=yes`);
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe('liveLiquidity');
  });
});

describe('GET /v1/vaults/details', () => {
  it('adds the open redemptions and the shortfall', async () => {
    const { body } = await get('/v1/vaults/details?status=all');
    responseBodies['GET /vaults/details'].parse(body);
    const [alpha, beta, gamma] = body.data;
    expect(Object.keys(alpha)).toEqual(Object.keys(vaultDetails.shape));
    expect(alpha.tokenPriceUpdatedAt).toBe(new Date((dayTs(TODAY) + 8 * 3600) * 1000).toISOString());

    // Open = latest request not filled or cancelled, deadline after now; shares in each chain's decimals.
    const open = (slug: string) => {
      const byId = new Map<string, { chainId: number; amount: bigint; deadline: number; closed: boolean }>();
      for (const r of redemptions.filter((x) => x.vault === slug).sort((a, b) => a.ts - b.ts)) {
        const have = byId.get(r.requestId);
        if (r.kind === 'REQUEST')
          byId.set(r.requestId, {
            chainId: r.chainId,
            amount: r.amount,
            deadline: r.deadline,
            closed: false,
          });
        else if (have) have.closed = true;
      }
      return [...byId.values()].filter((r) => !r.closed && r.deadline > NOW);
    };
    const shares = (slug: string) =>
      open(slug).reduce((s, r) => s + Number(r.amount) / 10 ** truthDecimals(slug, r.chainId), 0);
    expect(shares(SLUG.alpha)).toBe(1002.5);
    near(alpha.pendingRedemptions, shares(SLUG.alpha));
    const alphaValue = shares(SLUG.alpha) * (Number(alphaRate(TODAY)) / 1e6) * 0.9995;
    near(alpha.pendingRedemptionsValue, alphaValue);
    expect(alpha.shortfall).toBe(0);

    expect(beta.pendingRedemptions).toBe(2000);
    near(beta.pendingRedemptionsValue, 2000 * 1.05);
    near(beta.liquidFunds, 500);
    near(beta.shortfall, 2000 * 1.05 - 500);

    expect(gamma.tvl).toBe(0);
    expect(gamma.liquidFunds).toBe(0);
    expect(gamma.liquidFundsRange).toBe(0);
    expect(gamma.tvl30DayChange).toBe(0);
    expect(gamma.tokenPrice).toBe(1 + (TODAY - 10) * 1e-4);
    expect(gamma.pendingRedemptions).toBe(0);
  });

  it('answers details-lite values for each vault', async () => {
    const { body } = await get('/v1/vaults/details');
    const lite = (await get(`/v1/vaults/${SLUG.alpha}/details-lite`)).body.data;
    const { tokenPriceUpdatedAt, pendingRedemptions, pendingRedemptionsValue, shortfall, ...rest } =
      body.data[0];
    expect(rest).toEqual(lite);
  });
});

describe('live liquidity valuation', () => {
  const alpha: RegistryVault = {
    slug: SLUG.alpha,
    status: 'active',
    vaultAddress: configOf(SLUG.alpha).vaultAddress,
    name: 'Alpha Yield',
    symbol: 'aYLD',
    decimals: 6,
    chainIds: [PRIMARY, MAINNET],
    solanaMint: '',
    baseAssetUsdPrice: '0.9995',
    baseAssetDecimals: 6,
    info: configOf(SLUG.alpha),
  };
  it("values live balances at the view's price of each asset, the configured price without one", () => {
    const assets = alpha.info.liquidAssets;
    expect(assets.length, 'alpha has a liquid asset').toBeGreaterThan(0);
    const [first] = assets;
    const E18 = 10n ** 18n;
    const balances = assets.map((a) => ({
      chainId: a.chainId,
      contractAddress: a.contractAddress.toLowerCase(),
      amount: 9_000_000n,
    }));
    const configured = (a: (typeof assets)[number]) => decimalE18(a.price);
    const value = (price: bigint, a: (typeof assets)[number]) =>
      (price * 9_000_000n) / 10n ** BigInt(a.decimals);
    // No row in liquid_funds_asset_daily: every asset at its configured price.
    expect(liveLiquidFundsE18(alpha, new Map(), balances)).toBe(
      assets.reduce((t, a) => t + value(configured(a), a), 0n),
    );
    // The view's price of the first asset wins over its configured one.
    const prices = new Map([[liquidKey(first.chainId, first.contractAddress), 2n * E18]]);
    expect(liveLiquidFundsE18(alpha, prices, balances)).toBe(
      value(2n * E18, first) + assets.slice(1).reduce((t, a) => t + value(configured(a), a), 0n),
    );
    // A balance the reader did not return counts nothing.
    expect(liveLiquidFundsE18(alpha, prices, [])).toBe(0n);
  });
});
