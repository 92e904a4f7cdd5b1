/**
 * Runs the roles: any subset of ingest, streams and api in this process, sharing one
 * bus and one store. Ctrl-C / SIGTERM drains: the API stops accepting, the consumer
 * finishes and commits its batch, then the bus and store close.
 */

import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { ChangeLog } from '../api/events/changes.ts';
import type { ChainPhase, ReadinessCondition } from '../api/readiness.ts';
import type { Config } from '../core/config.ts';
import { VaultstreamError } from '../core/errors.ts';
import { acquire, ownerOf } from '../core/lock.ts';
import type { Logger } from '../core/log.ts';
import { chainSchema, vaultSchema } from '../core/settings/registry.ts';
import { mintFlowSchema, solanaSchema } from '../core/settings/solana.ts';
import type { Devnet } from '../devnet/run.ts';
import type { startMintFlowTracker } from '../ingest/mintflow/tracker.ts';
import type { Store } from '../store/client.ts';
import type { StreamProcessor } from '../streams/processor.ts';
import type { Settler } from '../views/settle.ts';
import type { ProgressDisplay } from './progress.ts';
import { createBus, createCodec, createStore } from './wiring.ts';

// The devnet, the ingesters (viem, @solana/*), the consumers, the API and the chDB migrations load
// in the roles that run them (`await import()`): `vaultstream sql` loads this file for claimDataDir.

export type Role = 'ingest' | 'streams' | 'api';

export interface Running {
  processor?: StreamProcessor;
  /** The metrics settle loop of the streams role (views/settle.ts). */
  settler?: Settler;
  /** The API's listening server (on its own thread or this one): where it listens. */
  server?: { address(): AddressInfo | string | null; readonly threadId?: number };
  stop(): Promise<void>;
}

/**
 * Takes the data directory when the process keeps state there: the embedded store or bus, or an
 * ingester's checkpoints (`ingest`). Only a process on a ClickHouse server and Kafka with no
 * ingester keeps none, and shares it.
 */
export function claimDataDir(cfg: Config, ingest = false): () => void {
  if (cfg.store.url && cfg.bus.kind === 'kafka' && !ingest) return () => {};
  const dir = resolve(cfg.dataDir);
  const release = acquire(dir);
  if (!release)
    throw new VaultstreamError(
      'STORE_UNAVAILABLE',
      `data directory ${dir} is in use by process ${ownerOf(dir)}; stop it or use another dataDir`,
    );
  return release;
}

/**
 * Starts the devnet (anvil nodes, contracts, simulator) and returns the config with its
 * chains and registry in place of the configured ones: the rest of the process then
 * reads the devnet like any other chains.
 */
async function withDevnet(
  cfg: Config,
  log: Logger,
  progress?: ProgressDisplay,
): Promise<{ cfg: Config; devnet: Devnet }> {
  log.info({ chains: cfg.devnet.chainIds, backfillDays: cfg.devnet.backfillDays }, 'devnet: starting');
  // The data directory is ours (claimed) and the store and bus are not open yet: a previous devnet's data can go.
  const { startDevnet } = await import('../devnet/run.ts');
  const devnet = await startDevnet({
    settings: cfg.devnet,
    dataDir: cfg.dataDir,
    log,
    clearPrevious: true,
    embedded: true,
    onProgress: progress?.devnet,
  });
  const chains = devnet.chains.map((c) => chainSchema.parse(c));
  const vaults = devnet.vaults.map((v) => vaultSchema.parse(v));
  // The devnet's Solana side (LiteSVM RPC) and the mint flow's service stand-ins.
  const solana = solanaSchema.parse({ ...cfg.solana, ...devnet.solana });
  const mintFlow = mintFlowSchema.parse({ ...cfg.mintFlow, ...devnet.mintFlow });
  return { cfg: { ...cfg, chains, vaults, solana, mintFlow }, devnet };
}

