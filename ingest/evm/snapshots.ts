/**
 * State snapshots of a chain at one block, in one Multicall3 `aggregate3`: per vault
 * on the chain, the share's `totalSupply()` (SUPPLY), the accountant's state (an
 * ACCOUNTANT snapshot with `isPaused`, amount = the state's exchange rate) and
 * `getRate()` (a READ rate), and the vault's balance of each configured liquid asset
 * of the chain (ASSET_BALANCE). For the vault's yield assets (`yieldAssets`): the
 * vault's `balanceOf` of each holding on the chain (ASSET_BALANCE, token = the holding's
 * contract) and each price read on the chain (ASSET_PRICE on chain 0, token = the asset's
 * slug, amount = the raw answer): `getRate()` of a `rate` source, `latestRoundData()` of an
 * `aggregator`, the configured USD of a `fixed` one (sent with the first holding's chain).
 * Asset APYs come from that price history (views/migrations/011). A read that reverts
 * leaves its record out; the rest of the snapshot stands.
 */
import { decodeFunctionResult, encodeFunctionData, formatUnits, type Hex, parseAbi } from 'viem';
import type { PriceSource, YieldAssetConfig } from '../../core/settings/registry.ts';
import { accountantViews, erc20Views } from './abis.ts';
import { accountantStateCall, decodeAccountantState, isHubAccountant } from './accountant.ts';
import type { BlockStamp, ChainReader, ReadCall } from './chain.ts';
import { type ChainContracts, decimalText } from './contracts.ts';
import type { Emitted } from './map-context.ts';

const DAY = 86_400;

/**
 * The snapshots at the last block of every UTC day that ended inside a range (the day's close:
 * `headers`, the range's blocks after `previous`, hold each such block: range-headers.ts), to
 * be published with the range's records: the reads already started (`started`, by block), the
 * others read now; and the periodic snapshot (ingest.snapshotIntervalSeconds) at `periodic`.
 * A failed read is told (`onSnapshotError`) and the range goes on.
 */
export async function dayCloseSnapshots(
  deps: { reader: ChainReader; contracts: ChainContracts; onSnapshotError: (err: unknown) => void },
  previous: BlockStamp | undefined,
  headers: BlockStamp[],
  started: Map<number, Promise<Emitted[]>>,
  periodic?: BlockStamp,
): Promise<Emitted[]> {
  const closes: BlockStamp[] = periodic ? [periodic] : [];
  let prev = previous;
  for (const h of headers) {
    if (prev && Math.floor(prev.timestamp / DAY) < Math.floor(h.timestamp / DAY)) closes.push(prev);
    prev = h;
  }
  // Those not started yet, read together.
  const fresh = closes.filter((c) => !started.has(c.number));
  const reads = new Map(takeSnapshots(deps.reader, deps.contracts, fresh).map((r, k) => [fresh[k], r]));
  const taken = await Promise.all(
    closes.map((c) =>
      (started.get(c.number) ?? (reads.get(c) as Promise<Emitted[]>)).catch((e: unknown) => {
        deps.onSnapshotError(e);
        return [];
      }),
    ),
  );
  return taken.flat();
}

/** READ rates have no log: this log index sorts them after every real log of their block. */
export const READ_LOG_INDEX = 2_147_483_647;
/** The transaction hash of a READ rate: none. */
export const NO_TX = `0x${'0'.repeat(64)}`;

const uint = (data: Hex | undefined, fn: 'totalSupply' | 'balanceOf') =>
  data ? decodeFunctionResult({ abi: erc20Views, functionName: fn, data }) : undefined;

/** Chainlink AggregatorV3Interface. */
export const aggregatorViews = parseAbi([
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
]);
const RATE_CALL = encodeFunctionData({ abi: accountantViews, functionName: 'getRate' });
const ROUND_CALL = encodeFunctionData({ abi: aggregatorViews, functionName: 'latestRoundData' });

/** The read of a price source on the chain, if it is read there. */
function priceCall(p: PriceSource, chainId: number): ReadCall | undefined {
  if (p.kind === 'fixed' || p.chainId !== chainId) return undefined;
  return { target: p.address as Hex, data: p.kind === 'rate' ? RATE_CALL : ROUND_CALL };
}

