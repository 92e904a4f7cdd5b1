import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { FAMILIES, type FamilyName } from '../../schemas/families.ts';
import { fastValid } from '../../schemas/fast-valid.ts';
import * as k from '../../schemas/kinds.ts';
import { base58 } from '../support/events.ts';
import { seededRandom } from '../support/rng.ts';

type Rec = Record<PropertyKey, unknown>;

const hex = (digits: number, c = 'a') => `0x${c.repeat(digits)}`;
const TWO_255 = 1n << 255n;
const TWO_256 = 1n << 256n;

const evmChain = {
  chainId: 98866,
  blockNumber: 12,
  blockHash: hex(64, 'b'),
  blockTimestamp: 1_760_000_000,
  txHash: `0x${'cD'.repeat(32)}`,
  logIndex: 3,
  removed: false,
};
const solanaChain = {
  chainId: 900,
  blockNumber: 312_000_000,
  blockHash: base58(44, 1),
  blockTimestamp: 4_294_967_295,
  txHash: base58(88, 2),
  logIndex: 0,
  removed: true,
};

const VALID: Record<'blocks' | 'transfers' | 'activity' | 'rates', Rec[]> = {
  blocks: [
    {
      chainId: 1,
      blockNumber: 0,
      blockHash: hex(64),
      parentHash: hex(64, 'F'),
      blockTimestamp: 0,
      removed: false,
    },
    {
      chainId: 2147483647,
      blockNumber: Number.MAX_SAFE_INTEGER,
      blockHash: base58(43),
      parentHash: base58(32),
      blockTimestamp: 1_760_000_000,
      removed: true,
    },
  ],
  transfers: [
    {
      ...evmChain,
      vault: 'nest-alpha',
      token: hex(40, '1'),
      from: `0x${'0'.repeat(40)}`,
      to: `0x${'Ab'.repeat(20)}`,
      amount: '1000000',
      transactionIndex: 0,
    },
    {
      ...solanaChain,
      vault: 'x0-',
      token: base58(44, 3),
      from: base58(42, 4),
      to: base58(32, 5),
      amount: String(TWO_255 - 1n),
      transactionIndex: -1,
    },
    {
      ...evmChain,
      vault: '0',
      token: hex(40),
      from: hex(40),
      to: base58(88),
      amount: '0',
      transactionIndex: 2147483647,
    },
  ],
  activity: [
    {
      ...evmChain,
      vault: 'nest-beta',
      kind: 'DEPOSIT',
      user: hex(40, 'e'),
      shares: '5',
      sharesToken: hex(40, 'd'),
      assets: String(TWO_256 - 1n),
      assetsToken: hex(40, 'c'),
      assetsDecimals: 36,
    },
    {
      ...solanaChain,
      vault: 'sol-vault',
      kind: 'BRIDGE_OUT',
      user: base58(44, 6),
      shares: '9'.repeat(77),
      sharesToken: base58(43, 7),
      assets: '0',
      assetsToken: base58(44, 8),
      assetsDecimals: 0,
    },
  ],
  rates: [
    {
      ...evmChain,
      vault: 'nest-alpha',
      accountant: hex(40, '2'),
      rate: '1000123',
      rateDecimals: 6,
      source: 'EVENT',
      isPaused: false,
    },
    {
      ...solanaChain,
      vault: 'sol-vault',
      accountant: base58(44, 9),
      rate: String(TWO_256 - 1n),
      rateDecimals: 9,
      source: 'READ',
      isPaused: true,
    },
  ],
};
const FAST_FAMILIES = Object.keys(VALID) as (keyof typeof VALID)[];

/** zod accepts `x` and its data has exactly `x`'s own keys and values. */
function zodAgrees(family: FamilyName, x: unknown): boolean {
  let r: ReturnType<z.ZodType['safeParse']>;
  try {
    r = FAMILIES[family].schema.safeParse(x);
  } catch {
    // The uint256 refine runs even after its regex failed: BigInt throws on e.g. '0xg…'.
    return false;
  }
  if (!r.success) return false;
  const data = r.data as Rec;
  const keys = Reflect.ownKeys(x as object);
  return (
    keys.length === Reflect.ownKeys(data).length &&
    keys.every((k) => Object.hasOwn(data, k) && Object.is(data[k], (x as Rec)[k]))
  );
}