export async function runRoles(configured: Config, roles: Role[], log: Logger): Promise<Running> {
  const release = claimDataDir(configured, roles.includes('ingest'));
  let cfg = configured;
  let devnet: Devnet | undefined;
  // Live backfill progress per chain (cli/progress.ts): bars on a terminal, else periodic log lines.
  const { nothingToIngest, startProgress } = await import('./progress.ts');
  const progress: ProgressDisplay | undefined = roles.includes('ingest')
    ? startProgress({ log, intervalMs: cfg.ingest.progressLogIntervalMs })
    : undefined;
  if (roles.includes('ingest') && cfg.devnet.enabled)
    ({ cfg, devnet } = await withDevnet(cfg, log, progress));
  const bus = await createBus(cfg, log);
  const codec = createCodec(cfg);
  await bus.connect();
  const needsStore = roles.includes('streams') || roles.includes('api');
  // The store's writes, watched: /readyz is 503 as soon as one fails for lack of space (api/store-writable.ts).
  const { watchStoreWrites } = await import('../api/store-writable.ts');
  const writes = needsStore ? watchStoreWrites(await createStore(cfg)) : undefined;
  const store = writes?.store;
  let ready = false;
  if (store && roles.includes('streams')) {
    const { migrate } = await import('../views/migrate.ts');
    const res = await migrate(store, { database: cfg.store.database, cluster: cfg.store.cluster }, log);
    if (res.applied.length) log.info({ applied: res.applied }, 'migrations applied');
    const { writeConfigTables } = await import('../views/settings.ts');
    await writeConfigTables(store, cfg);
  }
  ready = true;
  const running: Running = { stop: async () => {} };
  const stoppers: (() => Promise<void>)[] = [];
  // What each role adds to readiness beyond the chains and migrations (api/readiness.ts).
  const readinessConditions: ReadinessCondition[] = writes ? [writes.condition] : [];
  let ingestProgress: (() => Record<string, unknown>) | undefined;
  let mintFlow: ReturnType<typeof startMintFlowTracker> | undefined;
  // Ready (docs/architecture.md, API contract) once migrations ran, every followed chain is live and stored (api/readiness.ts).
  let evmProgress: (() => ChainPhase[]) | undefined;
  // The EVM followers' first round waits until the other roles have started (the API's and SQL
  // interface's module loading and documents): a backfill's first ranges then have the main thread
  // to themselves. Their progress (phase `starting`) is served meanwhile.
  let rolesStarted = () => {};
  const startAfter = new Promise<void>((resolve) => {
    rolesStarted = resolve;
  });
  if (roles.includes('ingest')) {
    const nothing = nothingToIngest(cfg);
    if (nothing) log.warn(nothing);
    const [
      { publishRegistry },
      { startEvmIngest },
      { startSolanaIngest },
      { solanaReadiness },
      { startMintFlowTracker },
    ] = await Promise.all([
      import('../ingest/registry.ts'),
      import('../ingest/evm/index.ts'),
      import('../ingest/solana/index.ts'),
      import('../ingest/solana/readiness.ts'),
      import('../ingest/mintflow/tracker.ts'),
    ]);
    const n = await publishRegistry(cfg, bus, codec);
    log.info({ vaults: n }, 'vault registry published');
    const evm = startEvmIngest({ config: cfg, bus, codec, log, startAfter });
    progress?.follow(() => evm.progress());
    const solana = startSolanaIngest({ config: cfg, bus, codec, log });
    readinessConditions.push(solanaReadiness(solana));
    mintFlow = startMintFlowTracker({ config: cfg, bus, codec, log });
    const tracker = mintFlow;
    stoppers.push(
      () => tracker.stop(),
      () => solana.stop(),
      () => evm.stop(),
    );
    evmProgress = () => evm.progress();
    ingestProgress = () => ({
      evm: evm.progress(),
      solana: solana.progress(),
      mintFlows: tracker.open().length,
    });
  }
  // What each data version changed, for the API's event stream (api/events/changes.ts): told by
  // the consumers and the settle of this process, whose counters make the data version.
  let changeLog: ChangeLog | undefined;
  if (store && roles.includes('streams')) {
    const { StreamProcessor } = await import('../streams/processor.ts');
    const processor = new StreamProcessor({ bus, store, codec, config: cfg, log });
    running.processor = processor;
    if (roles.includes('api')) {
      const { ChangeLog } = await import('../api/events/changes.ts');
      const told = new ChangeLog();
      processor.on('landed', (b) => told.landed(b));
      changeLog = told;
    }
    await processor.start();
    const { Settler } = await import('../views/settle.ts');
    const chains = evmProgress;
    // Without an ingester here, the consumers catch up first: on what others published before they
    // started (a restart's backlog, or everything, after a crash), as a backfill of this process.
    let catchingUp = !chains;
    if (catchingUp)
      processor.drained().then(
        () => {
          catchingUp = false;
          log.info('consumers caught up with what was published before they started');
        },
        () => undefined, // stopped first
      );
    running.settler = new Settler(store, {
      intervalMs: cfg.streams.settleIntervalMs,
      log,
      // Settles at most every 30 s while an EVM chain of this process backfills, or the consumers
      // catch up (views/settle.ts), and readiness waits for the settle after it.
      backfilling: chains
        ? () => chains().some((c) => c.phase === 'starting' || c.phase === 'backfill')
        : () => catchingUp,
      drained: () => processor.drained(),
      onSettled: (r, version) => changeLog?.settled(version, r.settled.keys()),
    });
    running.settler.start();
  }
  if (needsStore) {
    // The consumer group's lag, for /metrics and, on Kafka, readiness, whichever process runs the
    // consumers (streams/consumer-lag.ts).
    const [{ ConsumerLag }, { consumedTopics }, { readConsumerLagWith }] = await Promise.all([
      import('../streams/consumer-lag.ts'),
      import('../streams/processor.ts'),
      import('../core/metrics.ts'),
    ]);
    const lag = new ConsumerLag(bus, {
      groupId: cfg.streams.groupId,
      topics: consumedTopics(cfg.topicPrefix),
    });
    readConsumerLagWith(() => lag.read());
    stoppers.push(async () => readConsumerLagWith(undefined));
    const max = cfg.api.readiness.maxConsumerLag;
    if (bus.kind === 'kafka')
      readinessConditions.push({ name: 'consumers', reasons: () => lag.reasons(max) });
  }
  let stopApi = async () => {};
  // A taken SQL port fails the start before the API listens (the interface itself starts last).
  if (store) await (await import('./sql.ts')).checkSqlPort(cfg, store);
  if (store && roles.includes('api')) {
    const [
      { createApp, listen, closeServer, statusBody },
      { Readiness },
      { pacedVersion },
      { SnapshotReadiness },
      { followVersions },
    ] = await Promise.all([
      import('../api/server.ts'),
      import('../api/readiness.ts'),
      import('../api/data-version.ts'),
      import('../api/snapshot-readiness.ts'),
      import('../api/events/changes.ts'),
    ]);
    // The API's snapshots (token holders) hold the data the process is ready with (api/snapshot-readiness.ts).
    const snapshots = new SnapshotReadiness();
    readinessConditions.push(...snapshots.conditions);
    const settler = running.settler;
    // In one process the consumers bump the version as batches land, and a settle of the metrics
    // tables is a new version too (the change log counts both); a lone API role reads the stored
    // data version. Either moves on at most once per api.cache.versionIntervalMs (api/data-version.ts).
    const changes = changeLog;
    const dataVersion = changes
      ? pacedVersion(() => changes.version(), { intervalMs: cfg.api.cache.versionIntervalMs })
      : await storedVersion(store, cfg.api.cache.versionIntervalMs, log);
    const checked = new Readiness({
      store,
      maxLagSeconds: cfg.api.readiness.maxLagSeconds,
      migrated: () => ready,
      settled: settler && (() => settler.caughtUp),
      progress: evmProgress,
      conditions: readinessConditions,
      // Without an ingester here: every configured chain, whoever ingests it (else every stored chain).
      chainIds: () => (evmProgress ? [] : cfg.chains.map((c) => c.chainId)),
    });
    const readiness = snapshots.watching(checked);
    const busStatus = running.processor
      ? { bus, groupId: cfg.streams.groupId, topics: running.processor.topics }
      : undefined;
    const pipeline = roles.includes('ingest') || roles.includes('streams');
    if (cfg.api.thread === 'worker') {
      // The API on a thread of its own (docs/architecture.md#the-apis-thread).
      const { startApiThread } = await import('../api/thread/host.ts');
      const thread = await startApiThread({
        config: cfg,
        store,
        log,
        dataVersion,
        changes,
        readiness,
        snapshots,
        mintFlow,
        status: () => statusBody({ store, bus: busStatus, ingestProgress }),
        // Only a pipeline goes below the API: in the API-only role the main thread runs its reads.
        pipelineNice: pipeline ? cfg.api.pipelineNice : 0,
      });
      running.server = thread;
      stopApi = () => thread.close();
      // The devnet's nodes, stand-ins for remote chains, run below the API too (api.pipelineNice).
      if (devnet && cfg.api.pipelineNice > 0)
        (await import('../devnet/anvil.ts')).lowerNodes(cfg.api.pipelineNice);
    } else {
      const app = createApp({
        store,
        config: cfg,
        dataVersion,
        versions: (listener) => followVersions(dataVersion, changes, listener),
        log,
        readiness,
        snapshots,
        mintFlow,
        ingestProgress,
        bus: busStatus,
      });
      const server = await listen(app, cfg.api.host, cfg.api.port);
      running.server = server;
      stopApi = () => closeServer(server);
    }
    const addr = running.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : cfg.api.port;
    const url = `http://${cfg.api.host}:${port}`;
    log.info({ url }, 'API listening');
    process.stdout.write(`vaultstream API ${url}/v1  docs ${url}/docs  status ${url}/status\n`);
  }
  // The data team's ClickHouse-compatible SQL interface (embedded store only).
  const stopSql = store ? await (await import('./sql.ts')).serveSql(cfg, store, log) : undefined;
  running.stop = async () => {
    await stopSql?.();
    progress?.stop();
    await stopApi();
    for (const stopIngester of stoppers) await stopIngester();
    // The settle loop first: it may be waiting for the consumers, whose wait a stop rejects.
    await running.settler?.stop();
    await running.processor?.stop();
    await bus.close();
    await store?.close();
    await devnet?.stop();
    release();
  };
  rolesStarted();
  return running;
}

