import { describe, expect, it } from 'vitest';
import { transferEvents } from '../../devnet/synthetic-transfers.ts';
import { toTsv, toTsvBuffer } from '../../store/tsv.ts';
import { toRow } from '../../streams/rows.ts';
import { seededRandom } from '../support/rng.ts';

/** ASCII with nothing to escape: strings of these are copied as they are. */
const PLAIN = [...'abcXYZ019 -_:.,\'"{}[]'];
/** Characters that take each path of the encoder: plain ASCII, escapes, 2-, 3- and 4-byte UTF-8, lone surrogates. */
const CHARS = [
  ...PLAIN,
  ...'\\\t\n\r\0',
  ...'\x01\x7fé£ßж',
  ...'€中文字\u2028\uffff',
  ...['😀', '𝄞', '\u{10ffff}'],
  ...['\ud800', '\udbff', '\udc00', '\udfff'],
];

function randomString(rand: () => number, length: number, charset: readonly string[]): string {
  let s = '';
  for (let i = 0; i < length; i++) s += charset[Math.floor(rand() * charset.length)];
  return s;
}

function randomValue(rand: () => number): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const r = rand();
  if (r < 0.35) return randomString(rand, Math.floor(rand() * 40), CHARS);
  // Long strings take the native-write path: plain ASCII, or with something to escape or encode.
  if (r < 0.45) return randomString(rand, 33 + Math.floor(rand() * 200), rand() < 0.5 ? PLAIN : CHARS);
  if (r < 0.55) return pick([null, undefined]);
  if (r < 0.7)
    return pick([0, -0, 1, -1, 42.5, -1e-7, 1e21, 2 ** 53 + 2, Number.NaN, -Infinity, 1e15 + rand()]);
  if (r < 0.8) return pick([0n, -1n, 10n ** 40n, -(2n ** 255n)]);
  if (r < 0.87) return rand() < 0.5;
  if (r < 0.94) return [randomString(rand, 5, CHARS), Math.floor(rand() * 100), null, [1n, 'x']];
  return { [randomString(rand, 4, CHARS)]: randomString(rand, 6, CHARS), n: -3, nested: { a: [true] } };
}

function randomRows(seed: number, count: number, columns: readonly string[]): Record<string, unknown>[] {
  const rand = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const row: Record<string, unknown> = {};
    for (const c of columns) if (rand() < 0.97) row[c] = randomValue(rand);
    return row;
  });
}

/** Asserts that `toTsvBuffer` writes what the string encoder does, as UTF-8. */
function expectSameAsString(rows: Record<string, unknown>[], columns: readonly string[], label = ''): Buffer {
  const got = toTsvBuffer(rows, columns);
  const want = Buffer.from(toTsv(rows, columns), 'utf8');
  if (!got.equals(want)) {
    // Comparing megabytes with toEqual is slow and its diff unreadable: show the first difference.
    let i = 0;
    while (got[i] === want[i]) i++;
    const around = (b: Buffer) => b.subarray(Math.max(0, i - 16), i + 16).toString('hex');
    expect(around(got), `${label} first difference at byte ${i}`).toBe(around(want));
    expect(got.length, label).toBe(want.length);
  }
  return got;
}

describe('TabSeparated encoding', () => {
  const rows = [
    { a: 'x\ty\nz\\w\r\0', b: null, c: 12, d: [1, 2], e: { "it's": 'a\\b\tc' }, f: true, g: 10n ** 30n },
  ];
  const columns = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
  const text =
    "x\\ty\\nz\\\\w\\r\\0\t\\N\t12\t[1,2]\t{'it\\'s':'a\\\\b\\tc'}\t1\t1000000000000000000000000000000\n";

  it('escapes strings and writes nulls, numbers, arrays and maps as ClickHouse reads them', () => {
    expect(toTsv(rows, columns)).toBe(text);
  });

  it('encodes the same bytes straight into a buffer', () => {
    expect(toTsvBuffer(rows, columns)).toEqual(Buffer.from(text));
    expectSameAsString([], columns);
  });

  it('matches the string encoder on random unicode, escapes, numbers and nested values', () => {
    const columns = ['a', 'b', 'c', 'd', 'e'];
    for (let seed = 1; seed <= 20; seed++) {
      expectSameAsString(randomRows(seed, 200, columns), columns, `seed ${seed}`);
    }
  });

  it('grows its buffer for long strings and many rows', () => {
    const rand = seededRandom(99);
    const long = [
      randomString(rand, 70_000, PLAIN),
      randomString(rand, 100_000, CHARS),
      `${'é'.repeat(40_000)}\t😀`,
    ];
    const rows = [
      ...randomRows(7, 5_000, ['a', 'b', 'c']),
      ...long.map((s, i) => ({ a: s, b: i, c: long[0] })),
    ];
    expect(expectSameAsString(rows, ['a', 'b', 'c']).length).toBeGreaterThan(1 << 20);
  });

  it('returns buffers that later calls do not overwrite', () => {
    const rows = randomRows(3, 50, ['x']);
    const first = toTsvBuffer(rows, ['x']);
    const copy = Buffer.from(first);
    toTsvBuffer(randomRows(4, 50, ['x']), ['x']);
    expect(first.equals(copy)).toBe(true);
  });

  it('matches the string encoder on transfer rows', () => {
    const rows = [...transferEvents(2_000, 7)].map((ev, i) => {
      const row = toRow('transfers', ev);
      row.ver = 1e15 + i;
      return row;
    });
    expectSameAsString(rows, Object.keys(rows[0]));
  });
});