/** Values that break (or, some of them, still satisfy) some field's rule. */
const nines = (n: number) => '9'.repeat(n);
const POOL: unknown[] = [
  // numbers
  0,
  -0,
  1,
  -1,
  36,
  37,
  255,
  2147483647,
  2147483648,
  -2147483648,
  -2147483649,
  4294967295,
  4294967296,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  -Number.MAX_SAFE_INTEGER,
  1.5,
  NaN,
  Infinity,
  -Infinity,
  1e21,
  1n,
  // decimal strings
  '',
  '0',
  '00',
  '01',
  '1',
  '-1',
  '1.0',
  '1e3',
  ' 1',
  '1 ',
  '+1',
  '١',
  nines(76),
  nines(77),
  nines(78),
  nines(79),
  `1${'0'.repeat(76)}`,
  String(TWO_255 - 1n),
  String(TWO_255),
  String(TWO_256 - 1n),
  String(TWO_256),
  // hex
  hex(40),
  hex(40, 'A'),
  `0X${'a'.repeat(40)}`,
  hex(39),
  hex(41),
  hex(40, 'g'),
  hex(64),
  hex(64, 'D'),
  hex(63),
  hex(65),
  '0x',
  ` ${hex(40)}`,
  `${hex(40)}\n`,
  // base58
  base58(31),
  base58(32),
  base58(42),
  base58(44),
  base58(88),
  base58(89),
  `${base58(43)}0`,
  `${base58(43)}O`,
  `${base58(43)}I`,
  `${base58(43)}l`,
  `${base58(43)}\n`,
  `${base58(42)}\u{1F600}`,
  // slugs
  'a',
  'nest-alpha',
  '-a',
  'a-',
  'A',
  'a_b',
  'a\n',
  'a b',
  'ä',
  // enums and booleans
  'DEPOSIT',
  'deposit',
  'BRIDGE_OUT',
  'EVENT',
  'READ',
  'read',
  true,
  false,
  'true',
  null,
  undefined,
  // objects
  {},
  [],
  new Date(0),
  new String('a'),
  new Number(1),
  () => 1,
  Symbol('s'),
];

/** An avsc-decoded record: an instance whose prototype has enumerable methods. */
const AVSC_PROTO = { clone() {}, toBuffer() {} };

