/**
 * An API on real data: NDJSON events replayed through the real CLI into a fresh
 * embedded data directory (bus + chDB), then the Koa app of api/server.ts over that
 * store on 127.0.0.1:0, in this process. Endpoint tests assert values against the
 * events they wrote.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiDeps, closeServer, createApp, listen } from '../../api/server.ts';
import type { SnapshotLink } from '../../api/snapshot-readiness.ts';
import { type Config, parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { runCli } from './cli.ts';

export interface ApiHarness {
  url: string;
  store: Store;
  config: Config;
  dataDir: string;
  /** GET (or any method with `init`) relative to the server, body parsed as JSON when it is JSON. */
  request(
    path: string,
    init?: RequestInit,
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Raw config overrides (validated with the defaults); `dataDir` is set by the harness. */
  config?: Record<string, unknown>;
  /** The API's clock (ms); default `Date.now`. */
  clock?: () => number;
  /** Builds the `/readyz` check over the harness's store (default: always ready). */
  readiness?: (store: Store, config: Config) => ApiDeps['readiness'];
  /** The API's data version over the harness's store (default: always 1). */
  dataVersion?: (store: Store) => () => number | string;
  /** Where the app's snapshots report to readiness (api/snapshot-readiness.ts; default: nowhere). */
  snapshots?: SnapshotLink;
  /** The event stream's feed of data versions and their changes (ApiDeps `versions`). */
  versions?: ApiDeps['versions'];
}

/** Replays `lines` (NDJSON events, registry first) and serves the API over the result. */
export async function startApiHarness(lines: string[], opts: HarnessOptions = {}): Promise<ApiHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'vs-api-'));
  const dataDir = join(dir, 'data');
  const file = join(dir, 'events.ndjson');
  writeFileSync(file, `${lines.join('\n')}\n`);
  // The streams role serves the SQL interface too: on an ephemeral port, so parallel suites
  // (and other checkouts on the machine) never collide on the default 8123.
  const env = { VAULTSTREAM_DATA_DIR: dataDir, VAULTSTREAM__sql__http__port: '0' };
  const replay = await runCli(['replay', file], env);
  if (replay.code !== 0) throw new Error(`replay failed (${replay.code}): ${replay.stderr.slice(-3000)}`);
  const drain = await runCli(['streams', '--until-drained'], env);
  if (drain.code !== 0) throw new Error(`streams failed (${drain.code}): ${drain.stderr.slice(-3000)}`);

  const config = parseConfig({ ...opts.config, dataDir });
  const store = await createStore(config);
  const app = createApp({
    store,
    config,
    clock: opts.clock,
    dataVersion: opts.dataVersion?.(store) ?? (() => 1),
    ready: () => true,
    readiness: opts.readiness?.(store, config),
    snapshots: opts.snapshots,
    versions: opts.versions,
  });
  const server: Server = await listen(app, '127.0.0.1', 0);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    store,
    config,
    dataDir,
    async request(path, init) {
      const res = await fetch(`${url}${path}`, init);
      const text = await res.text();
      const json = (res.headers.get('content-type') ?? '').includes('json');
      return {
        status: res.status,
        headers: res.headers,
        body: json && text ? JSON.parse(text) : undefined,
        text,
      };
    },
    async close() {
      // As the service stops: the event streams end, the requests in flight finish.
      await closeServer(server);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
