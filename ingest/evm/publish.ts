/**
 * Publishing of the EVM ingester: records encoded with the newest Avro schema of
 * their family, one bus call per family (the record families at once, then the block
 * headers), keyed as
 * docs/architecture.md, Events and partition keys, says (vault slug, chain id for blocks). A retraction is the same record with
 * `removed: true`.
 */
import { topicName } from '../../bus/partition.ts';
import type { Bus, BusMessage } from '../../bus/types.ts';
import type { EventCodec } from '../../schemas/codec.ts';
import { FAMILIES, type FamilyName } from '../../schemas/families.ts';
import type { BlockRecord, SourceErrorRecord } from '../../schemas/records.ts';
import type { BlockHeader } from './chain.ts';
import type { Emitted } from './map-context.ts';
import type { RpcFault } from './rpc.ts';

export type PublishEmitted = ((items: Emitted[]) => Promise<void>) & {
  /**
   * Encodes `items` now; the function it resolves to writes them to the bus, as the call itself
   * would. A range's records are encoded while the previous range's publish is still being made
   * durable (ingest/evm/follower.ts), so only the writes wait for it.
   */
  prepare?: (items: Emitted[]) => Promise<() => Promise<void>>;
};

/**
 * A publisher of `Emitted` records over `bus`. Without a schema registry the codec's framing
 * needs no round trip, and records are encoded without an `await` each (a backfill publishes
 * them by the hundred thousand): whether it does is learnt from the first record of each family,
 * whose awaited encoding is compared with the synchronous one (a registry's framing, magic byte
 * and schema id, never equals the single-object framing).
 */
export function emittedPublisher(bus: Bus, codec: EventCodec, prefix: string): PublishEmitted {
  const syncFamilies = new Map<FamilyName, boolean>();
  const prepare = async (items: Emitted[]) => {
    const byFamily = new Map<FamilyName, BusMessage[]>();
    for (const { family, record } of items) {
      let list = byFamily.get(family);
      if (!list) {
        list = [];
        byFamily.set(family, list);
      }
      const key = FAMILIES[family].key(record as never);
      let sync = syncFamilies.get(family);
      if (sync) {
        list.push({ key, value: codec.encodeSync(family, record) });
        continue;
      }
      const value = await codec.encode(family, record);
      if (sync === undefined) {
        sync = value.equals(codec.encodeSync(family, record));
        syncFamilies.set(family, sync);
      }
      list.push({ key, value });
    }
    // Each family is its own topic (only the order within a topic is kept, and is): the record
    // families are published at once, one durable write each in parallel rather than one after
    // the other. The block headers go last, once every record is durable: the chain's watermark
    // (blocks_raw) never moves past records not on the bus, nor back (a retraction's ancestor).
    const blocks = byFamily.get('blocks');
    byFamily.delete('blocks');
    return async () => {
      await settleAll([...byFamily].map(([family, msgs]) => bus.publish(topicName(prefix, family), msgs)));
      if (blocks) await bus.publish(topicName(prefix, 'blocks'), blocks);
    };
  };
  const publish: PublishEmitted = async (items) => (await prepare(items))();
  publish.prepare = prepare;
  return publish;
}

/** Waits for every promise; then throws the first failure, if any (no write left running behind a failure). */
async function settleAll(all: Promise<void>[]): Promise<void> {
  const failed = (await Promise.allSettled(all)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** The `blocks` record of an ingested (or, with `removed`, orphaned) header. */
export function blockEmitted(chainId: number, h: BlockHeader, removed = false): Emitted {
  const record: BlockRecord = {
    chainId,
    blockNumber: h.number,
    blockHash: h.hash,
    parentHash: h.parentHash,
    blockTimestamp: h.timestamp,
    removed,
  };
  return { family: 'blocks', record };
}

/** The retraction of a published record. */
export function retraction(e: Emitted): Emitted {
  return { family: e.family, record: { ...e.record, removed: true } };
}

/** `source_errors` records of one failure, one per vault of the chain. */
export function sourceErrors(
  vaults: string[],
  chainId: number,
  operation: string,
  code: RpcFault['fault'] | 'REORG_TOO_DEEP' | 'GENESIS_MISMATCH' | 'SNAPSHOT_FAILED' | 'ROUND_FAILED',
  message: string,
  nowMs: number,
): Emitted[] {
  return vaults.map((vault) => {
    const record: SourceErrorRecord = {
      vault,
      chainId,
      source: 'evm-rpc',
      operation,
      message: message.slice(0, 1000),
      code,
      timestamp: Math.floor(nowMs / 1000),
    };
    return { family: 'source_errors', record };
  });
}
