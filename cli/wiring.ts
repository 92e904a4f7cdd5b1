/**
 * The composition root: builds the parts every role needs from the validated config, the
 * bus (Kafka or in-process), the codec (with a schema registry when configured) and the
 * store. It sits at the top, beside the command, because it knows every implementation;
 * `core/` below it imports nothing of bus, schemas or store (test/unit/layers.test.ts).
 */
import { join, resolve } from 'node:path';
import { InProcessBus } from '../bus/inprocess.ts';
import type { Bus } from '../bus/types.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/log.ts';
import { codecFor, type EventCodec } from '../schemas/codec.ts';
import { createStore, type Store } from '../store/client.ts';

export async function createBus(cfg: Config, log: Logger): Promise<Bus> {
  if (cfg.bus.kind === 'kafka') {
    const { KafkaBus } = await import('../bus/kafka.ts');
    return new KafkaBus({
      brokers: cfg.bus.brokers,
      clientId: cfg.bus.clientId,
      partitions: cfg.bus.partitions,
      sessionTimeoutMs: cfg.bus.sessionTimeoutMs,
      logger: log,
    });
  }
  return new InProcessBus({
    dir: join(resolve(cfg.dataDir), 'bus'),
    partitions: cfg.bus.partitions,
    retentionCheckMs: cfg.bus.retentionCheckMs,
    logger: log,
  });
}

/** The codec of the configured topics (and schema registry, when one is set). */
export function createCodec(cfg: Config): EventCodec {
  return codecFor({ schemaRegistryUrl: cfg.bus.schemaRegistryUrl, topicPrefix: cfg.topicPrefix });
}

export { createStore, type Store };
