/**
 * A hand-written fast path for the zod schemas of the hottest families. It is a sound
 * subset of `records.ts`: when `fastValid` returns true, `schema.safeParse(rec)` succeeds
 * and its data equals `rec`, so the consumer can use the record as decoded and skip zod's
 * regexes, BigInt refines and clone. When it returns false the caller asks zod, which
 * either accepts the record anyway (stricter here is fine) or words the error.
 * Assumes data properties, as decoded records have: an accessor could answer differently
 * to zod than here.
 */
import type { FamilyName } from './families.ts';
import { activityRecord, rateRecord } from './records.ts';

type Check = (v: unknown) => boolean;
type Fields = readonly (readonly [key: string, check: Check])[];

/** A lookup table of the characters in `chars`, indexed by char code. */
function charClass(chars: string): Uint8Array {
  const t = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;
  return t;
}
// Shared with the transfer transcoder (streams/transcode.ts), which checks the same on bytes.
export const DIGIT = charClass('0123456789');
export const HEX = charClass('0123456789abcdefABCDEF');
export const BASE58 = charClass('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz');
export const SLUG = charClass('abcdefghijklmnopqrstuvwxyz0123456789-');

/** Whether every char of `s` from `from` on is in `table` (codes past 127 read undefined). */
function allIn(table: Uint8Array, s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) if (table[s.charCodeAt(i)] !== 1) return false;
  return true;
}

const int =
  (min: number, max: number): Check =>
  (v) =>
    Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
const INT32_MAX = 2147483647;
const positiveInt32 = int(1, INT32_MAX);
const nonNegInt32 = int(0, INT32_MAX);
const nonNegInt = int(0, Number.MAX_SAFE_INTEGER);
const unixSeconds = int(0, 4_294_967_295);
const decimals = int(0, 36);
const bool: Check = (v) => typeof v === 'boolean';
const oneOf = (values: readonly string[]): Check => {
  const set = new Set<unknown>(values);
  return (v) => set.has(v);
};

/**
 * `0x` + `digits` hex digits, or base58 of 32..88 chars (zod's account / hashOrSig).
 * '0' is not a base58 digit, so the first char tells which of the two to check.
 */
const hexOrBase58 =
  (digits: number): Check =>
  (v) =>
    typeof v === 'string' &&
    (v.charCodeAt(0) === 48
      ? v.length === digits + 2 && v.charCodeAt(1) === 120 && allIn(HEX, v, 2)
      : v.length >= 32 && v.length <= 88 && allIn(BASE58, v, 0));
const account = hexOrBase58(40);
const hashOrSig = hexOrBase58(64);

const slug: Check = (v) =>
  typeof v === 'string' && v.length > 0 && v.charCodeAt(0) !== 45 && allIn(SLUG, v, 0);

/**
 * A decimal string without leading zeros, at most `max`. Digit strings of equal length
 * compare as numbers, so no BigInt is needed per record.
 */
const uintAtMost = (max: bigint): Check => {
  const m = max.toString();
  return (v) =>
    typeof v === 'string' &&
    v.length > 0 &&
    v.length <= m.length &&
    (v.length === 1 || v.charCodeAt(0) !== 48) &&
    allIn(DIGIT, v, 0) &&
    (v.length < m.length || v <= m);
};
const uint256 = uintAtMost((1n << 256n) - 1n);

// Booleans with a zod default must be present: a default filled in would change the record.
const CHAIN: Fields = [
  ['chainId', positiveInt32],
  ['blockNumber', nonNegInt],
  ['blockHash', hashOrSig],
  ['blockTimestamp', unixSeconds],
  ['txHash', hashOrSig],
  ['logIndex', nonNegInt32],
  ['removed', bool],
];

const FAST: Partial<Record<FamilyName, Fields>> = {
  blocks: [
    ['chainId', positiveInt32],
    ['blockNumber', nonNegInt],
    ['blockHash', hashOrSig],
    ['parentHash', hashOrSig],
    ['blockTimestamp', unixSeconds],
    ['removed', bool],
  ],
  transfers: [
    ...CHAIN,
    ['vault', slug],
    ['token', account],
    ['from', account],
    ['to', account],
    ['amount', uintAtMost((1n << 255n) - 1n)],
  ],
  activity: [
    ...CHAIN,
    ['vault', slug],
    ['kind', oneOf(activityRecord.shape.kind.options)],
    ['user', account],
    ['shares', uint256],
    ['sharesToken', account],
    ['assets', uint256],
    ['assetsToken', account],
    ['assetsDecimals', decimals],
  ],
  rates: [
    ...CHAIN,
    ['vault', slug],
    ['accountant', account],
    ['rate', uint256],
    ['rateDecimals', decimals],
    ['source', oneOf(rateRecord.shape.source.options)],
    ['isPaused', bool],
  ],
};

const isOwnEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * True only when zod would accept `rec` unchanged: an object (not an array) whose own
 * keys are exactly the declared fields, each valid. Any other record, or a family
 * without a fast path, gives false: ask zod.
 */
export function fastValid(family: FamilyName, rec: unknown): boolean {
  const fields = FAST[family];
  if (fields === undefined || typeof rec !== 'object' || rec === null || Array.isArray(rec)) return false;
  // Counting all own keys (symbols and non-enumerable ones too) rules out anything zod
  // would strip; prototype properties (avsc's record methods) are not copied by zod either.
  // Two calls, as Reflect.ownKeys skips V8's key cache and costs 4x more.
  if (
    Object.getOwnPropertyNames(rec).length !== fields.length ||
    Object.getOwnPropertySymbols(rec).length > 0
  )
    return false;
  const r = rec as Record<string, unknown>;
  for (const [key, check] of fields) if (!isOwnEnumerable.call(r, key) || !check(r[key])) return false;
  return true;
}