/** `base` with one to three random mutations: field values, keys, or the object's shape. */
function mutate(family: keyof typeof VALID, base: Rec, rnd: () => number): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  let x: Rec = { ...base };
  const keys = Object.keys(base);
  for (let n = 1 + Math.floor(rnd() * 3); n > 0; n--) {
    const key = pick(keys);
    switch (
      pick([
        'swap',
        'swap',
        'value',
        'value',
        'value',
        'delete',
        'extra',
        'hidden',
        'symbol',
        'inherit',
        'avsc',
      ])
    ) {
      case 'swap':
        // Another valid record's value: keeps a share of the mutants valid.
        x[key] = pick(VALID[family])[key];
        break;
      case 'value':
        x[key] = pick(POOL);
        break;
      case 'delete':
        delete x[key];
        break;
      case 'extra':
        // defineProperty: plain assignment to '__proto__' would set the prototype instead.
        Object.defineProperty(x, pick(['extra', 'toString', '__proto__', '0']), {
          value: pick(POOL),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        break;
      case 'hidden':
        Object.defineProperty(x, 'hidden', { value: 1, enumerable: false });
        break;
      case 'symbol':
        x[Symbol('extra')] = 1;
        break;
      case 'inherit': {
        const { [key]: moved, ...rest } = x;
        x = Object.assign(Object.create({ [key]: moved }), rest);
        break;
      }
      case 'avsc':
        x = Object.assign(Object.create(AVSC_PROTO), x);
        break;
    }
  }
  return rnd() < 0.03 ? Object.assign([], x) : x;
}

describe('fastValid', () => {
  it('accepts valid EVM and Solana records of the fast families, as zod does, unchanged', () => {
    for (const family of FAST_FAMILIES)
      for (const rec of VALID[family]) {
        expect(fastValid(family, rec), inspect(rec)).toBe(true);
        const parsed = FAMILIES[family].schema.safeParse(rec);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toStrictEqual(rec);
        expect(fastValid(family, Object.assign(Object.create(AVSC_PROTO), rec))).toBe(true);
      }
  });

  it('accepts only records that zod accepts unchanged (seeded mutations)', () => {
    const rnd = seededRandom(0x5eed);
    const unsound: string[] = [];
    let zodOk = 0;
    let fastOk = 0;
    let total = 0;
    for (const family of FAST_FAMILIES)
      for (let i = 0; i < 1500; i++) {
        const x = mutate(family, VALID[family][i % VALID[family].length], rnd);
        const agrees = zodAgrees(family, x);
        const fast = fastValid(family, x);
        total++;
        if (agrees) zodOk++;
        if (fast) fastOk++;
        if (fast && !agrees) unsound.push(`${family}: ${inspect(x)}`);
      }
    expect(unsound).toEqual([]);
    // Enough mutants stay valid for the share below to mean something, and the fast
    // path takes nearly all of them (it declines e.g. a declared key that is not enumerable).
    expect(total).toBe(6000);
    expect(zodOk).toBeGreaterThan(500);
    expect(fastOk / zodOk).toBeGreaterThan(0.95);
  });

  it('rejects each kind of problem the mutations can hide behind', () => {
    const t = VALID.transfers[0];
    const r = VALID.rates[0];
    const { removed: _r, ...noRemoved } = t;
    const { transactionIndex: _i, ...noTransactionIndex } = t;
    const { isPaused: _p, ...noPaused } = r;
    const { vault, ...noVault } = t;
    const cases: [FamilyName, unknown][] = [
      ['transfers', noRemoved],
      // A default zod would fill in changes the record: not the fast path's to accept.
      ['transfers', noTransactionIndex],
      ['transfers', { ...t, transactionIndex: -2 }],
      ['transfers', { ...t, transactionIndex: 2 ** 31 }],
      ['rates', noPaused],
      ['rates', { ...r, isPaused: undefined }],
      ['transfers', { ...t, amount: String(TWO_255) }],
      ['activity', { ...VALID.activity[0], shares: String(TWO_256) }],
      ['transfers', { ...t, amount: '0123' }],
      ['transfers', { ...t, extra: 1 }],
      ['transfers', { ...t, [Symbol('s')]: 1 }],
      ['transfers', Object.assign([], t)],
      ['transfers', Object.assign(Object.create({ vault }), noVault)],
      ['transfers', { ...t, chainId: 0 }],
      ['transfers', { ...t, chainId: 2 ** 31 }],
      ['transfers', { ...t, logIndex: 2 ** 31 }],
      ['transfers', { ...t, logIndex: -1 }],
      ['transfers', { ...t, blockTimestamp: 2 ** 32 }],
      ['activity', { ...VALID.activity[0], assetsDecimals: 37 }],
      ['rates', { ...r, rateDecimals: 1.5 }],
      ['transfers', { ...t, blockNumber: 2 ** 53 }],
      ['transfers', { ...t, token: hex(40, 'G') }],
      ['activity', { ...VALID.activity[0], kind: 'deposit' }],
      ['rates', { ...r, source: 'OTHER' }],
      ['blocks', { ...VALID.blocks[0], parentHash: hex(63) }],
      ['transfers', null],
      ['transfers', 'record'],
    ];
    for (const [family, x] of cases) expect(fastValid(family, x), `${family} ${inspect(x)}`).toBe(false);
  });

  it('returns false for families without a fast path', () => {
    const fee = {
      ...evmChain,
      vault: 'nest-alpha',
      kind: 'MANAGEMENT',
      token: hex(40),
      amount: '1',
      decimals: 6,
      usdPrice: '1.5',
    };
    expect(FAMILIES.fees.schema.safeParse(fee).success).toBe(true);
    expect(fastValid('fees', fee)).toBe(false);
    for (const family of Object.keys(FAMILIES) as FamilyName[])
      if (!(FAST_FAMILIES as string[]).includes(family))
        expect(fastValid(family, VALID.transfers[0]), family).toBe(false);
  });
});

/** The string kinds' rules as regular expressions: an independent statement of what each check accepts. */
const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]{32,88}$/;
const RULES: [string, { zod: z.ZodType; fast?: (v: unknown) => boolean }, (s: string) => boolean][] = [
  ['account', k.account, (s) => /^0x[0-9a-fA-F]{40}$/.test(s) || BASE58_RE.test(s)],
  ['hashOrSig', k.hashOrSig, (s) => /^0x[0-9a-fA-F]{64}$/.test(s) || BASE58_RE.test(s)],
  ['base58', k.base58, (s) => BASE58_RE.test(s)],
  ['slug', k.slug, (s) => /^[a-z0-9][a-z0-9-]*$/.test(s)],
  ['uint256', k.uint256, (s) => /^(0|[1-9][0-9]{0,77})$/.test(s) && BigInt(s) < TWO_256],
];

describe('the string kinds', () => {
  it('check exactly their rules, in zod and on the fast path alike', () => {
    const rnd = seededRandom(0xc0de);
    const chars = '0123456789abcdefABCDEFxXOIl-_ +.\u00e9\u0660\u{1f600}';
    const seeds = [
      hex(40),
      hex(64),
      base58(32),
      base58(44),
      base58(88),
      'nest-alpha',
      '0',
      (TWO_256 - 1n).toString(),
    ];
    const samples = new Set<string>(['', '-a', '0x', TWO_256.toString(), '01', `0X${'a'.repeat(40)}`]);
    for (let i = 0; i < 4000; i++) {
      const [...s] = seeds[i % seeds.length];
      for (let n = 1 + Math.floor(rnd() * 2); n > 0; n--) {
        const at = Math.floor(rnd() * (s.length + 1));
        const c = [...chars][Math.floor(rnd() * [...chars].length)];
        const op = rnd();
        if (op < 0.4) s[Math.min(at, s.length - 1)] = c;
        else if (op < 0.7) s.splice(at, 0, c);
        else s.splice(at, 1);
      }
      samples.add(s.join(''));
    }
    for (const [name, kind, rule] of RULES)
      for (const s of samples) {
        const want = rule(s);
        expect(kind.fast?.(s), `${name} fast ${JSON.stringify(s)}`).toBe(want);
        expect(kind.zod.safeParse(s).success, `${name} zod ${JSON.stringify(s)}`).toBe(want);
      }
  });
});
