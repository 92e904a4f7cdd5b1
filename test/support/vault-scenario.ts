/**
 * A hand-built scenario for the vaults and history endpoints: three vaults with
 * different CMS statuses, a known share-price path over 45 days on two chains
 * (with intraday updates and days without one), supply on both chains (18-decimal
 * shares on chain 1 through `decimalsOverride`), liquid-asset balance and price
 * snapshots, weekly composition snapshots, last-24 h activity, redemption requests
 * (open, updated, expired, filled, cancelled), data-source errors, and blocks
 * whose watermarks leave chain 1 lagging so that yesterday is unsettled for the
 * vault living on it. The events are exported as plain arrays so tests compute
 * their expectations from them, independently of the SQL and of the API code.
 */
import { vaultSchema } from '../../core/settings/registry.ts';
import { registryRecord } from '../../ingest/registry.ts';
import { DAY, eventSequence, HOUR, hex, EVM_ZERO as ZERO } from './events.ts';
/** Day 0, 2026-09-01 00:00 UTC. */
export const START = Date.UTC(2026, 8, 1) / 1000;
/** Index of the current day (2026-10-15). */
export const TODAY = 44;
/** The API clock: 2026-10-15 12:00 UTC. */
export const NOW = START + TODAY * DAY + 12 * HOUR;
export const dayTs = (i: number) => START + i * DAY;

export const PRIMARY = 98866;
export const MAINNET = 1;
/** `int / 10^scale` as an exact decimal string. */
const dec = (int: number, scale: number) => {
  const s = String(int).padStart(scale + 1, '0');
  return scale ? `${s.slice(0, -scale)}.${s.slice(-scale)}` : s;
};

export const SLUG = { alpha: 'alpha-yield', beta: 'beta-credit', gamma: 'gamma-rates' } as const;
export const USDC = hex(0xc0c0, 20);
export const USDT = hex(0x7e7e, 20);
export const holders = Array.from({ length: 8 }, (_, i) => hex(0xb0b000 + i, 20));

export const vaultConfigs = [
  vaultSchema.parse({
    slug: SLUG.alpha,
    status: 'active',
    name: 'Alpha Yield',
    symbol: 'aYLD',
    decimals: 6,
    decimalsOverride: [{ [String(MAINNET)]: 18 }],
    vaultAddress: hex(0xa1, 20),
    accountantAddress: hex(0xa2, 20),
    chainIds: [PRIMARY, MAINNET],
    baseAsset: { symbol: 'USDC', decimals: 6, usdPrice: 0.9995 },
    chain: {
      primary: { startBlock: 5, accountantType: 'hub' },
      mainnet: { startBlock: 7, accountantType: 'spoke' },
    },
    liquidAssets: [
      { contractAddress: USDC, symbol: 'USDC', decimals: 6, price: 1, chainId: PRIMARY },
      { contractAddress: USDT, symbol: 'USDT', decimals: 6, price: 1, chainId: MAINNET },
    ],
    targetComposition: [
      { slug: 'tbill', name: 'Treasury Bills', description: 'Short T-bills', image: 'tbill.png' },
      { slug: 'credit', name: 'Private Credit', description: 'Senior loans', image: 'credit.png' },
    ],
    roles: { '7': 'STRATEGIST' },
  }),
  vaultSchema.parse({
    slug: SLUG.beta,
    status: 'coming_soon',
    name: 'Beta Credit',
    symbol: 'bCRD',
    decimals: 6,
    vaultAddress: hex(0xb1, 20),
    accountantAddress: hex(0xb2, 20),
    chainIds: [PRIMARY],
    baseAsset: { symbol: 'USDC', decimals: 6, usdPrice: 1 },
    liquidAssets: [{ contractAddress: USDC, symbol: 'USDC', decimals: 6, price: 1, chainId: PRIMARY }],
  }),
  vaultSchema.parse({
    slug: SLUG.gamma,
    status: 'disabled',
    name: 'Gamma Rates',
    symbol: 'gRT',
    decimals: 18,
    vaultAddress: hex(0xc1, 20),
    accountantAddress: hex(0xc2, 20),
    chainIds: [PRIMARY],
    baseAsset: { symbol: 'ETH', decimals: 18, usdPrice: 2500 },
  }),
];

