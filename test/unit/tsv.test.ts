import { describe, expect, it } from 'vitest';
import { toTsv } from '../../store/tsv.ts';

describe('TabSeparated encoding', () => {
  it('escapes strings and writes nulls, numbers, arrays and maps as ClickHouse reads them', () => {
    const rows = [
      { a: 'x\ty\nz\\w\r\0', b: null, c: 12, d: [1, 2], e: { "it's": 'a\\b\tc' }, f: true, g: 10n ** 30n },
    ];
    expect(toTsv(rows, ['a', 'b', 'c', 'd', 'e', 'f', 'g'])).toBe(
      "x\\ty\\nz\\\\w\\r\\0\t\\N\t12\t[1,2]\t{'it\\'s':'a\\\\b\\tc'}\t1\t1000000000000000000000000000000\n",
    );
  });
});
