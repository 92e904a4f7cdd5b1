/**
 * The analysts' copy keeps up with a store whose parts come and go: a table the service drops and
 * creates again, with parts merged away, between the copy's listing of its parts and their links.
 * A part gone before it is linked leaves that table's last copy served and is listed again at the
 * next refresh; the analysts' process goes on (it is not restarted) and its answers stay whole.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-copy-'));
let store: Store;
let http: SqlHttp;

beforeAll(async () => {
  const cfg = parseConfig({ dataDir: dir });
  store = await createStore(cfg);
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  await store.command(`CREATE TABLE ${store.database}.churn (id UInt32) ENGINE = MergeTree ORDER BY id`);
  http = await startSqlHttp({
    store,
    log: createLogger('silent'),
    settings: {
      ...cfg.sql,
      http: { ...cfg.sql.http, port: 0 },
      analysts: { ...cfg.sql.analysts, refreshIntervalMs: 100 },
    },
  });
}, 120_000);

afterAll(async () => {
  await http?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the analysts' copy", () => {
  it('goes on when the store drops, rewrites and merges away the parts it listed', async () => {
    const db = store.database;
    const pid = http.pid;
    expect(pid).toBeGreaterThan(0);
    const answers: string[] = [];
    const deadline = Date.now() + 20_000;
    let rounds = 0;
    while (Date.now() < deadline) {
      rounds++;
      // Each round's parts are gone at once: the table is dropped (SYNC: its files deleted) and made again.
      await store.command(`DROP TABLE ${db}.churn SYNC`);
      await store.command(`CREATE TABLE ${db}.churn (id UInt32) ENGINE = MergeTree ORDER BY id`);
      for (let i = 0; i < 3; i++)
        await store.command(`INSERT INTO ${db}.churn SELECT number FROM numbers(10)`);
      await store.command(`OPTIMIZE TABLE ${db}.churn FINAL`);
      if (rounds % 5 === 0) {
        const res = await fetch(
          `${http.url}/?query=${encodeURIComponent(`SELECT count() % 10 FROM ${db}.churn`)}`,
        );
        answers.push(`${res.status} ${await res.text()}`);
      }
    }
    // Let a last refresh copy the table as it is now.
    await new Promise((r) => setTimeout(r, 3000));
    const last = await fetch(`${http.url}/?query=${encodeURIComponent(`SELECT count() FROM ${db}.churn`)}`);
    expect([last.status, await last.text()]).toEqual([200, '30\n']);
    expect(http.pid).toBe(pid);
    // Every answer meanwhile was a whole copy of some round (a multiple of 10 rows), or one of a table not yet copied.
    for (const a of answers) expect(a).toMatch(/^(200 0\n|404 Code: 60\.)/);
  }, 120_000);
});