export interface RateEvent {
  vault: string;
  chainId: number;
  ts: number;
  rate: bigint;
  decimals: number;
}
export interface TransferEvent {
  vault: string;
  chainId: number;
  ts: number;
  from: string;
  to: string;
  amount: bigint;
}
export interface SnapshotEvent {
  vault: string;
  chainId: number;
  ts: number;
  kind: 'ASSET_BALANCE' | 'ASSET_PRICE' | 'COMPOSITION';
  token: string;
  amount?: bigint;
  usdPrice?: string;
  apy7d?: string;
  apy30d?: string;
  weight?: string;
}
export interface ActivityEvent {
  vault: string;
  ts: number;
  kind: string;
  assets: bigint;
  assetsDecimals: number;
}
export interface RedemptionEvent {
  vault: string;
  chainId: number;
  ts: number;
  kind: 'REQUEST' | 'FILL' | 'CANCEL';
  requestId: string;
  amount: bigint;
  deadline: number;
}
export interface ErrorEvent {
  vault: string;
  source: string;
  operation: string;
  message: string;
  code: string;
  ts: number;
}

/** The alpha vault's primary-chain close of day i (6 decimals). */
export const alphaRate = (i: number) => 1_000_000n + 200n * BigInt(i) + 3n * BigInt(i * i);

export const rates: RateEvent[] = [];
export const transfers: TransferEvent[] = [];
export const snapshots: SnapshotEvent[] = [];
export const activity: ActivityEvent[] = [];
export const redemptions: RedemptionEvent[] = [];
export const errors: ErrorEvent[] = [];
/** chainId -> block times (the newest is the watermark). */
export const blocks: Record<number, number[]> = { [PRIMARY]: [], [MAINNET]: [] };

// Alpha, primary chain: an intraday update and a close at 20:00, except every day i % 5 == 3
// (carried forward); today: 06:00 and a close-so-far at 08:00.
for (let i = 0; i <= TODAY; i++) {
  if (i % 5 === 3) continue;
  const closeAt = i === TODAY ? 8 * HOUR : 20 * HOUR;
  rates.push({
    vault: SLUG.alpha,
    chainId: PRIMARY,
    ts: dayTs(i) + 6 * HOUR,
    rate: alphaRate(i) - 40n,
    decimals: 6,
  });
  rates.push({
    vault: SLUG.alpha,
    chainId: PRIMARY,
    ts: dayTs(i) + closeAt,
    rate: alphaRate(i),
    decimals: 6,
  });
}
// Alpha, chain 1: the spoke accountant trails by one day, updated at 03:00 on days 1..43.
for (let i = 1; i < TODAY; i++)
  rates.push({
    vault: SLUG.alpha,
    chainId: MAINNET,
    ts: dayTs(i) + 3 * HOUR,
    rate: alphaRate(i - 1),
    decimals: 6,
  });
// Beta: a flat 1.05; gamma: 18-decimal rate from day 10, +0.0001 a day.
for (let i = 0; i <= TODAY; i++)
  rates.push({ vault: SLUG.beta, chainId: PRIMARY, ts: dayTs(i) + 2 * HOUR, rate: 1_050_000n, decimals: 6 });
for (let i = 10; i <= TODAY; i++)
  rates.push({
    vault: SLUG.gamma,
    chainId: PRIMARY,
    ts: dayTs(i) + (i === TODAY ? 7 : 12) * HOUR,
    rate: 10n ** 18n + BigInt(i - 10) * 10n ** 14n,
    decimals: 18,
  });

const E6 = 10n ** 6n;
const E18 = 10n ** 18n;
const mint = (vault: string, chainId: number, i: number, to: string, amount: bigint) =>
  transfers.push({ vault, chainId, ts: dayTs(i) + 10 * HOUR, from: ZERO, to, amount });
const move = (vault: string, chainId: number, i: number, from: string, to: string, amount: bigint) =>
  transfers.push({ vault, chainId, ts: dayTs(i) + 11 * HOUR, from, to, amount });
const [h0, h1, h2, h3, h4, h5, h6, h7] = holders;
mint(SLUG.alpha, PRIMARY, 0, h0, 1_000_000n * E6);
mint(SLUG.alpha, PRIMARY, 2, h1, 250_000n * E6);
mint(SLUG.alpha, PRIMARY, 10, h2, 50_000n * E6);
move(SLUG.alpha, PRIMARY, 15, h0, h3, 100_000n * E6);
move(SLUG.alpha, PRIMARY, 20, h1, ZERO, 250_000n * E6);
mint(SLUG.alpha, PRIMARY, 30, h4, 10_000n * E6);
mint(SLUG.alpha, PRIMARY, 40, h1, 5_000n * E6);
mint(SLUG.alpha, PRIMARY, TODAY, h5, 1_234_567_891n);
mint(SLUG.alpha, MAINNET, 1, h0, 500_000n * E18);
mint(SLUG.alpha, MAINNET, 12, h6, 75_000n * E18 + E18 / 2n);
move(SLUG.alpha, MAINNET, 25, h6, ZERO, 75_000n * E18 + E18 / 2n);
mint(SLUG.alpha, MAINNET, 35, h7, 20_000n * E18);
mint(SLUG.beta, PRIMARY, 5, h0, 10_000n * E6);