/** The API-only role's data version, read from the store (first read done before serving). */
async function storedVersion(store: Store, minIntervalMs: number, log: Logger): Promise<() => string> {
  const { storedDataVersion } = await import('../api/data-version.ts');
  const v = storedDataVersion(store, { log, minIntervalMs });
  await v.refresh();
  return () => v.current();
}

/**
 * Catches the first SIGINT/SIGTERM from the moment a long-running command starts: a signal during
 * start-up (the devnet writing its history, migrations) then stops the process cleanly once it is
 * up, instead of Node's default handler killing it midway (children left running, exit by
 * signal). A signal within a second of the first is the same request delivered twice: Ctrl-C on
 * `npm start` reaches this process from the terminal and again from npm, which forwards it. A
 * signal after that is Node's again: it kills at once.
 */
export function catchStopSignal(log: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const onSignal = (sig: string) => {
      log.info({ signal: sig }, 'stopping: draining the batch in flight');
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      const duplicate = () => {};
      process.on('SIGINT', duplicate);
      process.on('SIGTERM', duplicate);
      setTimeout(() => {
        process.off('SIGINT', duplicate);
        process.off('SIGTERM', duplicate);
      }, 1_000).unref();
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** Runs until `signal` (catchStopSignal) arrives, then drains and exits. */
export async function runUntilSignal(running: Running, log: Logger, signal: Promise<void>): Promise<void> {
  // A role with nothing left to do (an ingester with nothing configured) has no timer or socket
  // keeping the process up, and would exit at once (racing a signal sent meanwhile) instead of
  // running until stopped like any role.
  const keepAlive = setInterval(() => {}, 1 << 30);
  await signal;
  clearInterval(keepAlive);
  await running.stop();
  log.info('stopped');
}