/** USD price as a decimal string of `raw` / 10^decimals x quote (exact for a quote of up to 6 decimals). */
function usdText(raw: bigint, decimals: number, quoteUsd = 1): string {
  if (quoteUsd === 1) return formatUnits(raw, decimals);
  return formatUnits(raw * BigInt(Math.round(quoteUsd * 1e6)), decimals + 6);
}

/** Raw answer, its decimals and USD price of a yield asset's price read (or fixed price); undefined when unread. */
function priceOf(y: YieldAssetConfig, data: Hex | undefined, chainId: number) {
  const p = y.price;
  if (p.kind === 'fixed') {
    if (y.holdings[0].chainId !== chainId) return undefined;
    return { amount: '0', decimals: 0, usdPrice: decimalText(p.usd) };
  }
  if (!data || data === '0x') return undefined;
  if (p.kind === 'rate') {
    const raw = decodeFunctionResult({ abi: accountantViews, functionName: 'getRate', data });
    return {
      amount: raw.toString(),
      decimals: p.decimals,
      usdPrice: usdText(raw, p.decimals, p.quoteUsdPrice),
    };
  }
  const answer = decodeFunctionResult({ abi: aggregatorViews, functionName: 'latestRoundData', data })[1];
  if (answer < 0n) return undefined;
  return { amount: answer.toString(), decimals: p.decimals, usdPrice: usdText(answer, p.decimals) };
}

/**
 * Each chain's plan, made once: a backfill takes a snapshot at every UTC day's close, and the
 * calls' ABI encoding (viem, and slow while not yet optimised) is the same each time. `reader.read`
 * is given the same frozen `calls` array, whose Multicall3 encoding it keeps (chain.ts).
 */
const planned = new WeakMap<ChainContracts, ReturnType<typeof planSnapshot>>();

/** Reads and returns the snapshot records of every vault on the chain at `at`. */
export function takeSnapshot(
  reader: ChainReader,
  contracts: ChainContracts,
  at: BlockStamp,
): Promise<Emitted[]> {
  return takeSnapshots(reader, contracts, [at])[0];
}

/**
 * The snapshot records of every vault on the chain at each of `at`, one promise per block: read
 * together (`reader.readAt`: one round trip for the day closes of a range), failing one by one.
 */
export function takeSnapshots(
  reader: ChainReader,
  contracts: ChainContracts,
  at: readonly BlockStamp[],
): Promise<Emitted[]>[] {
  let plan = planned.get(contracts);
  if (!plan) {
    plan = planSnapshot(contracts);
    planned.set(contracts, plan);
  }
  const p = plan;
  let reads: Promise<(Hex | undefined)[]>[];
  try {
    reads = reader.readAt(
      p.calls,
      at.map((b) => b.number),
    );
  } catch (e) {
    // A failure to even ask (the calls' encoding) fails each snapshot, as a failed read does.
    reads = at.map(() => Promise.reject(e));
  }
  return reads.map((answers, k) => answers.then((a) => snapshotRecords(contracts, p.plans, at[k], a)));
}

