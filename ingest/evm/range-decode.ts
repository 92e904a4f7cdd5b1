/**
 * A range's logs as the follower maps them (follower.ts): decoded by the role of the contract
 * that emitted them, in chain order, and the `decimals()` of tokens they name that the registry
 * does not describe, read on chain once and kept.
 */
import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { erc20Views } from './abis.ts';
import type { ChainReader } from './chain.ts';
import type { ChainContracts } from './contracts.ts';
import { type DecodedLog, decodeLog, type RawLog } from './decode.ts';

/** The logs decoded, oldest first; one no role decodes is counted in `unpublished` as `undecodable`. */
export function decodeRange(
  contracts: ChainContracts,
  logs: RawLog[],
  unpublished: Map<string, number>,
): DecodedLog[] {
  const out: DecodedLog[] = [];
  for (const log of logs) {
    const c = contracts.byAddress.get(log.address.toLowerCase());
    const d = c && decodeLog(c.role, log);
    if (d) out.push(d);
    else unpublished.set('undecodable', (unpublished.get('undecodable') ?? 0) + 1);
  }
  return out.sort((a, b) => a.log.blockNumber - b.log.blockNumber || a.log.logIndex - b.log.logIndex);
}

/** Adds to `decimals` the on-chain `decimals()` (at `block`) of tokens in the events that the registry does not describe. */
export async function readDecimals(
  reader: ChainReader,
  contracts: ChainContracts,
  decoded: DecodedLog[],
  block: number,
  decimals: Map<string, number>,
): Promise<void> {
  const tokens = new Set<string>();
  for (const d of decoded)
    for (const key of ['asset', 'depositAsset', 'feeAsset', 'wantToken'])
      if (typeof d.args[key] === 'string') tokens.add(d.args[key] as string);
  const unknown = [...tokens].filter(
    (t) => !decimals.has(t) && !/^0x0{40}$/.test(t) && !contracts.byShare.has(t),
  );
  if (!unknown.length) return;
  const data = encodeFunctionData({ abi: erc20Views, functionName: 'decimals' });
  const answers = await reader.read(
    unknown.map((t) => ({ target: t as Hex, data })),
    block,
  );
  unknown.forEach((t, k) => {
    const a = answers[k];
    if (a) decimals.set(t, decodeFunctionResult({ abi: erc20Views, functionName: 'decimals', data: a }));
  });
}
