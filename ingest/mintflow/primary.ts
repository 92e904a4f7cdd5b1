/**
 * The primary chain's side of the flow, read with viem `getLogs`: the relayer's
 * HookRelayed / HookFailed / Refunded (by CCTP nonce), and in the relay transaction
 * the composer's Deposited and the share OFT's OFTSent (by guid). One scan of new
 * blocks per poll serves every tracked flow; logs are kept by transaction. The client
 * reads through the service's EVM transport (rpc/evm-transport.ts: every RPC URL of the
 * chain, timeouts, retries); a range the provider refuses is halved.
 */
import {
  createPublicClient,
  decodeAbiParameters,
  type Hex,
  type Log,
  type PublicClient,
  type Transport,
} from 'viem';
import { VaultstreamError } from '../../core/errors.ts';
import { evmFaultOf } from '../../rpc/rpc-faults.ts';
import type { PrimaryChainSource, RelayOutcome } from './sources.ts';

/** topic0 of the events read. */
export const TOPICS = {
  HookRelayed: '0x2bc9010ea3ee76d6df3b0290d921f994557a78849ff1d6ca846d837609ccc929',
  HookFailed: '0x4fed457497d679964253a5733f499bdfad337c993562280356e6fa5d026109b6',
  Refunded: '0xfe509803c09416b28ff3d8f690c8b0c61462a892c46d5430c8fb20abe472daf0',
  Deposited: '0xa53b96f27930f89fac6e5802f6b77fcad303dde855a10e5ef076e730d1f43afa',
  OFTSent: '0x85496b760a4b7f8d66384b9df21b381f5d1b1e79f229a47aaf4c232edc2fe59a',
} as const;

export interface PrimaryOptions {
  /** viem client of the primary chain (or `transport` to build one: `chainTransport` of rpc/evm-transport.ts). */
  client?: PublicClient;
  transport?: Transport;
  relayer: string;
  /** Vault composers and share OFTs whose events are read. */
  composers: string[];
  ofts: string[];
  startBlock: number;
  confirmations: number;
  maxBlockRange: number;
}

/** A bytes32 argument that may be indexed (topic 1) or not (the data word). */
const word = (log: Log): string => (log.topics[1] ?? log.data.slice(0, 66)).toLowerCase();
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The primary chain source over viem; see `PrimaryChainSource`. */
export function viemPrimarySource(opts: PrimaryOptions): PrimaryChainSource {
  const given = opts.client ?? (opts.transport && createPublicClient({ transport: opts.transport }));
  const client = given as PublicClient;
  let range = BigInt(opts.maxBlockRange);
  const addresses = [opts.relayer, ...opts.composers, ...opts.ofts] as Hex[];
  const byTx = new Map<string, Log[]>();
  const relayerLogs: Log[] = [];
  let scanned = BigInt(opts.startBlock) - 1n;
  let syncing: Promise<void> | undefined;
  const times = new Map<bigint, number>();

  async function scan(): Promise<void> {
    if (!given)
      throw new VaultstreamError(
        'CONFIG_INVALID',
        'no RPC URL is configured for the mint flow primary chain',
        {
          hint: 'add the chain of mintFlow.primaryChainId with rpcUrls to chains[]',
        },
      );
    const head = (await client.getBlockNumber({ cacheTime: 0 })) - BigInt(opts.confirmations);
    while (scanned < head) {
      const from = scanned + 1n;
      const to = head < from + range - 1n ? head : from + range - 1n;
      let logs: Log[];
      try {
        logs = await client.getLogs({ address: addresses, fromBlock: from, toBlock: to });
      } catch (e) {
        // The provider refuses the range: ask for half of it (a one-block refusal is a real error).
        if (evmFaultOf(e)?.fault !== 'RANGE_TOO_LARGE' || to === from) throw e;
        range = (to - from + 1n) / 2n;
        continue;
      }
      for (const l of logs) {
        if (l.removed || !l.transactionHash) continue;
        byTx.set(l.transactionHash, [...(byTx.get(l.transactionHash) ?? []), l]);
        if (same(l.address, opts.relayer)) relayerLogs.push(l);
      }
      scanned = to;
    }
  }
  /** One scan at a time; concurrent callers share it. */
  const sync = () => {
    syncing ??= scan().finally(() => {
      syncing = undefined;
    });
    return syncing;
  };
  const blockTime = async (n: bigint) => {
    let t = times.get(n);
    if (t === undefined) {
      t = Number((await client.getBlock({ blockNumber: n })).timestamp);
      times.set(n, t);
    }
    return t;
  };
  const find = (topic: string, nonce: string) =>
    relayerLogs.find((l) => l.topics[0] === topic && word(l) === nonce.toLowerCase());

  return {
    async relay(nonce) {
      await sync();
      const log = find(TOPICS.HookRelayed, nonce) ?? find(TOPICS.HookFailed, nonce);
      if (!log?.transactionHash || log.blockNumber === null) return undefined;
      const receipt = await client.getTransactionReceipt({ hash: log.transactionHash });
      const out: RelayOutcome = {
        kind: log.topics[0] === TOPICS.HookRelayed ? 'relayed' : 'failed',
        txHash: log.transactionHash,
        blockNumber: log.blockNumber.toString(),
        blockTimestamp: await blockTime(log.blockNumber),
        gasUsed: receipt.gasUsed.toString(),
      };
      const txLogs = byTx.get(log.transactionHash) ?? [];
      const dep = txLogs.find(
        (l) => l.topics[0] === TOPICS.Deposited && opts.composers.some((c) => same(c, l.address)),
      );
      if (dep) {
        const [, , , assetAmt, shareAmt] = decodeAbiParameters(
          [
            { type: 'bytes32' },
            { type: 'bytes32' },
            { type: 'uint32' },
            { type: 'uint256' },
            { type: 'uint256' },
          ],
          dep.data,
        );
        out.deposited = { assetAmount: assetAmt.toString(), shareAmount: shareAmt.toString() };
      }
      const sent = txLogs.find(
        (l) => l.topics[0] === TOPICS.OFTSent && opts.ofts.some((o) => same(o, l.address)),
      );
      if (sent?.topics[1]) {
        const [dstEid, amountSent, amountReceived] = decodeAbiParameters(
          [{ type: 'uint32' }, { type: 'uint256' }, { type: 'uint256' }],
          sent.data,
        );
        out.oftSent = {
          guid: sent.topics[1].toLowerCase(),
          dstEid,
          amountSent: amountSent.toString(),
          amountReceived: amountReceived.toString(),
        };
      }
      return out;
    },
    async refund(nonce) {
      await sync();
      const log = find(TOPICS.Refunded, nonce);
      if (!log?.transactionHash || log.blockNumber === null) return undefined;
      return { txHash: log.transactionHash, blockTimestamp: await blockTime(log.blockNumber) };
    },
  };
}
