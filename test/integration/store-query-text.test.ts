/**
 * A read's rows as the engine's JSONEachRow text (`Store.queryText`, parsed by `parseRows`), which
 * is what `Store.query` returns and what the API's thread receives over its port instead of
 * structured-cloned rows (api/thread/store-proxy.ts): the same rows as the client's own
 * JSONEachRow parse, for the values that could break a line-per-row reading (line breaks, tabs,
 * quotes, backslashes, non-ASCII text inside strings), exact big integers and decimals as strings,
 * arrays, maps, nulls and an empty result; through the proxy, the same rows and the engine's
 * errors with their code. chDB in a temporary data directory, a real MessageChannel.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Peer } from '../../api/thread/rpc.ts';
import { storeMethods, storeProxy } from '../../api/thread/store-proxy.ts';
import { parseConfig } from '../../core/config.ts';
import { createStore, parseRows, type Store } from '../../store/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-query-text-'));
let store: Store;
let proxied: Store;
const peers: Peer[] = [];

beforeAll(async () => {
  store = await createStore(parseConfig({ dataDir: dir }));
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  await store.command(
    `CREATE TABLE ${store.database}.qt (i UInt32, s String, big UInt256, d Decimal(38, 18), a Array(String),
       m Map(String, Int64), n Nullable(Int32), t DateTime('UTC')) ENGINE = MergeTree ORDER BY i`,
  );
  await store.command(
    `INSERT INTO ${store.database}.qt VALUES
       (1, 'two\\nlines\\tand a tab', 115792089237316195423570985008687907853269984665640564039457584007913129639935,
        '12345678901234567890.123456789012345678', ['x\\ny', '"q"'], {'k\\n': -9223372036854775808}, NULL, 0),
       (2, 'back\\\\slash "quoted" \\'single\\' é 漢字 😀', 0, '-0.000000000000000001', [], {}, -7, 4294967295),
       (3, '', 1, '0', [''], {'': 0}, 2147483647, 86400)`,
  );
  const { port1, port2 } = new MessageChannel();
  peers.push(new Peer(port2, storeMethods(store)));
  const client = new Peer(port1);
  peers.push(client);
  proxied = storeProxy(client, { kind: store.kind, database: store.database });
});

afterAll(async () => {
  for (const p of peers) p.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const SQL = `SELECT i, s, big, d, a, m, n, t, toString(big) AS big_s FROM vaultstream.qt
  WHERE i >= {from:UInt32} ORDER BY i`;

describe('rows as JSONEachRow text', () => {
  it("parses to the client's own JSONEachRow rows, strings with line breaks and big numbers included", async () => {
    const viaClient = await (
      await store.client.query({ query: SQL, format: 'JSONEachRow', query_params: { from: 0 } })
    ).json();
    const rows = await store.query<Record<string, unknown>>(SQL, { from: 0 });
    expect(rows).toEqual(viaClient);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({
      s: 'two\nlines\tand a tab',
      big: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
      d: '12345678901234567890.123456789012345678',
      a: ['x\ny', '"q"'],
      m: { 'k\n': '-9223372036854775808' },
      n: null,
    });
    expect(rows[1].s).toBe(`back\\slash "quoted" 'single' é 漢字 😀`);
    expect(parseRows(await store.queryText(SQL, { from: 0 }))).toEqual(rows);
  });

  it('an empty result is no rows', async () => {
    expect(await store.queryText(SQL, { from: 99 })).toBe('');
    expect(await store.query(SQL, { from: 99 })).toEqual([]);
    expect(parseRows('\n')).toEqual([]);
  });

  it("through the API thread's store proxy: the same rows, and the engine's errors with their code", async () => {
    expect(await proxied.query(SQL, { from: 2 })).toEqual(await store.query(SQL, { from: 2 }));
    expect(await proxied.query(SQL, { from: 0 })).toEqual(await store.query(SQL, { from: 0 }));
    expect(await proxied.queryText(SQL, { from: 0 })).toBe(await store.queryText(SQL, { from: 0 }));
    const err = await proxied.query('SELECT * FROM vaultstream.no_such_table').catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ code: '60' });
  });
});
