/**
 * Runs the roles: any subset of ingest, streams and api in this process, sharing one
 * bus and one store. Ctrl-C / SIGTERM drains: the API stops accepting, the consumer
 * finishes and commits its batch, then the bus and store close.
 */

import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { createApp, listen } from '../api/server.ts';
import type { Config } from '../core/config.ts';
import { createBus, createCodec, createStore } from '../core/context.ts';
import { VaultstreamError } from '../core/errors.ts';
import { acquire, ownerOf } from '../core/lock.ts';
import type { Logger } from '../core/log.ts';
import { publishRegistry } from '../ingest/registry.ts';
import { StreamProcessor } from '../streams/processor.ts';
import { migrate } from '../views/migrate.ts';

export type Role = 'ingest' | 'streams' | 'api';

export interface Running {
  processor?: StreamProcessor;
  server?: Server;
  stop(): Promise<void>;
}

/** Takes the embedded data directory when the config uses one (chDB store or in-process bus). */
export function claimDataDir(cfg: Config): () => void {
  if (cfg.store.url && cfg.bus.kind === 'kafka') return () => {};
  const dir = resolve(cfg.dataDir);
  const release = acquire(dir);
  if (!release)
    throw new VaultstreamError(
      'STORE_UNAVAILABLE',
      `data directory ${dir} is in use by process ${ownerOf(dir)}; stop it or use another dataDir`,
    );
  return release;
}

export async function runRoles(cfg: Config, roles: Role[], log: Logger): Promise<Running> {
  const release = claimDataDir(cfg);
  const bus = await createBus(cfg, log);
  const codec = createCodec(cfg);
  await bus.connect();
  const needsStore = roles.includes('streams') || roles.includes('api');
  const store = needsStore ? await createStore(cfg) : undefined;
  let ready = false;
  if (store && roles.includes('streams')) {
    const res = await migrate(store, { database: cfg.store.database, cluster: cfg.store.cluster }, log);
    if (res.applied.length) log.info({ applied: res.applied }, 'migrations applied');
  }
  ready = true;
  const running: Running = { stop: async () => {} };
  if (roles.includes('ingest')) {
    const n = await publishRegistry(cfg, bus, codec);
    log.info({ vaults: n }, 'vault registry published');
  }
  if (store && roles.includes('streams')) {
    running.processor = new StreamProcessor({ bus, store, codec, config: cfg, log });
    await running.processor.start();
  }
  if (store && roles.includes('api')) {
    const processor = running.processor;
    const app = createApp({
      store,
      config: cfg,
      // In one process the consumers bump the version as batches land; a lone API role re-reads
      // every few seconds (the cache TTL bounds staleness) until the data-version table arrives.
      dataVersion: processor ? () => processor.dataVersion : () => Math.floor(Date.now() / 5000),
      log,
      ready: () => ready,
      bus: running.processor
        ? { bus, groupId: cfg.streams.groupId, topics: running.processor.topics }
        : undefined,
    });
    running.server = await listen(app, cfg.api.host, cfg.api.port);
    const addr = running.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : cfg.api.port;
    log.info({ url: `http://${cfg.api.host}:${port}` }, 'API listening');
  }
  running.stop = async () => {
    await new Promise<void>((r) => (running.server ? running.server.close(() => r()) : r()));
    await running.processor?.stop();
    await bus.close();
    await store?.close();
    release();
  };
  return running;
}

/** Runs until SIGINT/SIGTERM, then drains and exits. */
export async function runUntilSignal(running: Running, log: Logger): Promise<void> {
  await new Promise<void>((resolve) => {
    const onSignal = (sig: string) => {
      log.info({ signal: sig }, 'stopping: draining the batch in flight');
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  await running.stop();
  log.info('stopped');
}
