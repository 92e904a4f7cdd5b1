/**
 * The analysts' process's lanes, seen from its HTTP thread: one worker thread per query that may
 * run at once (sql.http.maxConcurrentQueries), each with its own analysts' connection
 * (api/sql/lane-worker.ts). A query takes a free lane and gives it back once the lane says it is
 * idle, which may be after its client was answered (a check that took too long is answered at
 * once, and its lane stays taken until the engine returns).
 */
import { Worker } from 'node:worker_threads';
import type { FromLane, LaneData, LaneRequest } from './lane-protocol.ts';

/** Set by scripts/build.mjs in the bundle: lanes then run the bundle's `sql-lane` entry. */
declare const VAULTSTREAM_BUNDLE: boolean | undefined;

function laneModule(): string {
  return typeof VAULTSTREAM_BUNDLE !== 'undefined'
    ? new URL('../../dist/sql-lane.js', import.meta.url).href
    : new URL('./lane-worker.ts', import.meta.url).href;
}

/** One query on a lane: its messages in order, and what the server tells the lane. */
export interface LaneRun {
  /** The next message of this query (start, chunk, end or error). */
  next(): Promise<Exclude<FromLane, { type: 'ready' | 'failed-start' | 'idle' }>>;
  /** Asks for the next chunk. */
  more(): void;
  /** Stops the query (between chunks, or once the engine call running returns). */
  cancel(): void;
}

export interface Lanes {
  /** Runs `request` on a free lane; `free()` tells whether one is. */
  run(request: Omit<LaneRequest, 'id'>, onIdle: () => void): LaneRun;
  free(): boolean;
}

interface Lane {
  worker: Worker;
  busy: boolean;
  /** The running query's message sink. */
  sink?: (m: FromLane) => void;
}

/**
 * Starts `count` lanes; resolves once every lane's connection is open. Lanes live as long as the
 * process (it exits to stop them: ending a thread that holds a chDB connection is not safe).
 */
export async function startLanes(count: number, data: Omit<LaneData, 'module'>): Promise<Lanes> {
  let seq = 0;
  const lanes: Lane[] = [];
  const module = laneModule();
  await Promise.all(
    Array.from({ length: count }, async () => {
      const worker = new Worker(new URL('../thread/entry.mjs', import.meta.url), {
        workerData: { ...data, module } satisfies LaneData,
      });
      const lane: Lane = { worker, busy: false };
      await new Promise<void>((resolve, reject) => {
        const onMessage = (m: FromLane) => {
          if (m.type === 'ready') {
            worker.off('error', reject);
            resolve();
          } else if (m.type === 'failed-start') reject(new Error(m.message));
          else lane.sink?.(m);
        };
        worker.on('message', onMessage);
        worker.once('error', reject);
      });
      // A lane that dies takes its analysts' connection with it: the process cannot go on.
      worker.on('error', (err: Error) => {
        process.emitWarning(`sql lane failed: ${err.message}`);
        process.exit(70);
      });
      lanes.push(lane);
    }),
  );
  return {
    free: () => lanes.some((l) => !l.busy),
    run(request, onIdle) {
      const lane = lanes.find((l) => !l.busy);
      if (!lane) throw new Error('no free lane: admission lets in at most one query per lane');
      lane.busy = true;
      const id = ++seq;
      const inbox: FromLane[] = [];
      let waiting: ((m: FromLane) => void) | undefined;
      lane.sink = (m) => {
        if (m.type === 'idle') {
          lane.busy = false;
          lane.sink = undefined;
          onIdle();
          return;
        }
        if (waiting) {
          const w = waiting;
          waiting = undefined;
          w(m);
        } else inbox.push(m);
      };
      lane.worker.postMessage({ type: 'run', request: { ...request, id } });
      return {
        next: () =>
          new Promise((resolve) => {
            const m = inbox.shift();
            if (m) resolve(m as never);
            else waiting = resolve as (m: FromLane) => void;
          }),
        more: () => lane.worker.postMessage({ type: 'more', id }),
        cancel: () => lane.worker.postMessage({ type: 'cancel', id }),
      };
    },
  };
}
