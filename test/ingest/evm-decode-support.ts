/**
 * The decode-and-map harness of the EVM decoding tests: the test registry's contracts,
 * the block clock, and `run`, which decodes logs (holding the fast decoder equal to
 * viem's) and maps them to canonical records.
 */
import { expect } from 'vitest';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import { type ContractRole, decodeLog, decodeLogGeneric, type RawLog } from '../../ingest/evm/decode.ts';
import { mapLogs } from '../../ingest/evm/map.ts';
import { addr, blockHash, canonical, testConfig, txHash } from './evm-support.ts';

const config = testConfig();
const contracts = chainContracts(config, config.chains[0]);
const roleOf = (l: RawLog) => contracts.byAddress.get(l.address.toLowerCase())?.role as ContractRole;
export const TS = 1_760_000_000;
export const alice = addr(0xa11ce);
export const bob = addr(0xb0b);
export const ZERO = addr(0);

/** Decodes and maps `logs` (one block each), with `paused` as the accountant state after every block. */
export function run(logs: RawLog[], paused = false, decimals = new Map<string, number>()) {
  const decoded = logs.map((l) => {
    const d = decodeLog(roleOf(l), l);
    if (!d) throw new Error(`log ${l.logIndex} did not decode`);
    // The fast word-slicing decoder and viem's generic one agree on every variant.
    expect(d).toEqual(decodeLogGeneric(roleOf(l), l));
    return d;
  });
  const res = mapLogs({ contracts, blockTime: (n) => TS + n, decimals, pausedAfter: () => paused }, decoded);
  return { records: canonical(res.emitted), unpublished: res.unpublished };
}

export const at = (tx: number, index: number, block = 100) => ({ block, tx, index });
export const ident = (tx: number, index: number, block = 100) => ({
  chainId: 31337,
  blockNumber: block,
  blockHash: blockHash(block),
  blockTimestamp: TS + block,
  txHash: txHash(tx),
  logIndex: index,
  removed: false,
  vault: 'v1',
});