/** The records of a snapshot at `at` from its reads' answers (`plans`: where each vault's are). */
function snapshotRecords(
  contracts: ChainContracts,
  plans: ReturnType<typeof planSnapshot>['plans'],
  at: BlockStamp,
  answers: (Hex | undefined)[],
): Emitted[] {
  const chainId = contracts.chain.chainId;
  const out: Emitted[] = [];
  for (const { v, assets, first, yields, yieldAt } of plans) {
    const snap = (record: Record<string, unknown>) =>
      out.push({
        family: 'snapshots',
        record: { vault: v.slug, chainId, blockNumber: at.number, timestamp: at.timestamp, ...record },
      });
    const supply = uint(answers[first], 'totalSupply');
    if (supply !== undefined)
      snap({
        kind: 'SUPPLY',
        token: v.vaultAddress.toLowerCase(),
        amount: supply.toString(),
        decimals: v.decimals,
      });
    const state = decodeAccountantState(answers[first + 1]);
    const accountant = v.accountantAddress.toLowerCase();
    if (state)
      snap({
        kind: 'ACCOUNTANT',
        token: accountant,
        amount: state.exchangeRate.toString(),
        decimals: v.baseAsset.decimals,
        isPaused: state.isPaused,
      });
    const rate = answers[first + 2];
    if (rate)
      out.push({
        family: 'rates',
        record: {
          chainId,
          blockNumber: at.number,
          blockHash: at.hash,
          blockTimestamp: at.timestamp,
          txHash: NO_TX,
          logIndex: READ_LOG_INDEX,
          removed: false,
          vault: v.slug,
          accountant,
          rate: decodeFunctionResult({
            abi: accountantViews,
            functionName: 'getRate',
            data: rate,
          }).toString(),
          rateDecimals: v.baseAsset.decimals,
          source: 'READ',
          isPaused: state?.isPaused ?? false,
        },
      });
    assets.forEach((a, k) => {
      const balance = uint(answers[first + 3 + k], 'balanceOf');
      if (balance === undefined) return;
      snap({
        kind: 'ASSET_BALANCE',
        token: a.contractAddress.toLowerCase(),
        amount: balance.toString(),
        decimals: a.decimals,
        usdPrice: decimalText(a.price),
      });
    });
    yields.forEach(({ y, holding }, k) => {
      const pos = yieldAt[k];
      const price = priceOf(y, pos.price >= 0 ? answers[pos.price] : undefined, chainId);
      if (price)
        out.push({
          family: 'snapshots',
          record: {
            vault: v.slug,
            chainId: 0,
            blockNumber: at.number,
            timestamp: at.timestamp,
            kind: 'ASSET_PRICE',
            token: y.slug,
            ...price,
          },
        });
      const balance = pos.balance >= 0 ? uint(answers[pos.balance], 'balanceOf') : undefined;
      if (holding && balance !== undefined)
        snap({
          kind: 'ASSET_BALANCE',
          token: holding.contractAddress.toLowerCase(),
          amount: balance.toString(),
          decimals: y.decimals,
          ...(price ? { usdPrice: price.usdPrice } : {}),
        });
    });
  }
  return out;
}

/** The calls of a snapshot of every vault on the chain, and where each vault's answers are. */
function planSnapshot(contracts: ChainContracts) {
  const chainId = contracts.chain.chainId;
  const calls: ReadCall[] = [];
  const plans = contracts.vaults.map((v) => {
    const assets = v.liquidAssets.filter((a) => a.chainId === chainId);
    const yields = v.yieldAssets.map((y) => ({
      y,
      holding: y.holdings.find((h) => h.chainId === chainId),
      price: priceCall(y.price, chainId),
    }));
    const first = calls.length;
    calls.push(
      {
        target: v.vaultAddress as Hex,
        data: encodeFunctionData({ abi: erc20Views, functionName: 'totalSupply' }),
      },
      accountantStateCall(v.accountantAddress, isHubAccountant(v)),
      {
        target: v.accountantAddress as Hex,
        data: encodeFunctionData({ abi: accountantViews, functionName: 'getRate' }),
      },
      ...assets.map((a) => ({
        target: a.contractAddress as Hex,
        data: encodeFunctionData({
          abi: erc20Views,
          functionName: 'balanceOf',
          args: [v.vaultAddress as Hex],
        }),
      })),
    );
    const yieldAt = yields.map(({ holding, price }) => {
      const pos = { balance: -1, price: -1 };
      if (holding) {
        pos.balance = calls.length;
        calls.push({
          target: holding.contractAddress as Hex,
          data: encodeFunctionData({
            abi: erc20Views,
            functionName: 'balanceOf',
            args: [v.vaultAddress as Hex],
          }),
        });
      }
      if (price) {
        pos.price = calls.length;
        calls.push(price);
      }
      return pos;
    });
    return { v, assets, first, yields, yieldAt };
  });
  // Frozen: `reader.read` keeps the encoding of a frozen array (chain.ts).
  return { calls: Object.freeze(calls), plans };
}
