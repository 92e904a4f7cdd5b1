/**
 * The store as the API's thread sees it: every call of store/client.ts's `Store` runs on the
 * main thread's store (chDB allows one session per process, so the store stays there), reached
 * over the thread's port (api/thread/rpc.ts). `storeMethods` serves them on the main side.
 *
 * Byte payloads (an `insertTsv` body, a `queryRaw` result) arrive as plain Uint8Arrays and are
 * viewed as Buffers again; a `queryRaw` signal cancels the query on the main side.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { VaultstreamError } from '../../core/errors.ts';
import { parseRows, type RawQueryOptions, type RawResult, type Store } from '../../store/client.ts';
import { asBuffer, type Handler, type Peer } from './rpc.ts';

/** The main side: `store.<method>` for each method the proxy calls. */
export function storeMethods(store: Store): Record<string, Handler> {
  return {
    'store.queryText': ([sql, params]) =>
      store.queryText(sql as string, params as Record<string, unknown> | undefined),
    'store.command': ([sql, settings]) => store.command(sql as string, settings as Record<string, unknown>),
    'store.insert': ([table, rows, settings]) =>
      store.insert(table as string, rows as Record<string, unknown>[], settings as Record<string, unknown>),
    'store.insertTsv': ([table, columns, tsv, settings]) =>
      store.insertTsv(
        table as string,
        columns as string[],
        asBuffer(tsv as Uint8Array),
        settings as Record<string, string | number | boolean>,
      ),
    'store.queryRaw': ([sql, opts], signal) =>
      store.queryRaw(sql as string, { ...(opts as RawQueryOptions), signal }),
  };
}

/** The API thread's `Store`: `kind` and `database` as the main thread's store has them. */
export function storeProxy(peer: Peer, info: { kind: Store['kind']; database: string }): Store {
  return {
    kind: info.kind,
    database: info.database,
    get client(): ClickHouseClient {
      throw new VaultstreamError('INTERNAL', "the store's client is on the main thread, not the API's");
    },
    // The rows come as the engine's text and are parsed here: a string crosses the port for a
    // copy, where rows cost the main thread a structured clone (1.4 ms of an apy-history answer's
    // 5 on the main thread, with --cpu-prof) and this thread as much to rebuild them.
    query: async (sql, params) => parseRows(await peer.call<string>('store.queryText', [sql, params])),
    queryText: (sql, params) => peer.call('store.queryText', [sql, params]),
    command: (sql, settings) => peer.call('store.command', [sql, settings]),
    insert: (table, rows, settings) => peer.call('store.insert', [table, rows, settings]),
    insertTsv: (table, columns, tsv, settings) =>
      peer.call('store.insertTsv', [table, columns, tsv, settings]),
    queryRaw: async (sql, opts = {}) => {
      const { signal, ...rest } = opts;
      const res = await peer.call<RawResult>('store.queryRaw', [sql, rest], signal);
      return { ...res, bytes: asBuffer(res.bytes) };
    },
    // The main thread closes its store after the API's thread has stopped.
    close: async () => {},
  };
}
