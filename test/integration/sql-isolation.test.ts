/**
 * Nothing an analyst's query does (its output, its failure, its format)
 * reaches what another query on the embedded engine reads. chDB's session hands what a failed
 * query's output format had written to the next query (store/chdb-output.ts); the store clears
 * it in the same turn of its lock. Replayed here through the store, through the SQL interface
 * with the request that found it, and against the consumer's stored-state lookup it was used to
 * corrupt (a transfer dropped as "already stored").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlHttp } from '../../api/sql/server.ts';
import { clearLeftOutput } from '../../store/chdb-output.ts';
import type { Store } from '../../store/client.ts';
import { currentStates } from '../../streams/dedup.ts';
import { type SqlServer, startSqlServer } from '../support/sql-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-iso-'));
let sql: SqlServer;
let store: Store;
let http: SqlHttp;
const CHAIN = 8453;
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
/** The id of an event on chain that is not stored yet (the one the attacker wants dropped). */
const pending = `${CHAIN}:${hash(7)}:3`;

beforeAll(async () => {
  sql = await startSqlServer(dir, async (s) => {
    // The columns of transfers_raw (views/migrations/001_raw_tables.sql) the consumer's lookup reads.
    await s.command(
      `CREATE TABLE ${s.database}.transfers_raw (event_id String, chain_id UInt32, block_number UInt64, ` +
        'removed UInt8, ver UInt64, vault LowCardinality(String)) ENGINE = ReplacingMergeTree(ver, removed) ' +
        'ORDER BY (vault, chain_id, block_number, event_id)',
    );
    await s.command(
      `INSERT INTO ${s.database}.transfers_raw VALUES ('${CHAIN}:${hash(5)}:0', ${CHAIN}, 100, 0, 1, 'v1')`,
    );
  });
  ({ store, http } = sql);
});

afterAll(async () => {
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A query that writes its header, then fails on a later block (the repro). */
const failing = (header: string, format: string) =>
  `SELECT 1 AS \`${header.replaceAll('`', '\\`')}\` FROM numbers(200000) WHERE throwIf(number > 70000) FORMAT ${format}`;

describe('a failed query leaves nothing for the next one', () => {
  for (const [how, opts] of [
    ["on the service's connection", {}],
    ["on the analysts' connection", { background: true }],
    ['cancellable, on the analysts connection', { background: true, signal: new AbortController().signal }],
  ] as const)
    for (const format of ['TSVRawWithNames', 'JSON', 'CSVWithNames']) {
      it(`${how} ${format}: the service's next query reads only its own rows`, async () => {
        await expect(store.queryRaw(failing("SELECT 'HIJACKED'", format), opts)).rejects.toThrow(/throwIf/);
        expect(await store.query('SELECT 1 AS x')).toEqual([{ x: 1 }]);
        expect((await store.queryRaw('SELECT 2')).bytes.toString()).toBe('2\n');
        expect((await store.queryRaw('SELECT 3', { background: true })).bytes.toString()).toBe('3\n');
      });
    }

  it('the clear itself finds what a failed call left, and a clean session takes one query', async () => {
    const { Session } = await import('chdb');
    // A second connection to the store's data directory (one directory per process), with its own output.
    const own = new Session(join(dir, 'chdb'));
    try {
      await expect(own.queryAsync(failing('LEFT', 'TSVWithNames'), { format: 'TSV' })).rejects.toThrow();
      expect((await clearLeftOutput(own)).toString()).toBe('LEFT\n');
      expect((await clearLeftOutput(own)).toString()).toBe('');
      expect((await own.queryAsync('SELECT 3', { format: 'TSV' })).text()).toBe('3\n');
    } finally {
      own.close();
    }
  });

  it('the curl request that found it: the next SQL request answers 1', async () => {
    const hostile = await fetch(`${http.url}/`, {
      method: 'POST',
      body: failing("SELECT 'HIJACKED'", 'TSVRawWithNames'),
    });
    expect(hostile.status).toBeGreaterThanOrEqual(400);
    await hostile.text();
    const next = await fetch(`${http.url}/`, { method: 'POST', body: 'SELECT 1' });
    expect(await next.text()).toBe('1\n');
  });

  it("a header shaped like the consumer's lookup does not make it skip a transfer", async () => {
    const forged = JSON.stringify({ event_id: pending, removed: 0 });
    for (const format of ['TSVRawWithNames', 'JSON']) {
      const res = await fetch(`${http.url}/`, { method: 'POST', body: failing(forged, format) });
      expect(res.status).toBeGreaterThanOrEqual(400);
      await res.text();
      const states = await currentStates(store, 'transfers_raw', [
        { vault: 'v1', chainId: CHAIN, from: 90, to: 110 },
      ]);
      expect([...states]).toEqual([[`${CHAIN}:${hash(5)}:0`, true]]);
    }
  });

  it('the lookup stops on a state that cannot be its own instead of acting on it', async () => {
    // Stored under this chain but named for another: no event of this batch can be it.
    await store.command(
      `INSERT INTO ${store.database}.transfers_raw VALUES ('1:${hash(9)}:0', ${CHAIN}, 200, 0, 1, 'v1')`,
    );
    await expect(
      currentStates(store, 'transfers_raw', [{ vault: 'v1', chainId: CHAIN, from: 190, to: 210 }]),
    ).rejects.toMatchObject({ code: 'STORE_QUERY_FAILED', message: /stored states of transfers_raw: row 0/ });
  });

  it("an analyst's database does not stay the session's", async () => {
    await store.queryRaw('SELECT 1', { database: 'system', background: true });
    expect(await store.query<{ db: string }>('SELECT currentDatabase() AS db')).toEqual([{ db: 'default' }]);
  });
});
