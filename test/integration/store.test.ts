/**
 * The store's inserts on chDB (which bypass the client: spooled to a file, read with FROM INFILE):
 * TabSeparated bytes land exactly, per-insert settings reach the engine (a repeated
 * deduplication token stores nothing), and data the engine cannot parse fails with the
 * ClickHouse error code the consumer uses to tell bad data from a failing store.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { createStore, infileInsert, type Store } from '../../store/client.ts';
import { toTsv } from '../../store/tsv.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-store-'));
const spool = join(dir, 'insert-spool');
/** A spool file left by a process that died mid-insert (pid 2^22 + 1 is above Linux's pid_max). */
const stale = join(spool, `${2 ** 22 + 1}-7.tsv`);
let store: Store;

beforeAll(async () => {
  mkdirSync(spool, { recursive: true });
  writeFileSync(stale, '1\t1\tleft over\t1767225600\n');
  store = await createStore(parseConfig({ dataDir: dir }));
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  await store.command(
    `CREATE TABLE ${store.database}.t (id UInt32, amount UInt256, note String, at DateTime('UTC')) ` +
      'ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100',
  );
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = () =>
  store.query<{ id: number; amount: string; note: string; at: string }>(
    `SELECT id, toString(amount) AS amount, note, toString(toUnixTimestamp(at)) AS at FROM ${store.database}.t ORDER BY id`,
  );

describe('store inserts (chDB)', () => {
  it('stores TabSeparated rows exactly: uint256 at its maximum, escapes and non-ASCII text', async () => {
    const max = ((1n << 256n) - 1n).toString();
    const input = [
      { id: 1, amount: max, note: 'tab\there, newline\nthere, back\\slash, ünïcödé 🦊', at: '1767225600' },
      { id: 2, amount: '0', note: '', at: '0000000001' },
    ];
    const columns = ['id', 'amount', 'note', 'at'];
    await store.insertTsv('t', columns, Buffer.from(toTsv(input, columns)), {
      insert_deduplication_token: 'first',
    });
    expect(await rows()).toEqual([
      { id: 1, amount: max, note: input[0].note, at: '1767225600' },
      { id: 2, amount: '0', note: '', at: '1' },
    ]);
  });

  it('passes the insert settings to the engine: the same deduplication token stores nothing twice', async () => {
    const before = await rows();
    await store.insert('t', [{ id: 3, amount: '5', note: 'other rows, same token', at: '1767225600' }], {
      insert_deduplication_token: 'first',
    });
    expect(await rows()).toEqual(before);
    await store.insert('t', [{ id: 3, amount: '5', note: 'new token', at: '1767225600' }], {
      insert_deduplication_token: 'second',
    });
    expect((await rows()).map((r) => r.id)).toEqual([1, 2, 3]);
  });

  it('rejects data the engine cannot parse with its ClickHouse code, storing none of the batch', async () => {
    const before = await rows();
    const bad = [
      { body: '4\tnot a number\tx\t1767225600\n', code: '27' },
      { body: '4\t1\tx\tnot a date\n', code: '41' },
      { body: '4\t1\tx\t1767225600\n5\t2\n', code: '27' },
    ];
    for (const { body, code } of bad) {
      const err = await store.insertTsv('t', ['id', 'amount', 'note', 'at'], Buffer.from(body)).then(
        () => undefined,
        (e: unknown) => e as { code?: string; message: string },
      );
      expect(err?.code, err?.message).toBe(code);
    }
    expect(await rows()).toEqual(before);
  });

  it('spools each insert through a file of its own that is gone afterwards, failed or not', () => {
    // Every insert above ran; the dead process's file went when the store opened.
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('renders the spooled insert with quoted settings and refuses identifiers it would have to quote', () => {
    expect(infileInsert('db.t', ['a', 'b'], "/x/it's.tsv", { s: "o'k\\", n: 1, b: true })).toBe(
      "INSERT INTO db.t (a, b) FROM INFILE '/x/it\\'s.tsv' SETTINGS s = 'o\\'k\\\\', n = 1, b = 1 FORMAT TabSeparated",
    );
    expect(() => infileInsert('t; DROP TABLE x', ['a'], '/f', {})).toThrow(/identifier/);
    expect(() => infileInsert('t', ['a b'], '/f', {})).toThrow(/identifier/);
    expect(() => infileInsert('t', ['a'], '/f', { 'x=1, y': 1 })).toThrow(/identifier/);
  });
});
