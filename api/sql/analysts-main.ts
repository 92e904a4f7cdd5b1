/**
 * The analysts' process (api/sql/server.ts starts it): the SQL interface's HTTP server, its lanes
 * (api/sql/lanes.ts) and an engine of its own over a read-only copy of the service's database,
 * refreshed by generations the service sends (store/read-only-replica.ts). Nothing an analyst
 * sends reaches the service's process: a crash, a stall or a full memory here leaves ingestion
 * and the API as they are. It runs below the service (sql.analysts.nice) and ends when the
 * service's process is gone (its IPC channel closes), even if killed with SIGKILL.
 *
 * Messages: from the service `start` (once), `generation`, `close`; to it `listening`, `applied`,
 * `failed`.
 */
import { join } from 'node:path';
import { createLogger } from '../../core/log.ts';
import { lowerThreadsExcept } from '../../core/priority.ts';
import type { SqlSettings } from '../../core/settings/sql.ts';
import { adminConnectionArgs, pruneEngine, writeEngineFiles } from '../../store/read-only-engine.ts';
import { createReplica, type Generation } from '../../store/read-only-replica.ts';
import { listenAnalysts } from './http.ts';
import { startLanes } from './lanes.ts';
import { ENGINE_SETTINGS } from './settings.ts';

/** What the service starts the process with. */
export interface AnalystsStart {
  settings: SqlSettings;
  served: string;
  /** The process's own directory (its engine's data and files; emptied by the service first). */
  dir: string;
  /** Paths no message may show. */
  roots: string[];
  logLevel: string;
  /** Every setting of the engine (read from the service's, the same build). */
  engineSettings: string[];
}

export type ToAnalysts =
  | { type: 'start'; start: AnalystsStart; generation: Generation }
  | { type: 'generation'; generation: Generation }
  | { type: 'close' };

export type FromAnalysts =
  /** `missed`: tables of the generation whose parts were gone before they were linked. */
  | { type: 'listening'; url: string; missed: string[] }
  | { type: 'applied'; id: number; missed: string[] }
  | { type: 'failed'; message: string; code?: string; address?: string; port?: number };

const send = (m: FromAnalysts) => process.send?.(m);

/**
 * Ends the process at once, with no exit handlers and no teardown of its threads: a lane thread
 * torn down while a query of its completes aborts in the engine's addon, and the engine, which
 * handles SIGABRT itself, then never ends the process: it stays, holding its memory, its
 * copy and the service's stdout. Nothing here needs flushing (the copy is the service's to remove),
 * so ending is a SIGKILL of itself, once `m`, when there is one, has reached the service, which
 * logs what it says.
 */
function end(m?: FromAnalysts): void {
  const kill = () => process.kill(process.pid, 'SIGKILL');
  if (m && process.connected) process.send?.(m, kill);
  else kill();
}

async function start(s: AnalystsStart, first: Generation): Promise<void> {
  // Before the engine starts its threads, which take this thread's value: the process shares the
  // service's session (its autogroup), where the API's thread is at 0 and the pipeline's at
  // api.pipelineNice (docs/architecture.md#the-apis-thread).
  lowerThreadsExcept([], s.settings.analysts.nice);
  const log = createLogger(s.logLevel, 'vaultstream-sql');
  const path = join(s.dir, 'engine');
  const files = writeEngineFiles(s.dir, {
    served: s.served,
    limits: s.settings.limits,
    maxServerMemoryBytes: s.settings.analysts.maxServerMemoryBytes,
    settings: s.engineSettings,
    changeable: new Set([...Object.keys(ENGINE_SETTINGS), 'readonly']),
  });
  const t0 = performance.now();
  const took = (what: string) =>
    log.debug({ ms: Math.round(performance.now() - t0) }, `sql analysts: ${what}`);
  const { Session } = await import('chdb');
  // The process's first connection: it reads the engine's files (store/read-only-engine.ts).
  const admin = new Session(path, { connectionArgs: adminConnectionArgs(files) });
  took('engine open');
  await pruneEngine(admin, s.served);
  took('engine pruned');
  const replica = createReplica(admin, path, s.served);
  const { missed } = await replica.apply(first);
  took('first copy served');
  let applying: Promise<void> | undefined;
  const lanes = await startLanes(s.settings.http.maxConcurrentQueries, {
    path,
    served: s.served,
    limits: s.settings.limits,
    roots: s.roots,
  });
  took('lanes open');
  const { server, url } = await listenAnalysts({
    settings: s.settings,
    served: s.served,
    lanes,
    settled: () => applying ?? Promise.resolve(),
    log,
  });
  process.on('message', (m: ToAnalysts) => {
    if (m.type === 'generation') {
      const gen = m.generation;
      applying = replica
        .apply(gen)
        .then(({ missed }) => {
          send({ type: 'applied', id: gen.id, missed });
        })
        .catch((err: Error) => {
          log.error({ err }, 'sql analysts: a generation could not be applied');
          end({ type: 'failed', message: `generation ${gen.id}: ${err.message}` });
        })
        .finally(() => {
          applying = undefined;
        });
    } else if (m.type === 'close') {
      server.close();
      server.closeAllConnections();
      end();
    }
  });
  send({ type: 'listening', url, missed });
}

// The service stops it (`close`) after its own requests; a terminal's Ctrl-C reaches both.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
process.once('disconnect', () => end());
process.once('message', (m: ToAnalysts) => {
  if (m.type !== 'start') return;
  start(m.start, m.generation).catch((err: NodeJS.ErrnoException) => {
    const { address, port } = err as NodeJS.ErrnoException & { address?: string; port?: number };
    end({ type: 'failed', message: err.message, code: err.code, address, port });
  });
});
