/**
 * The ClickHouse-compatible SQL interface for the data team and BI tools, started by the service:
 * it runs in a process of its own, the analysts' (api/sql/analysts-main.ts), over a read-only
 * copy of the service's database that this side refreshes (api/sql/generations.ts) at most every
 * sql.analysts.refreshIntervalMs, when a table changed. Nothing an analyst sends is read, parsed,
 * run, formatted or compressed in this process; a crash of the analysts' process is logged and
 * the process started again on a fresh copy (docs/architecture.md#the-sql-interface).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Counter, Gauge, Histogram } from 'prom-client';
import { VaultstreamError } from '../../core/errors.ts';
import { processFilesDir } from '../../core/lock.ts';
import type { Logger } from '../../core/log.ts';
import { registry } from '../../core/metrics.ts';
import type { SqlSettings } from '../../core/settings/sql.ts';
import type { Store } from '../../store/client.ts';
import type { Generation } from '../../store/read-only-replica.ts';
import type { FromAnalysts, ToAnalysts } from './analysts-main.ts';
import { createGenerations, type Generations, storeDirectory } from './generations.ts';

export interface SqlHttpOptions {
  store: Store;
  settings: SqlSettings;
  log: Logger;
}

export interface SqlHttp {
  /** Where the interface listens. */
  readonly url: string;
  /** The analysts' process (while it runs). */
  readonly pid: number | undefined;
  /** Takes the store's changes into the analysts' copy now; resolves once queries read them. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Refuses a config that would expose a user with no password beyond loopback. */
export function checkExposure(settings: SqlSettings['http']): void {
  if (LOOPBACK.test(settings.host)) return;
  const open = settings.users.filter((u) => u.password === '').map((u) => u.name);
  if (open.length)
    throw new VaultstreamError(
      'CONFIG_INVALID',
      `sql.http.host is ${settings.host} (not loopback) but user(s) ${open.join(', ')} have no password: set sql.http.users[].password, or listen on 127.0.0.1`,
    );
}

/** Set by scripts/build.mjs in the bundle: the process then runs the bundle's `sql-analysts` entry. */
declare const VAULTSTREAM_BUNDLE: boolean | undefined;

function processArgs(): string[] {
  return typeof VAULTSTREAM_BUNDLE !== 'undefined'
    ? [fileURLToPath(new URL('../../dist/sql-analysts.js', import.meta.url))]
    : ['--import', 'tsx', fileURLToPath(new URL('./analysts-main.ts', import.meta.url))];
}