/** A snapshot of `kind` at `ts`: a balance (bigint) or decimal-string fields. */
const snap = (
  vault: string,
  chainId: number,
  ts: number,
  kind: SnapshotEvent['kind'],
  token: string,
  values: Partial<SnapshotEvent>,
) => snapshots.push({ vault, chainId, ts, kind, token, ...values });
// Alpha liquid balances: USDC on the primary chain at 23:00 (today at 09:00), USDT on chain 1 at 04:00.
for (let i = 0; i <= TODAY; i++) {
  const usdc = BigInt(100_000 + 1_000 * i) * E6 + (i === TODAY ? 123_456n : 0n);
  snap(SLUG.alpha, PRIMARY, dayTs(i) + (i === TODAY ? 9 : 23) * HOUR, 'ASSET_BALANCE', USDC, {
    amount: usdc,
  });
  if (i < TODAY)
    snap(SLUG.alpha, MAINNET, dayTs(i) + 4 * HOUR, 'ASSET_BALANCE', USDT, {
      amount: BigInt(50_000 + 500 * i) * E6,
    });
}
// USDT priced by snapshot from day 10 (the configured price 1 before); credit priced only by ASSET_PRICE.
snap(SLUG.alpha, MAINNET, dayTs(10) + 1800, 'ASSET_PRICE', USDT, { usdPrice: '0.998' });
snap(SLUG.alpha, MAINNET, dayTs(30) + 1800, 'ASSET_PRICE', USDT, { usdPrice: '0.9991' });
snap(SLUG.alpha, 0, dayTs(0) + 60, 'ASSET_PRICE', 'credit', { usdPrice: '1.5' });
snap(SLUG.alpha, 0, dayTs(21) + 60, 'ASSET_PRICE', 'credit', { usdPrice: '1.52' });
// Weekly composition (days 0, 7, ..., 42 at 00:10): the liquid USDC entry is not a yield asset.
for (let k = 0; 7 * k <= TODAY; k++) {
  const ts = dayTs(7 * k) + 600;
  snap(SLUG.alpha, 0, ts, 'COMPOSITION', 'tbill', {
    weight: dec(60 - k, 0),
    apy7d: dec(450 + 10 * k, 2),
    apy30d: dec(420 + 5 * k, 2),
    usdPrice: dec(1010 + k, 3),
  });
  snap(SLUG.alpha, 0, ts, 'COMPOSITION', 'credit', {
    weight: dec(25 + k, 0),
    apy7d: dec(900 - 20 * k, 2),
    apy30d: dec(850 - 10 * k, 2),
  });
  snap(SLUG.alpha, 0, ts, 'COMPOSITION', 'usdc', { weight: '15', apy7d: '0', apy30d: '0', usdPrice: '1' });
}
snap(SLUG.beta, PRIMARY, dayTs(40), 'ASSET_BALANCE', USDC, { amount: 500n * E6 });

// Activity around the last 24 h of alpha (volume24h counts DEPOSIT, WITHDRAW, INSTANT_REDEEM inside it).
const act = (ago: number, kind: string, assets: bigint, assetsDecimals: number) =>
  activity.push({ vault: SLUG.alpha, ts: NOW - ago, kind, assets, assetsDecimals });
act(HOUR, 'DEPOSIT', 5_000n * E6, 6);
act(2 * HOUR, 'WITHDRAW', 1_200_500_000n, 6);
act(10 * HOUR, 'INSTANT_REDEEM', 300n * E6, 6);
act(11 * HOUR, 'DEPOSIT', (5n * E18) / 2n, 18);
act(3 * HOUR, 'REDEEM_REQUEST', 999n * E6, 6);
act(25 * HOUR, 'DEPOSIT', 7_777n * E6, 6);

const req = (
  vault: string,
  chainId: number,
  i: number,
  kind: RedemptionEvent['kind'],
  id: string,
  amount: bigint,
  deadline: number,
) => redemptions.push({ vault, chainId, ts: dayTs(i) + 14 * HOUR, kind, requestId: id, amount, deadline });
req(SLUG.alpha, PRIMARY, 40, 'REQUEST', 'r1', 1_500n * E6, NOW + 3 * DAY);
req(SLUG.alpha, PRIMARY, 42, 'REQUEST', 'r1', 1_000n * E6, NOW + 3 * DAY); // updated: 1000 counts
req(SLUG.alpha, MAINNET, 41, 'REQUEST', 'r2', (5n * E18) / 2n, NOW + DAY);
req(SLUG.alpha, PRIMARY, 30, 'REQUEST', 'r3', 777n * E6, NOW - DAY); // expired
req(SLUG.alpha, PRIMARY, 38, 'REQUEST', 'r4', 50n * E6, NOW + 5 * DAY);
req(SLUG.alpha, PRIMARY, 39, 'FILL', 'r4', 50n * E6, NOW + 5 * DAY); // filled
req(SLUG.alpha, PRIMARY, 38, 'REQUEST', 'r5', 60n * E6, NOW + 5 * DAY);
req(SLUG.alpha, PRIMARY, 41, 'CANCEL', 'r5', 60n * E6, NOW + 5 * DAY); // cancelled
req(SLUG.beta, PRIMARY, 43, 'REQUEST', 'b1', 2_000n * E6, NOW + 2 * DAY);

