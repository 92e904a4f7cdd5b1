/**
 * Admission of analyst queries, before their body is read: at most `running` at once, then a
 * bounded queue (`queued` waiting, each at most `waitMs`) answered in turn, then a refusal
 * (`Code: 202`, HTTP 503). A waiting request whose client goes away leaves the queue.
 */
import { ClickHouseHttpError } from './protocol.ts';

export interface Admission {
  /** Resolves with the release once admitted; throws 202 when the queue is full or the wait too long. */
  enter(signal: AbortSignal): Promise<() => void>;
  readonly running: number;
  readonly waiting: number;
}

export function createAdmission(limits: { running: number; queued: number; waitMs: number }): Admission {
  let running = 0;
  const queue: (() => void)[] = [];
  const release = () => {
    running--;
    queue.shift()?.();
  };
  const once = () => {
    let done = false;
    return () => {
      if (!done) {
        done = true;
        release();
      }
    };
  };
  return {
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
    async enter(signal) {
      if (running < limits.running && queue.length === 0) {
        running++;
        return once();
      }
      if (queue.length >= limits.queued)
        throw new ClickHouseHttpError(
          202,
          `Too many simultaneous queries: ${running} running and ${queue.length} waiting (sql.http.maxConcurrentQueries = ${limits.running}, maxQueuedQueries = ${limits.queued})`,
        );
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', leave);
          running++;
          resolve();
        };
        const leave = () => {
          const i = queue.indexOf(turn);
          if (i >= 0) queue.splice(i, 1);
          clearTimeout(timer);
          reject(
            signal.aborted
              ? new ClickHouseHttpError(394, 'Query was cancelled while it waited')
              : new ClickHouseHttpError(
                  202,
                  `Too many simultaneous queries: waited ${limits.waitMs} ms for one of ${limits.running} running to finish (sql.http.queueWaitMs)`,
                ),
          );
        };
        const timer = setTimeout(leave, limits.waitMs);
        signal.addEventListener('abort', leave, { once: true });
        queue.push(turn);
      });
      return once();
    },
  };
}
