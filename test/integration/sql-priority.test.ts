/**
 * Issue 20, finding 6: analysts' queries do not hold the service's queries back. They run on a
 * chDB connection of their own (store/chdb-lane.ts), with one engine thread at the lowest CPU
 * priority, so a service query (what the API runs) does not wait for one to finish; and an
 * analyst query whose client goes away is cancelled in the engine, in any format (FORMAT JSON
 * too, which chDB cannot stream). The latency itself is measured by bench/sql-contention.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-prio-'));
let store: Store;
let http: SqlHttp;
/** A query the 10 s cap stops: the engine's work the whole time. */
const HEAVY = 'SELECT count() FROM numbers(1000000000000) WHERE cityHash64(number) % 7 = 1';

beforeAll(async () => {
  const cfg = parseConfig({ dataDir: dir });
  store = await createStore(cfg);
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  http = await startSqlHttp({
    store,
    log: createLogger('silent'),
    // Two engine threads per query: the engine's pool runs it besides the calling thread.
    settings: {
      ...cfg.sql,
      limits: { ...cfg.sql.limits, maxThreads: 2 },
      http: { ...cfg.sql.http, port: 0 },
    },
  });
});

afterAll(async () => {
  await http?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The engine's running queries that contain `text` (read on the service's connection). */
const running = async (text: string) =>
  (
    await store.query<{ n: string }>(
      'SELECT count() AS n FROM system.processes WHERE position(query, {t:String}) > 0 AND query_id != queryID()',
      { t: text },
    )
  )[0].n;

/** The nice value of every thread of this process (the engine's pools, libuv's workers). */
function niceValues(): Set<string> {
  const out = new Set<string>();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      out.add(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    } catch {}
  }
  return out;
}

describe('the API goes first', () => {
  it("an analyst query leaves no thread at another CPU priority for the service's queries", async () => {
    const before = niceValues();
    const res = await fetch(
      `${http.url}/?query=${encodeURIComponent('SELECT sum(cityHash64(number)) FROM numbers(300000000)')}`,
    );
    expect(res.status).toBe(200);
    await res.text();
    expect([...niceValues()].filter((n) => !before.has(n))).toEqual([]);
  });

  it("a service query does not wait for a running analyst query's end", async () => {
    const abort = new AbortController();
    const analyst = fetch(`${http.url}/?query=${encodeURIComponent(HEAVY)}`, { signal: abort.signal }).catch(
      () => undefined,
    );
    await vi.waitFor(async () => expect(await running('numbers(1000000000000)')).toBe('1'), {
      timeout: 5000,
    });
    const t0 = performance.now();
    expect(await store.query('SELECT 1 AS x')).toEqual([{ x: 1 }]);
    // Waiting for the analyst query would take its 10 s cap.
    expect(performance.now() - t0).toBeLessThan(2000);
    abort.abort();
    await analyst;
  });

  for (const format of ['JSON', 'TabSeparated', 'Parquet'])
    it(`a ${format} query whose client goes away stops in the engine`, async () => {
      const abort = new AbortController();
      const analyst = fetch(`${http.url}/?query=${encodeURIComponent(`${HEAVY} FORMAT ${format}`)}`, {
        signal: abort.signal,
      }).catch(() => 'aborted');
      await vi.waitFor(async () => expect(await running('numbers(1000000000000)')).toBe('1'), {
        timeout: 5000,
      });
      const t0 = performance.now();
      abort.abort();
      expect(await analyst).toBe('aborted');
      await vi.waitFor(async () => expect(await running('numbers(1000000000000)')).toBe('0'), {
        timeout: 3000,
        interval: 100,
      });
      // Well before its 10 s cap; the next analyst query is answered at once.
      expect(performance.now() - t0).toBeLessThan(3000);
      expect(await (await fetch(`${http.url}/?query=SELECT+1`)).text()).toBe('1\n');
    });
});