const fail = (vault: string, source: string, operation: string, message: string, code: string, ts: number) =>
  errors.push({ vault, source, operation, message, code, ts });
fail(SLUG.alpha, 'rpc:1', 'getRate', 'timed out after 10 s', 'TIMEOUT', dayTs(20) + 10 * HOUR);
fail(SLUG.alpha, 'prices', 'fetchPrice', 'HTTP 503', 'UPSTREAM', dayTs(40) + 5 * HOUR);
fail(SLUG.beta, 'rpc:98866', 'getLogs', 'rate limited', 'RATE_LIMITED', dayTs(41));

// Blocks: the primary chain is ingested up to a minute ago; chain 1 stops at yesterday 06:00.
for (let i = 0; i < TODAY; i++) {
  blocks[PRIMARY].push(dayTs(i) + DAY - 60);
  blocks[MAINNET].push(dayTs(i) + 5 * HOUR);
}
blocks[PRIMARY].push(NOW - 60);
blocks[MAINNET].push(dayTs(TODAY - 1) + 6 * HOUR);

/** The scenario as NDJSON lines (registry first). */
export function vaultScenarioLines(): string[] {
  const lines: string[] = [];
  const push = (family: string, record: unknown) => lines.push(JSON.stringify({ family, record }));
  const chain = eventSequence(1000, (n) => n % 4);
  const address = (slug: string) => vaultConfigs.find((v) => v.slug === slug)?.vaultAddress as string;
  for (const v of vaultConfigs) push('registry', registryRecord(v, Date.UTC(2026, 7, 1)));
  for (const [chainId, times] of Object.entries(blocks))
    for (const ts of times) {
      const b = chain(Number(chainId), ts);
      push('blocks', {
        chainId: b.chainId,
        blockNumber: b.blockNumber,
        blockHash: b.blockHash,
        parentHash: hex(b.blockNumber - 1, 32),
        blockTimestamp: ts,
        removed: false,
      });
    }
  for (const r of rates)
    push('rates', {
      ...chain(r.chainId, r.ts),
      vault: r.vault,
      accountant: hex(0xacc, 20),
      rate: r.rate.toString(),
      rateDecimals: r.decimals,
      source: 'EVENT',
      isPaused: false,
    });
  for (const t of transfers)
    push('transfers', {
      ...chain(t.chainId, t.ts),
      vault: t.vault,
      token: address(t.vault),
      from: t.from,
      to: t.to,
      amount: t.amount.toString(),
    });
  for (const s of snapshots)
    push('snapshots', {
      vault: s.vault,
      chainId: s.chainId,
      blockNumber: 1,
      timestamp: s.ts,
      kind: s.kind,
      token: s.token,
      amount: (s.amount ?? 0n).toString(),
      decimals: s.kind === 'ASSET_BALANCE' ? 6 : 0,
      usdPrice: s.usdPrice ?? '',
      apy7d: s.apy7d ?? '',
      apy30d: s.apy30d ?? '',
      weight: s.weight ?? '',
      isPaused: false,
    });
  for (const a of activity)
    push('activity', {
      ...chain(PRIMARY, a.ts),
      vault: a.vault,
      kind: a.kind,
      user: holders[0],
      shares: '1000000',
      sharesToken: address(a.vault),
      assets: a.assets.toString(),
      assetsToken: a.assetsDecimals === 6 ? USDC : hex(0xda1, 20),
      assetsDecimals: a.assetsDecimals,
    });
  for (const r of redemptions)
    push('redemptions', {
      ...chain(r.chainId, r.ts),
      vault: r.vault,
      queue: hex(0x9e, 20),
      kind: r.kind,
      requestId: r.requestId,
      user: holders[1],
      offerToken: address(r.vault),
      wantToken: USDC,
      amount: r.amount.toString(),
      minPrice: '990000',
      wantDecimals: 6,
      deadline: r.deadline,
    });
  for (const e of errors)
    push('source_errors', {
      vault: e.vault,
      chainId: 0,
      source: e.source,
      operation: e.operation,
      message: e.message,
      code: e.code,
      timestamp: e.ts,
    });
  return lines;
}
