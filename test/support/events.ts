/**
 * The building blocks the hand-made scenarios share: time units, zero addresses,
 * fixed-width hex, numbered blocks whose hashes are unique across chains, and the
 * registry record of a scenario vault.
 */
import type { RegistryRecord } from '../../schemas/records.ts';

export const HOUR = 3_600;
export const DAY = 86_400;
export const EVM_ZERO = '0x0000000000000000000000000000000000000000';
/** The Solana system program: the from/to of mints and burns. */
export const SOLANA_ZERO = '11111111111111111111111111111111';

/** `n` as a 0x-prefixed hex string of exactly `bytes` bytes (an address for 20, a hash for 32). */
export const hex = (n: number | bigint, bytes: number) =>
  `0x${BigInt(n)
    .toString(16)
    .padStart(bytes * 2, '0')}`;

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** A deterministic base58 string of `len` chars (a Solana key, hash or signature); `k` varies it. */
export const base58 = (len: number, k = 0) =>
  Array.from({ length: len }, (_, i) => BASE58[(i * 7 + k) % 58]).join('');

export interface BlockFields {
  chainId: number;
  blockNumber: number;
  blockHash: string;
  blockTimestamp: number;
}

/** The chain fields of an event alone in its block's single transaction. */
export interface ChainFields extends BlockFields {
  txHash: string;
  logIndex: number;
  removed: false;
}

/**
 * A block counter starting after `last`: every call opens the next block number on
 * `chainId` at `ts`, with a hash unique to (chain, number).
 */
export function blockSequence(last: number): (chainId: number, ts: number) => BlockFields {
  let n = last;
  return (chainId, ts) => {
    n++;
    return {
      chainId,
      blockNumber: n,
      blockHash: hex(BigInt(chainId) * 10n ** 12n + BigInt(n), 32),
      blockTimestamp: ts,
    };
  };
}

/** Like `blockSequence`, with the event's transaction (one per block) and `logIndex` (default: from the block number). */
export function eventSequence(
  last: number,
  logIndexOf: (blockNumber: number) => number = () => 0,
): (chainId: number, ts: number, logIndex?: number) => ChainFields {
  const next = blockSequence(last);
  return (chainId, ts, logIndex) => {
    const b = next(chainId, ts);
    return {
      ...b,
      txHash: hex(0x7000000 + b.blockNumber, 32),
      logIndex: logIndex ?? logIndexOf(b.blockNumber),
      removed: false,
    };
  };
}

/** The registry record of scenario vault number `i` (address 0x7a000 + i, 6 decimals, base asset at 1 USD). */
export function scenarioRegistry(
  slug: string,
  i: number,
  fields: Partial<RegistryRecord> = {},
): RegistryRecord {
  return {
    slug,
    status: 'active',
    updatedAt: 1_700_000_000_000,
    vaultAddress: hex(0x7a000 + i, 20),
    name: slug,
    symbol: slug.toUpperCase(),
    decimals: 6,
    chainIds: [98866, 1],
    solanaMint: '',
    baseAssetUsdPrice: '1',
    baseAssetDecimals: 6,
    info: '{}',
    ...fields,
  };
}
