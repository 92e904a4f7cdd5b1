/**
 * `compress=1` / `decompress=1` on the SQL interface (api/sql/compressed-blocks.ts).
 * The JDBC v2 driver (DBeaver, Metabase) asks for every answer in ClickHouse's compressed blocks
 * and checks each block's CityHash128; before, it failed with "Invalid LZ4 magic byte". The hash
 * is checked against the driver's own implementation (com.clickhouse.data.ClickHouseCityHash)
 * and the driver reads typed rows end to end.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cityHash128, compressBlocks } from '../../api/sql/compressed-blocks.ts';
import { ROOT } from '../support/cli.ts';
import { installDrivers, runDriver } from '../support/drivers.ts';
import { type SqlServer, startSqlServer } from '../support/sql-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-compressed-'));
let sql: SqlServer;

beforeAll(async () => {
  installDrivers();
  sql = await startSqlServer(dir, async (store) => {
    await store.command(
      `CREATE TABLE ${store.database}.t (slug LowCardinality(String), n UInt32) ENGINE = MergeTree ORDER BY slug`,
    );
    await store.command(`INSERT INTO ${store.database}.t VALUES ('a', 1), ('b', 2)`);
  });
}, 600_000);

afterAll(async () => {
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (body: string | Buffer, params = '') =>
  fetch(`${sql.http.url}/?${params}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });

/** Deterministic bytes of each length around CityHash128's branches (16, 128, tails of 32). */
const LENGTHS = [
  0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 63, 64, 127, 128, 129, 200, 255, 256, 300, 1000, 4099,
];
const bytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + 7) & 255));

describe('compressed blocks (compress=1, decompress=1)', () => {
  it("CityHash128 equals the JDBC driver's own ClickHouseCityHash for every branch", () => {
    const src = join(dir, 'H.java');
    writeFileSync(
      src,
      `import com.clickhouse.data.ClickHouseCityHash;
public class H { public static void main(String[] a) { for (String s : a) { int n = Integer.parseInt(s);
  byte[] b = new byte[n]; for (int i = 0; i < n; i++) b[i] = (byte) ((i * 31 + 7) & 255);
  long[] h = ClickHouseCityHash.cityHash128(b, 0, n);
  System.out.println(Long.toUnsignedString(h[0], 16) + " " + Long.toUnsignedString(h[1], 16)); } } }`,
    );
    const lib = join(ROOT, 'test', 'drivers', 'java', 'target', 'lib', '*');
    const java = execFileSync('java', ['-cp', lib, src, ...LENGTHS.map(String)], { encoding: 'utf8' })
      .trim()
      .split('\n');
    const ours = LENGTHS.map((n) =>
      cityHash128(bytes(n))
        .map((h) => h.toString(16))
        .join(' '),
    );
    expect(ours).toEqual(java);
  });

  it('answers compress=1 in blocks whose header and checksum hold, same bytes inside', async () => {
    const q = 'SELECT number, toString(number) FROM numbers(300000) FORMAT TabSeparated';
    const plain = Buffer.from(await (await post(q)).arrayBuffer());
    const res = await post(q, 'compress=1');
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    const inside: Buffer[] = [];
    let blocks = 0;
    for (let i = 0; i < body.length; blocks++) {
      expect(body[i + 16]).toBe(0x82);
      const size = body.readUInt32LE(i + 17);
      const [lo, hi] = cityHash128(body.subarray(i + 16, i + 16 + size));
      expect([body.readBigUInt64LE(i), body.readBigUInt64LE(i + 8)]).toEqual([lo, hi]);
      const raw = body.readUInt32LE(i + 21);
      // Literals only: token, length bytes, then the raw bytes as they are.
      inside.push(body.subarray(i + 16 + size - raw, i + 16 + size));
      i += 16 + size;
    }
    expect(plain.length).toBeGreaterThan(1 << 20);
    // One or more blocks per chunk of the engine's stream, none over the 1 MiB block size.
    expect(blocks).toBeGreaterThanOrEqual(Math.ceil(plain.length / (1 << 20)));
    expect(Buffer.concat(inside).equals(plain)).toBe(true);
  });

  it('reads a decompress=1 body and refuses one whose checksum does not match', async () => {
    const body = await compressBlocks(Buffer.from('SELECT n FROM t ORDER BY n FORMAT CSV'));
    const ok = await post(body, 'decompress=1');
    expect(await ok.text()).toBe('1\n2\n');
    body[30] = (body[30] as number) ^ 1;
    const bad = await post(body, 'decompress=1');
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
    expect(await bad.text()).toMatch(/^Code: 40\./);
  });

  it('the JDBC v2 driver (DBeaver, Metabase) connects and reads typed rows', async () => {
    const connect = await runDriver('java', 'connect', sql.http.url, sql.store.database);
    expect(connect.version).toMatch(/^\d+\.\d+/);
    const answer = await runDriver('java', 'query', sql.http.url, sql.store.database, {
      queries: [
        { id: 'rows', sql: 'SELECT slug, n FROM t ORDER BY n' },
        { id: 'param', sql: 'SELECT n FROM t WHERE slug = {s:String}', params: { s: 'b' } },
      ],
    });
    expect(answer).toMatchObject([
      {
        id: 'rows',
        columns: ['slug', 'n'],
        rows: [
          ['a', '1'],
          ['b', '2'],
        ],
      },
      { id: 'param', rows: [['2']] },
    ]);
  }, 300_000);
});
