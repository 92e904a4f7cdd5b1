/**
 * One chDB connection and the lock its queries take turns on. The embedded store has two: the
 * service's (consumers, API, migrations) and the analysts' (the SQL interface, whose queries never
 * take the service's lock, so an analyst query cannot delay an API query but by the CPU it uses,
 * and nothing it does, fails or leaves behind is on the connection the service reads; see
 * docs/architecture.md#embedded-store-connections). A third, idle connection cancels queries.
 *
 * Every call that fails is followed, inside the same turn of the lock, by a clear of what it left
 * in the connection's output (store/chdb-output.ts); a connection that cannot be cleared refuses
 * further use.
 */
import { randomUUID } from 'node:crypto';
import { type ChdbQuery, clearLeftOutput } from './chdb-output.ts';

interface ChdbResult {
  bytes(): Uint8Array;
  rowsRead: number;
  bytesRead: number;
}

/** The part of a chDB connection (its `.chdb`, or a `Session`) a lane uses. */
export interface ChdbCalls extends ChdbQuery {
  queryAsync(sql: string, opts?: { format?: string }): Promise<ChdbResult>;
  /** Binds `{name:Type}` parameters (a `Session` has it; values are escaped by chDB). */
  queryBindAsync?(sql: string, params: object, opts?: { format?: string }): Promise<ChdbResult>;
}

/** A value of ClickHouse's escaped text form (`param_x=a\tb`) as the text it stands for. */
export function unescapeParam(value: string): string {
  const map: Record<string, string> = { t: '\t', n: '\n', r: '\r', b: '\b', f: '\f', '0': '\0' };
  return value.replace(/\\(.)/gs, (_, c: string) => map[c] ?? c);
}

/**
 * chDB runs one query at a time per connection: a lock with two FIFO queues. Queries marked
 * `background` run only when no other waits.
 */
export class Serial {
  private busy = false;
  private readonly queues: [(() => void)[], (() => void)[]] = [[], []];
  run<T>(fn: () => Promise<T>, background = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queues[background ? 1 : 0].push(() => {
        Promise.resolve()
          .then(fn)
          .then(resolve, reject)
          .finally(() => {
            this.busy = false;
            this.next();
          });
      });
      this.next();
    });
  }
  private next(): void {
    if (this.busy) return;
    const job = this.queues[0].shift() ?? this.queues[1].shift();
    if (!job) return;
    this.busy = true;
    job();
  }
}

export interface Lane {
  readonly chdb: ChdbCalls;
  /** Runs `fn` in the lane's turn; a failure clears the connection before the next turn. */
  run<T>(fn: () => Promise<T>, background?: boolean): Promise<T>;
}

export function createLane(chdb: ChdbCalls): Lane {
  const serial = new Serial();
  /** Set when the connection could not be cleared after a failure: nothing may read it any more. */
  let broken: unknown;
  return {
    chdb,
    run: (fn, background) =>
      serial.run(async () => {
        if (broken) throw broken;
        try {
          return await fn();
        } catch (err) {
          try {
            await clearLeftOutput(chdb);
          } catch (clearErr) {
            broken = clearErr;
            throw clearErr;
          }
          throw err;
        }
      }, background),
  };
}

/** Tries to cancel, every this many ms, a query that has not stopped yet. */
const KILL_RETRY_MS = 200;

/**
 * Runs `sql` on `chdb` (in the caller's turn of its lane) and returns its bytes. With a
 * `signal`, aborting cancels the query in the engine: chDB's single-shot call has no interrupt,
 * so the query is found in `system.processes` by a marker comment and killed from the idle
 * `control` connection (`KILL QUERY ... ASYNC`); the call returns once the engine has stopped it.
 */
export async function runCancellable(
  chdb: ChdbCalls,
  control: Lane,
  sql: string,
  opts: { format: string; signal?: AbortSignal; params?: Record<string, string> },
): Promise<{ bytes: Buffer; rowsRead: number; bytesRead: number }> {
  const { format, signal, params } = opts;
  signal?.throwIfAborted();
  const marker = `vs-query-${randomUUID()}`;
  let settled = false;
  const kill = async () => {
    while (!settled) {
      await control
        .run(async () => {
          const found = await control.chdb.queryAsync(
            `SELECT query_id FROM system.processes WHERE position(query, '${marker}') > 0 AND query_id != queryID()`,
            { format: 'TSVRaw' },
          );
          const ids = Buffer.from(found.bytes())
            .toString()
            .split('\n')
            .filter((id) => /^[\w-]+$/.test(id));
          for (const id of ids)
            await control.chdb.queryAsync(`KILL QUERY WHERE query_id = '${id}' ASYNC`, { format: 'TSV' });
        })
        .catch(() => undefined);
      await new Promise((r) => setTimeout(r, KILL_RETRY_MS));
    }
  };
  const onAbort = () => void kill();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const text = signal ? `/* ${marker} */ ${sql}` : sql;
    let res: ChdbResult;
    if (params && Object.keys(params).length) {
      if (!chdb.queryBindAsync) throw new Error('query parameters are bound on the analysts connection only');
      const values = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, unescapeParam(v)]));
      res = await chdb.queryBindAsync(text, values, { format });
    } else res = await chdb.queryAsync(text, { format });
    signal?.throwIfAborted();
    const bytes = res.bytes();
    return {
      bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      rowsRead: res.rowsRead,
      bytesRead: res.bytesRead,
    };
  } finally {
    settled = true;
    signal?.removeEventListener('abort', onAbort);
  }
}
