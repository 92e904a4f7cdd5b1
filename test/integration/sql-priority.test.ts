/**
 * Analysts' queries do not hold the service's queries back: they run in a process of their own
 * (api/sql/analysts-main.ts) whose every thread runs at sql.analysts.nice, below the service's
 * API thread, so a service query does not wait for one, and the service's own threads keep their
 * priority. A streamed answer whose client goes away stops at the engine's next block, freeing
 * its slot. The latency itself is measured by bench/sql-contention.ts and bench/sql-worst-analyst.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-prio-'));
let store: Store;
let http: SqlHttp;
/** A query the 10 s cap stops: the engine's work the whole time, and nothing to send until then. */
const HEAVY = 'SELECT count() FROM numbers(1000000000000) WHERE cityHash64(number) % 7 = 1';

beforeAll(async () => {
  const cfg = parseConfig({ dataDir: dir });
  store = await createStore(cfg);
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  http = await startSqlHttp({
    store,
    log: createLogger('silent'),
    settings: {
      ...cfg.sql,
      limits: { ...cfg.sql.limits, maxThreads: 2 },
      http: { ...cfg.sql.http, port: 0, maxConcurrentQueries: 1, maxQueuedQueries: 0 },
    },
  });
});

afterAll(async () => {
  await http?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The nice value of every thread of a process (its engine's pools, libuv's workers), but the
 * engine's MemoryWorker, which raises itself where it may (docs/architecture.md#the-apis-thread).
 */
function niceValues(pid: number | 'self'): number[] {
  const out: number[] = [];
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').startsWith('MemoryWorker')) continue;
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      out.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {}
  }
  return out;
}

describe('the API goes first', () => {
  it("every thread of the analysts' process runs at sql.analysts.nice; the service's keep theirs", async () => {
    const before = new Set(niceValues('self'));
    const res = await fetch(
      `${http.url}/?query=${encodeURIComponent('SELECT sum(cityHash64(number)) FROM numbers(300000000)')}`,
    );
    expect(res.status).toBe(200);
    await res.text();
    const pid = http.pid;
    expect(pid).toBeGreaterThan(0);
    const analysts = niceValues(pid as number);
    expect(analysts.length).toBeGreaterThan(4);
    expect(analysts.filter((n) => n < 19)).toEqual([]);
    expect(niceValues('self').filter((n) => !before.has(n))).toEqual([]);
  });

  it("a service query does not wait for a running analyst query's end", async () => {
    const analyst = fetch(`${http.url}/?query=${encodeURIComponent(HEAVY)}`);
    await new Promise((r) => setTimeout(r, 500));
    const t0 = performance.now();
    expect(await store.query('SELECT 1 AS x')).toEqual([{ x: 1 }]);
    // Waiting for the analyst query would take its 10 s cap.
    expect(performance.now() - t0).toBeLessThan(2000);
    // An aggregate sends nothing before its end: it holds its slot until its cap stops it.
    expect(await (await analyst).text()).toMatch(/^Code: 159\./);
  });

  for (const format of ['TabSeparated', 'JSONEachRow', 'Native'])
    it(`a streamed ${format} answer whose client goes away stops at the next block`, async () => {
      const abort = new AbortController();
      const started = await fetch(
        `${http.url}/?query=${encodeURIComponent(`SELECT number, cityHash64(number) FROM numbers(1e12) FORMAT ${format}`)}`,
        { signal: abort.signal },
      );
      await started.body?.getReader().read();
      const t0 = performance.now();
      abort.abort();
      // One slot: the next query is answered once the abandoned one stopped, well before its 10 s cap.
      let status = 0;
      while (status !== 200) {
        status = (await fetch(`${http.url}/?query=SELECT+1`)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(performance.now() - t0).toBeLessThan(3000);
    });

  it("a crashed analysts' process leaves the service's store alone and is started again", async () => {
    const pid = http.pid as number;
    process.kill(pid, 'SIGKILL');
    expect(await store.query('SELECT 2 AS x')).toEqual([{ x: 2 }]);
    let answer = '';
    while (answer !== '1\n') {
      await new Promise((r) => setTimeout(r, 200));
      answer = await fetch(`${http.url}/?query=SELECT+1`).then(
        (r) => r.text(),
        () => '',
      );
    }
    expect(http.pid).not.toBe(pid);
  });
});
