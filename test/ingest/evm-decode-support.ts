/**
 * The decode-and-map harness of the EVM decoding tests: the test registry's contracts,
 * the block clock, and `run`, which decodes logs (holding the fast decoder equal to
 * viem's) and maps them to canonical records.
 */

import { decodeEventLog, type Hex } from 'viem';
import { expect } from 'vitest';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import {
  abiEventOf,
  type ContractRole,
  type DecodedLog,
  decodeLog,
  type RawLog,
} from '../../ingest/evm/decode.ts';
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
    // The ingester's decoder and viem's generic one agree on every variant.
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

const lowerAddresses = (v: unknown): unknown => {
  if (typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v)) return v.toLowerCase();
  if (Array.isArray(v)) return v.map(lowerAddresses);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, lowerAddresses(x)]));
  return v;
};

/**
 * viem's strict, generic decoding of `log` as `role` (addresses lower-cased, as the ingester
 * gives them): the oracle the ingester's decoder (ingest/evm/decode.ts) is held to.
 */
export function decodeLogGeneric(role: ContractRole, log: RawLog): DecodedLog | undefined {
  const item = abiEventOf(role, log);
  if (!item) return undefined;
  try {
    const d = decodeEventLog({
      abi: [item],
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
      strict: true,
    });
    return { log, role, event: d.eventName, args: lowerAddresses(d.args) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}
