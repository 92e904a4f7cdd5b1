/**
 * The API's own thread (docs/architecture.md#the-apis-thread): the Koa app of api/server.ts with
 * its response cache, fast path, rate limiter and request metrics, listening on the API's port.
 * What the main thread holds is reached over the port api/thread/host.ts gave it: the store
 * (api/thread/store-proxy.ts), readiness, `/status`, the mint-flow lookup and the main
 * registry's metrics; the data version arrives whenever it changes. Started by
 * api/thread/entry.mjs; `listen` and `close` are called by the host.
 */
import type { Server } from 'node:http';
import { workerData } from 'node:worker_threads';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { registry } from '../../core/metrics.ts';
import { threadId } from '../../core/priority.ts';
import type { StatusBody } from '../dashboard/status-html.ts';
import type { Changes } from '../events/changes.ts';
import type { ReadinessReport } from '../readiness.ts';
import { closeServer, createApp, listen } from '../server.ts';
import type { SnapshotLink } from '../snapshot-readiness.ts';
import type { ApiThreadData, VersionNote } from './host.ts';
import { threadLogger } from './log.ts';
import { Peer } from './rpc.ts';
import { storeProxy } from './store-proxy.ts';

const data = workerData as ApiThreadData;
let server: Server | undefined;
const peer = new Peer(data.port, {
  listen: async () => {
    server = await listen(app, data.config.api.host, data.config.api.port);
    return server.address();
  },
  // Stops accepting, lets the requests in flight finish, then the app's snapshots (api/server.ts).
  close: async () => {
    if (server) await closeServer(server);
  },
});
let version = data.version;
// The event stream's feed (api/events/hub.ts): each version as it arrives, with its changes.
const versionListeners = new Set<(version: string, changes: Changes | null) => void>();
peer.onNote('version', (note) => {
  const n = note as VersionNote;
  version = n.version;
  for (const l of versionListeners) l(n.version, n.changes);
});
const log = threadLogger(peer, data.logLevel);
// This thread's snapshots and the main thread's readiness (api/snapshot-readiness.ts, api/thread/host.ts).
const refreshers = new Map<string, () => void>();
peer.onNote('snapshot.refresh', (name) => refreshers.get(name as string)?.());
const snapshots: SnapshotLink = {
  built: (s) => peer.notify('snapshot.built', s),
  onRefresh: (name, refresh) => {
    refreshers.set(name, refresh);
    peer.notify('snapshot.watch', name);
  },
};
const app = createApp({
  snapshots,
  store: storeProxy(peer, data.store),
  config: data.config,
  dataVersion: () => version,
  versions: (listener) => {
    versionListeners.add(listener);
    return () => versionListeners.delete(listener);
  },
  log,
  readiness: { check: () => peer.call<ReadinessReport>('readiness') },
  mintFlow: data.mintFlow ? { lookup: (signature) => peer.call('mintFlow.lookup', [signature]) } : undefined,
  status: () => peer.call<StatusBody>('status'),
  // Both threads' registries as one exposition: a family both hold (the loop histograms) once,
  // the series of each under it (their labels differ: thread="api").
  metrics: async () =>
    AggregatorRegistry.aggregate([
      await peer.call<Awaited<ReturnType<Registry['getMetricsAsJSON']>>>('metrics'),
      await registry.getMetricsAsJSON(),
    ]).metrics(),
});
// Its kernel thread id: the one thread the host leaves at the process's priority (api.pipelineNice).
peer.notify('loaded', threadId());
