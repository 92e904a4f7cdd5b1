/**
 * The service's query parameters written in as typed literals on the embedded engine
 * (store/inline-params.ts). Each value gives the same answer, value and type, as the engine's own
 * binding of the same parameter (the cases pass through that binding too). And a bound analyst
 * query on the SQL interface's connection, which chdb-node runs one at a time process-wide, no
 * longer holds back the service's parameterized reads: one finishes while the analyst's 1.5 s
 * query still runs (before, it waited for it). chDB in a temporary data directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { inlineParams } from '../../store/inline-params.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-inline-params-'));
let store: Store;

beforeAll(async () => {
  store = await createStore(parseConfig({ dataDir: dir }));
}, 60_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** [type, value, what the engine answers]: what the service passes, and the awkward cases of each kind. */
const WEIRD = `quote ' backslash \\ line\nbreak tab\t "double" é 漢字 😀`;
const CASES: [string, unknown, unknown][] = [
  ['String', '', ''],
  ['String', WEIRD, WEIRD],
  ['String', '{x:String} stays text', '{x:String} stays text'],
  ['String', "\\'; SELECT 1 --", "\\'; SELECT 1 --"],
  ['UInt32', 0, 0],
  ['UInt32', 4294967295, 4294967295],
  ['Int64', -9007199254740991, '-9007199254740991'],
  ['Int64', 9223372036854775807n, '9223372036854775807'],
  ['Int64', '-42', '-42'],
  ['Date', '2024-02-29', '2024-02-29'],
  ['Array(String)', [], []],
  ['Array(String)', ["a'b", 'c\\d', ''], ["a'b", 'c\\d', '']],
  ['Array(UInt32)', [1, 2, 4294967295], [1, 2, 4294967295]],
  ['Array(Date)', ['2024-01-01', '2026-11-26'], ['2024-01-01', '2026-11-26']],
  ['Nullable(String)', null, null],
];

describe('inlined parameters', () => {
  it('give each value with its type, as the engine binds it', async () => {
    for (const [type, value, answer] of CASES) {
      const rows = await store.query<{ v: unknown; t: string }>(
        `SELECT {p:${type}} AS v, toTypeName(v) AS t`,
        {
          p: value,
        },
      );
      expect(rows, `${type} ${String(value)}`).toEqual([{ v: answer, t: type }]);
    }
  });

  it('leave a placeholder without a value, and text that only looks like one', () => {
    expect(inlineParams('SELECT {a:UInt8}, {b:String}', { a: 1 })).toBe(
      "SELECT _CAST(1, 'UInt8'), {b:String}",
    );
    expect(inlineParams('SELECT {a:String}', { a: '{a:String}' })).toBe(
      "SELECT _CAST('{a:String}', 'String')",
    );
    expect(() => inlineParams('SELECT {a:Float64}', { a: Number.NaN })).toThrow(/finite/);
    expect(() => inlineParams('SELECT {a:String}', { a: { x: 1 } })).toThrow(/no SQL literal/);
  });

  it("do not wait for an analyst's bound query", async () => {
    const order: string[] = [];
    const analyst = store
      .queryRaw('SELECT sleepEachRow(0.1) FROM numbers({n:UInt32}) FORMAT Null SETTINGS max_block_size = 1', {
        background: true,
        params: { n: '15' },
      })
      .then(() => order.push('analyst'));
    await new Promise((r) => setTimeout(r, 200));
    const rows = await store.query<{ x: number }>('SELECT {x:UInt32} AS x', { x: 7 });
    order.push('service');
    expect(rows).toEqual([{ x: 7 }]);
    await analyst;
    expect(order).toEqual(['service', 'analyst']);
  });
});
