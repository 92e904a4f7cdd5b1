/**
 * Builds the parts every role needs from the validated config: the bus (Kafka or
 * in-process), the codec (with a schema registry when configured) and the store.
 */
import { join, resolve } from 'node:path';
import { InProcessBus } from '../bus/inprocess.ts';
import type { Bus } from '../bus/types.ts';
import { codecFor, type EventCodec } from '../schemas/codec.ts';
import { createStore, type Store } from '../store/client.ts';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';

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
    logger: log,
  });
}

/** The codec of the configured topics (and schema registry, when one is set). */
export function createCodec(cfg: Config): EventCodec {
  return codecFor({ schemaRegistryUrl: cfg.bus.schemaRegistryUrl, topicPrefix: cfg.topicPrefix });
}

export { createStore, type Store };
