/** Encodes and publishes records of one family, keyed as docs/architecture.md, Events and partition keys says. */
import { topicName } from '../../bus/partition.ts';
import type { Bus } from '../../bus/types.ts';
import { errorMessage } from '../../core/errors.ts';
import type { EventCodec } from '../../schemas/codec.ts';
import { FAMILIES, type FamilyName } from '../../schemas/families.ts';
import type { SourceErrorRecord } from '../../schemas/records.ts';
import { faultCode } from './rpc.ts';

export type Publish = (family: FamilyName, records: object[]) => Promise<void>;

/** A `Publish` over `bus`, with each family's partition key. */
export function publisher(bus: Bus, codec: EventCodec, prefix: string): Publish {
  return async (family, records) => {
    if (!records.length) return;
    const msgs = await Promise.all(
      records.map(async (r) => ({
        key: FAMILIES[family].key(r as never),
        value: await codec.encode(family, r),
      })),
    );
    await bus.publish(topicName(prefix, family), msgs);
  };
}

/** A `source_errors` record for a failed read. */
export function sourceError(
  vault: string,
  chainId: number,
  source: string,
  operation: string,
  err: unknown,
  nowMs: number,
): SourceErrorRecord {
  return {
    vault,
    chainId,
    source,
    operation,
    message: errorMessage(err).slice(0, 1000),
    code: faultCode(err),
    timestamp: Math.floor(nowMs / 1000),
  };
}
