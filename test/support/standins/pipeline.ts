/**
 * The real embedded pipeline in this process for the Solana tests: the in-process
 * bus in a temp data directory, the stream consumers into chDB (migrations
 * applied), and the Koa API on 127.0.0.1:0, sharing one bus and one store as
 * `cli/roles.ts` does. The test starts its own ingesters on `bus`/`codec`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, listen } from '../../../api/server.ts';
import type { Bus } from '../../../bus/types.ts';
import { createBus, createCodec, createStore } from '../../../cli/wiring.ts';
import { type Config, parseConfig } from '../../../core/config.ts';
import { silentLogger } from '../../../core/log.ts';
import { publishRegistry } from '../../../ingest/registry.ts';
import type { EventCodec } from '../../../schemas/codec.ts';
import type { Store } from '../../../store/client.ts';
import { StreamProcessor } from '../../../streams/processor.ts';
import { migrate } from '../../../views/migrate.ts';

export interface Pipeline {
  config: Config;
  bus: Bus;
  codec: EventCodec;
  store: Store;
  processor: StreamProcessor;
  url: string;
  /** GET relative to the API, body parsed when JSON. */
  get(path: string): Promise<{ status: number; body: any }>;
  /** Resolves once everything published so far is stored. */
  drained(): Promise<void>;
  close(): Promise<void>;
}

export interface PipelineOptions {
  /** Raw config (validated with the defaults); `dataDir` is set here. */
  config: Record<string, unknown>;
  /** The API's on-demand mint-flow lookup (`mintFlow` of api/server.ts createApp; production passes the tracker). */
  mintFlow?: { lookup(signature: string): Promise<'tracked' | 'not_flow'> };
  /** A data directory to reuse (restart tests); default a fresh temp one. */
  dataDir?: string;
}

/** Starts bus, consumers, store and API; publishes the registry. */
export async function startPipeline(opts: PipelineOptions): Promise<Pipeline> {
  const own = !opts.dataDir;
  const dataDir = opts.dataDir ?? join(mkdtempSync(join(tmpdir(), 'vs-solana-')), 'data');
  // These suites read back what they just stored: no answer of an earlier data version
  // (api.cache.maxStaleMs, the live API's grace) stands in for the new one.
  const api = (opts.config.api ?? {}) as Record<string, unknown>;
  const cache = (api.cache ?? {}) as Record<string, unknown>;
  const config = parseConfig({
    ...opts.config,
    api: { ...api, cache: { maxStaleMs: 0, ...cache } },
    dataDir,
    streams: { maxWaitMs: 20 },
  });
  const bus = await createBus(config, silentLogger);
  await bus.connect();
  const codec = createCodec(config);
  const store = await createStore(config);
  await migrate(store, { database: config.store.database, cluster: config.store.cluster });
  const processor = new StreamProcessor({ bus, store, codec, config, log: silentLogger });
  await processor.start();
  await publishRegistry(config, bus, codec);
  await processor.drained();
  const app = createApp({
    store,
    config,
    dataVersion: () => processor.dataVersion,
    ready: () => true,
    mintFlow: opts.mintFlow,
  });
  const server: Server = await listen(app, '127.0.0.1', 0);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    config,
    bus,
    codec,
    store,
    processor,
    url,
    async get(path) {
      const res = await fetch(`${url}${path}`);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    drained: () => processor.drained(),
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      await processor.stop();
      await bus.close();
      await store.close();
      if (own) rmSync(join(dataDir, '..'), { recursive: true, force: true });
    },
  };
}
