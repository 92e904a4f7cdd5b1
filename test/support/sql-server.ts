/**
 * The embedded engine and its SQL HTTP interface for a test: a store in the given data
 * directory with its database created, what the test puts in it, and the interface on an
 * ephemeral port (so parallel runs never collide).
 */
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';

export interface SqlServer {
  store: Store;
  http: SqlHttp;
  /** Closes the interface, then the store (the data directory is the caller's). */
  close(): Promise<void>;
}

export async function startSqlServer(
  dataDir: string,
  setup?: (store: Store) => Promise<void>,
): Promise<SqlServer> {
  const cfg = parseConfig({ dataDir });
  const store = await createStore(cfg);
  try {
    await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
    await setup?.(store);
    const http = await startSqlHttp({
      store,
      log: createLogger('silent'),
      settings: { ...cfg.sql, http: { ...cfg.sql.http, port: 0 } },
    });
    return {
      store,
      http,
      close: async () => {
        await http.close();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
