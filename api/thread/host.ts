/**
 * Starts the HTTP API on a thread of its own (`api.thread: worker`, docs/architecture.md#the-apis-thread)
 * and serves it what stays on the main thread: the store (chDB allows one session per process),
 * readiness, `/status` (the bus and the ingesters), the mint-flow lookup and the main registry's
 * metrics, over a MessagePort (api/thread/rpc.ts). The data version is sent whenever it changes,
 * with what it changed (api/events/changes.ts) for the event stream;
 * the thread's snapshots report to readiness and are asked to rebuild over the same port.
 */
import type { AddressInfo } from 'node:net';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import { registry } from '../../core/metrics.ts';
import { lowerThreadsExcept } from '../../core/priority.ts';
import type { Store } from '../../store/client.ts';
import type { StatusBody } from '../dashboard/status-html.ts';
import { type ChangeLog, type Changes, followVersions } from '../events/changes.ts';
import type { HandlerDeps } from '../handlers/types.ts';
import type { Readiness } from '../readiness.ts';
import type { SnapshotBuilt, SnapshotLink } from '../snapshot-readiness.ts';
import { relayLog } from './log.ts';
import { Peer } from './rpc.ts';
import { storeMethods } from './store-proxy.ts';

/** What the thread is started with (`workerData`). */
export interface ApiThreadData {
  /** The registry's thread label (core/metrics.ts). */
  metricsThread: 'api';
  /** The module the entry imports: the bundle's chunk or the TypeScript source. */
  module: string;
  port: MessagePort;
  config: Config;
  store: { kind: Store['kind']; database: string };
  version: string;
  logLevel: string;
  mintFlow: boolean;
}

/** The running API thread: where it listens, and its stop. */
export interface ApiThread {
  address(): AddressInfo | string | null;
  /** The thread's kernel id (Linux), the one left at the process's priority (api.pipelineNice). */
  readonly threadId: number | undefined;
  /** Stops accepting, lets the requests in flight finish, then ends the thread. */
  close(): Promise<void>;
}

export interface ApiThreadOptions {
  config: Config;
  store: Store;
  log: Logger;
  dataVersion: () => number | string;
  /** What each data version changed (the consumers' process), sent with it for the event stream. */
  changes?: ChangeLog;
  readiness: Pick<Readiness, 'check'>;
  status: () => Promise<StatusBody>;
  mintFlow?: HandlerDeps['mintFlow'];
  /** Readiness's side of the API's snapshots (api/snapshot-readiness.ts). */
  snapshots?: SnapshotLink;
  /**
   * Once the thread listens, the rest of the process runs at this nice value (core/priority.ts):
   * `api.pipelineNice` where this process runs the pipeline, 0 where the main thread only serves
   * the API's own reads (the API-only role).
   */
  pipelineNice: number;
}

/** A new data version and what it changed, as sent to the thread (the 'version' note). */
export interface VersionNote {
  version: string;
  changes: Changes | null;
}

/** Set by scripts/build.mjs in the bundle: the thread then runs the bundle's `api-thread` entry. */
declare const VAULTSTREAM_BUNDLE: boolean | undefined;

function threadModule(): string {
  return typeof VAULTSTREAM_BUNDLE !== 'undefined'
    ? new URL('../../dist/api-thread.js', import.meta.url).href
    : new URL('./worker.ts', import.meta.url).href;
}

/** The API thread's young generation: two 64 MB semi-spaces and the new large-object space. */
const API_YOUNG_GENERATION_MB = 3 * 64;

export async function startApiThread(opts: ApiThreadOptions): Promise<ApiThread> {
  const { port1, port2 } = new MessageChannel();
  const version = String(opts.dataVersion());
  const data: ApiThreadData = {
    metricsThread: 'api',
    module: threadModule(),
    port: port2,
    config: opts.config,
    store: { kind: opts.store.kind, database: opts.store.database },
    version,
    logLevel: opts.log.level,
    mintFlow: Boolean(opts.mintFlow),
  };
  const worker = new Worker(new URL('./entry.mjs', import.meta.url), {
    workerData: data,
    transferList: [port2],
    // A young generation of 64 MB semi-spaces (V8 gives it three times a semi-space): each scavenge
    // pauses every request in flight, and at Node's 16 MB they came several times as often
    // (docs/operations.md, "Embedded and distributed"). A --max-semi-space-size on the command
    // line overrides it, for every thread. stdout/stderr go to the process's.
    resourceLimits: { maxYoungGenerationSizeMb: API_YOUNG_GENERATION_MB },
  });
  const peer = new Peer(port1, {
    ...storeMethods(opts.store),
    readiness: () => opts.readiness.check(),
    status: () => opts.status(),
    metrics: () => registry.getMetricsAsJSON(),
    'mintFlow.lookup': ([signature]) =>
      opts.mintFlow ? opts.mintFlow.lookup(signature as string) : Promise.resolve('not_flow'),
  });
  peer.onNote('log', (line) => relayLog(opts.log, line));
  // The API's snapshots and readiness (api/snapshot-readiness.ts): what became current, and how to rebuild.
  peer.onNote('snapshot.built', (s) => opts.snapshots?.built(s as SnapshotBuilt));
  peer.onNote('snapshot.watch', (name) =>
    opts.snapshots?.onRefresh(name as string, () => peer.notify('snapshot.refresh', name)),
  );
  let started = false;
  let stopped = false;
  let dead = false;
  const failed = new Promise<never>((_, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the API thread exited (code ${code})`)));
  });
  failed.catch((err) => {
    dead = true;
    peer.close();
    if (!started || stopped) return;
    // The API is gone: the process stops, as it would after an uncaught error on its one thread.
    opts.log.fatal({ err: String(err) }, 'API thread failed');
    process.exitCode = 1;
    process.kill(process.pid, 'SIGTERM');
  });
  let address: AddressInfo | string | null;
  let tid: number | undefined;
  try {
    tid = await Promise.race([
      new Promise<number | undefined>((r) => peer.onNote('loaded', (t) => r(t as number))),
      failed,
    ]);
    address = await Promise.race([peer.call<AddressInfo | string | null>('listen'), failed]);
  } catch (err) {
    stopped = true;
    peer.close();
    await worker.terminate();
    throw err;
  }
  started = true;
  const nice = opts.pipelineNice;
  if (nice > 0 && tid) {
    // The pipeline below the API thread (docs/architecture.md#the-apis-thread): the threads the
    // main thread starts from now on take its new value.
    const lowered = lowerThreadsExcept([tid], nice);
    opts.log.debug({ apiThread: tid, lowered, nice }, 'API thread: the rest of the process runs below it');
  }
  // Each new data version, looked for every 20 ms (a string comparison), with what it changed.
  const stopFollowing = followVersions(
    opts.dataVersion,
    opts.changes,
    (v, changes) => peer.notify('version', { version: v, changes } satisfies VersionNote),
    { from: version },
  );
  return {
    address: () => address,
    threadId: tid,
    close: async () => {
      stopped = true;
      stopFollowing();
      if (!dead) await peer.call('close');
      peer.close();
      await worker.terminate();
    },
  };
}