/** How long a refresh of the analysts' copy took (the listing here, the analysts' process's swap). */
const refreshSeconds = new Histogram({
  name: 'vaultstream_sql_copy_refresh_seconds',
  help: "Time to refresh the SQL interface's copy of the store, by phase: `list` (the store's parts) here, `swap` (links, attach, exchange) in the analysts' process",
  labelNames: ['phase'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
const copiedTables = new Counter({
  name: 'vaultstream_sql_copy_tables_total',
  help: "Tables copied into the SQL interface's copy (only those whose parts changed)",
  registers: [registry],
});
/** When the copy last took the store's changes, per interface. */
const lastRefresh = new Map<number, number>();
new Gauge({
  name: 'vaultstream_sql_copy_age_seconds',
  help: "How long ago the SQL interface's copy last took the store's changes (or found none): its staleness, at most",
  registers: [registry],
  collect() {
    this.reset();
    const now = Date.now();
    for (const [n, at] of lastRefresh) this.set({ interface: String(n) }, (now - at) / 1000);
  },
  labelNames: ['interface'],
});

/** Instances of the interface in this process (each has a directory of its own). */
let instances = 0;
/** Restarts of a crashed analysts' process wait this long, doubled each time up to a minute. */
const RESTART_MS = 1000;

/** Starts the interface; resolves once the analysts' process listens. */
export async function startSqlHttp(opts: SqlHttpOptions): Promise<SqlHttp> {
  const { store, settings, log } = opts;
  checkExposure(settings.http);
  // The port first, here: a port in use is the service's start-up error at once (with the
  // listen error's address), not after the analysts' process has started.
  if (settings.http.port !== 0) await portFree(settings.http.host, settings.http.port);
  const n = ++instances;
  let generations: Generations | undefined;
  let url = '';
  let port = settings.http.port;
  let child: ChildProcess | undefined;
  let closing = false;
  let restartMs = RESTART_MS;
  let timer: NodeJS.Timeout | undefined;
  /** The refresh in flight: one at a time. */
  let refreshing: Promise<void> = Promise.resolve();
  let dir = '';
  let roots: string[] = [];
  let engineSettings: string[] = [];

  const waitFor = <T extends FromAnalysts['type']>(proc: ChildProcess, type: T, id?: number) =>
    new Promise<Extract<FromAnalysts, { type: T }>>((resolveMsg, reject) => {
      const onMessage = (m: FromAnalysts) => {
        if (m.type === type && (id === undefined || (m as { id?: number }).id === id)) {
          cleanup();
          resolveMsg(m as Extract<FromAnalysts, { type: T }>);
        } else if (m.type === 'failed') {
          cleanup();
          const { code, address, port } = m;
          reject(
            Object.assign(new Error(`the analysts' process failed: ${m.message}`), { code, address, port }),
          );
        }
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`the analysts' process exited (${code})`));
      };
      const cleanup = () => {
        proc.off('message', onMessage);
        proc.off('exit', onExit);
      };
      proc.on('message', onMessage);
      proc.once('exit', onExit);
    });

  const launch = async (): Promise<void> => {
    if (!generations) {
      const storePath = await storeDirectory(store);
      generations = createGenerations(store, storePath);
      dir = join(processFilesDir(dirname(storePath), 'sql-analysts'), `${process.pid}-${n}`);
      roots = [dirname(storePath), storePath, dir];
      engineSettings = await settingNames(store);
    }
    const gens = generations;
    rmSync(dir, { recursive: true, force: true });
    gens.reset();
    const generation = (await gens.next()) ?? emptyGeneration();
    const proc = spawn(process.execPath, processArgs(), {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8' },
    });
    child = proc;
    const start: ToAnalysts = {
      type: 'start',
      generation,
      start: {
        settings: { ...settings, http: { ...settings.http, port } },
        served: store.database,
        dir,
        roots,
        logLevel: log.level,
        engineSettings,
      },
    };
    proc.send(start);
    try {
      const listening = await waitFor(proc, 'listening');
      url = listening.url;
      gens.forget(listening.missed);
    } catch (err) {
      proc.kill('SIGKILL');
      throw err;
    }
    port = Number(new URL(url).port);
    lastRefresh.set(n, Date.now());
    restartMs = RESTART_MS;
    proc.once('exit', (code, signal) => {
      if (closing || child !== proc) return;
      child = undefined;
      log.warn(
        { code, signal, restartInMs: restartMs },
        "sql: the analysts' process ended; starting it again",
      );
      setTimeout(() => {
        if (closing) return;
        launch().catch((err: unknown) =>
          log.error({ err }, "sql: the analysts' process could not start again"),
        );
      }, restartMs).unref();
      restartMs = Math.min(60_000, restartMs * 2);
    });
  };

  const refreshOnce = async (): Promise<void> => {
    const proc = child;
    const gens = generations;
    if (!proc || !gens || closing) return;
    const started = Date.now();
    const generation = await gens.next();
    if (generation) {
      const listed = Date.now();
      const applied = waitFor(proc, 'applied', generation.id);
      proc.send({ type: 'generation', generation } satisfies ToAnalysts);
      gens.forget((await applied).missed);
      refreshSeconds.observe({ phase: 'list' }, (listed - started) / 1000);
      refreshSeconds.observe({ phase: 'swap' }, (Date.now() - listed) / 1000);
      copiedTables.inc(generation.tables.length);
    }
    // The copy holds what the store held when this refresh began.
    lastRefresh.set(n, started);
  };
  const refresh = () => {
    refreshing = refreshing.then(refreshOnce, refreshOnce);
    return refreshing;
  };
  const tick = () => {
    timer = setTimeout(() => {
      refresh()
        .catch((err: unknown) => log.warn({ err }, "sql: the analysts' copy could not be refreshed"))
        .finally(() => {
          if (!closing) tick();
        });
    }, settings.analysts.refreshIntervalMs);
    timer.unref();
  };

  await launch();
  tick();
  return {
    get url() {
      return url;
    },
    get pid() {
      return child?.pid;
    },
    refresh,
    close: async () => {
      closing = true;
      lastRefresh.delete(n);
      clearTimeout(timer);
      await refreshing.catch(() => undefined);
      const proc = child;
      if (proc && proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise<void>((done) => proc.once('exit', () => done()));
        proc.send({ type: 'close' } satisfies ToAnalysts);
        const kill = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(kill);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every setting of the store's engine (the analysts' is the same build). */
async function settingNames(store: Store): Promise<string[]> {
  const text = (
    await store.queryRaw('SELECT name FROM system.settings', { background: true })
  ).bytes.toString('utf8');
  return text.split('\n').filter((n) => n !== '');
}

/** Resolves when `host:port` can be listened on; else the listen error (EADDRINUSE, with its address). */
export function portFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

function emptyGeneration(): Generation {
  return { id: 0, tables: [], views: [], names: [] };
}
