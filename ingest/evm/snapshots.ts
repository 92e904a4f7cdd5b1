/**
 * State snapshots of a chain at one block, in one Multicall3 `aggregate3`: per vault
 * on the chain, the share's `totalSupply()` (SUPPLY), the accountant's state (an
 * ACCOUNTANT snapshot with `isPaused`, amount = the state's exchange rate) and
 * `getRate()` (a READ rate), and the vault's balance of each configured liquid asset
 * of the chain (ASSET_BALANCE). A read that reverts leaves its record out; the
 * rest of the snapshot stands.
 */
import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { accountantViews, erc20Views } from './abis.ts';
import { accountantStateCall, decodeAccountantState } from './accountant.ts';
import type { BlockHeader, ChainReader, ReadCall } from './chain.ts';
import { type ChainContracts, decimalText } from './contracts.ts';
import type { Emitted } from './map.ts';

/** READ rates have no log: this log index sorts them after every real log of their block. */
export const READ_LOG_INDEX = 2_147_483_647;
/** The transaction hash of a READ rate: none. */
export const NO_TX = `0x${'0'.repeat(64)}`;

const uint = (data: Hex | undefined, fn: 'totalSupply' | 'balanceOf') =>
  data ? decodeFunctionResult({ abi: erc20Views, functionName: fn, data }) : undefined;

/** Reads and returns the snapshot records of every vault on the chain at `at`. */
export async function takeSnapshot(
  reader: ChainReader,
  contracts: ChainContracts,
  at: BlockHeader,
): Promise<Emitted[]> {
  const chainId = contracts.chain.chainId;
  const calls: ReadCall[] = [];
  const plans = contracts.vaults.map((v) => {
    const assets = v.liquidAssets.filter((a) => a.chainId === chainId);
    const first = calls.length;
    calls.push(
      {
        target: v.vaultAddress as Hex,
        data: encodeFunctionData({ abi: erc20Views, functionName: 'totalSupply' }),
      },
      accountantStateCall(v.accountantAddress),
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
    return { v, assets, first };
  });
  const answers = await reader.read(calls, at.number);
  const out: Emitted[] = [];
  for (const { v, assets, first } of plans) {
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
  }
  return out;
}
