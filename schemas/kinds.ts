/**
 * The value kinds event fields are made of. Each rule is written once, as a check on a decoded
 * value, and applied three ways:
 *   zod:  the consumer's validation and the words of its errors, built from that check (a
 *         `z.string()` with the rule as its refinement, or zod's own number checks from the same
 *         bounds);
 *   fast: the same check alone, without zod's clone of the record (schemas/fast-valid.ts): what
 *         it accepts, zod accepts unchanged;
 *   wire: the rule's parameters (`Wire`), which the transcoder checks on the Avro bytes with the
 *         same character tables (streams/transcode.ts).
 * The family descriptors (schemas/families.ts) are built from these; tests hold the checks to the
 * rules' regular expressions and the transcoder to the general path (test/unit/fast-valid.test.ts,
 * test/unit/transcode.test.ts).
 */
import { z } from 'zod';
import type { Out } from './columns.ts';

export type Check = (v: unknown) => boolean;

/** How the transcoder reads and checks a value from Avro bytes. */
export type Wire =
  | { avro: 'int' | 'long'; min: number; max: number }
  | { avro: 'boolean' }
  | { avro: 'string'; chars: 'hexOrBase58'; digits: number }
  | { avro: 'string'; chars: 'slug' }
  | { avro: 'string'; chars: 'uint'; max: string };

export interface Kind<Z extends z.ZodType = z.ZodType> {
  zod: Z;
  fast?: Check;
  wire?: Wire;
  /** How the value becomes its column (schemas/columns.ts); as it is when absent. */
  out?: Out;
}

/** A lookup table of the characters in `chars`, indexed by char code. */
function charClass(chars: string): Uint8Array {
  const t = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;
  return t;
}
// The transcoder checks the same classes on bytes.
export const DIGIT = charClass('0123456789');
export const HEX = charClass('0123456789abcdefABCDEF');
export const BASE58 = charClass('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz');
export const SLUG = charClass('abcdefghijklmnopqrstuvwxyz0123456789-');

/** Whether every char of `s` from `from` on is in `table` (codes past 127 read undefined). */
function allIn(table: Uint8Array, s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) if (table[s.charCodeAt(i)] !== 1) return false;
  return true;
}

// ---- numbers

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** An integer in [min, max]; Avro `int` when both fit 32 bits, else `long`. */
export function int(min: number, max: number, avro: 'int' | 'long' = 'int') {
  return {
    zod: z.number().int().min(min).max(max),
    fast: (v) => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max,
    wire: { avro, min, max } as Wire,
  } satisfies Kind;
}
export const int32 = int(INT32_MIN, INT32_MAX);
export const positiveInt32 = int(1, INT32_MAX);
export const nonNegInt32 = int(0, INT32_MAX);
export const decimals = int(0, 36);
export const nonNegLong = int(0, Number.MAX_SAFE_INTEGER, 'long');
/** Unix seconds up to the end of ClickHouse `DateTime` (2106-02-07): later ones cannot be stored as they are. */
export const unixSeconds = { ...int(0, 4_294_967_295, 'long'), out: 'time' as Out } satisfies Kind;

// ---- booleans

/** Stored as 1 or 0. */
export const flag = {
  zod: z.boolean(),
  fast: (v: unknown) => typeof v === 'boolean',
  wire: { avro: 'boolean' } as Wire,
  out: 'flag' as Out,
} satisfies Kind;

// ---- strings

/**
 * `0x` + `digits` hex digits, or base58 of 32..88 chars. '0' is not a base58 digit, so
 * the first char tells which of the two to check.
 */
const hexOrBase58 =
  (digits: number): Check =>
  (v) =>
    typeof v === 'string' &&
    (v.charCodeAt(0) === 48
      ? v.length === digits + 2 && v.charCodeAt(1) === 120 && allIn(HEX, v, 2)
      : v.length >= 32 && v.length <= 88 && allIn(BASE58, v, 0));

/** A string kind: zod's rule is the check itself, with `error` as its words. */
function checked(check: Check, error: string) {
  return z.string({ error }).refine((v) => check(v), { error });
}

const isBase58 = (v: unknown) =>
  typeof v === 'string' && v.length >= 32 && v.length <= 88 && allIn(BASE58, v, 0);
/** EVM address or Solana base58 account; EVM hex is stored lower-case. */
export const account = {
  zod: checked(hexOrBase58(40), 'expected an EVM address (0x + 40 hex) or a Solana base58 address'),
  fast: hexOrBase58(40),
  wire: { avro: 'string', chars: 'hexOrBase58', digits: 40 } as Wire,
  out: 'norm' as Out,
} satisfies Kind;
/** A 0x 32-byte hash or a Solana base58 signature / blockhash; EVM hex is stored lower-case. */
export const hashOrSig = {
  zod: checked(hexOrBase58(64), 'expected a 0x 32-byte hash or a Solana base58 signature'),
  fast: hexOrBase58(64),
  wire: { avro: 'string', chars: 'hexOrBase58', digits: 64 } as Wire,
  out: 'norm' as Out,
} satisfies Kind;
export const base58 = { zod: checked(isBase58, 'expected a base58 string'), fast: isBase58 } satisfies Kind;

const isSlug = (v: unknown) =>
  typeof v === 'string' && v.length > 0 && v.charCodeAt(0) !== 45 && allIn(SLUG, v, 0);
export const slug = {
  zod: checked(isSlug, 'expected a vault slug'),
  fast: isSlug,
  wire: { avro: 'string', chars: 'slug' } as Wire,
} satisfies Kind;

/**
 * A decimal string without leading zeros, at most `max` (`message` words zod's error past it).
 * Digit strings of equal length compare as numbers, so the fast check needs no BigInt.
 */
export function uintAtMost(max: bigint, message = 'exceeds uint256') {
  const m = max.toString();
  /** Digits with no leading zero, of at most 78 digits (2^256 has 78). */
  const isUint = (v: unknown): v is string =>
    typeof v === 'string' &&
    v.length > 0 &&
    v.length <= 78 &&
    (v.length === 1 || v.charCodeAt(0) !== 48) &&
    allIn(DIGIT, v, 0);
  const atMost = (v: string) => v.length < m.length || (v.length === m.length && v <= m);
  const shape = 'expected a non-negative integer as a decimal string';
  return {
    zod: z
      .string({ error: shape })
      // abort: zod runs later checks after a failed one.
      .refine(isUint, { error: shape, abort: true })
      .refine(atMost, message),
    fast: (v) => isUint(v) && atMost(v),
    wire: { avro: 'string', chars: 'uint', max: m } as Wire,
  } satisfies Kind;
}
export const uint256 = uintAtMost((1n << 256n) - 1n);

const decimalZod = z
  .string()
  .regex(/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/, 'expected a decimal number as a string');
export const decimalString = { zod: decimalZod } satisfies Kind;
/** A decimal, or '' for none (stored as NULL). */
export const optionalDecimal = {
  zod: z.union([z.literal(''), decimalZod]).default(''),
  out: 'orNull' as Out,
} satisfies Kind;

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const set = new Set<unknown>(values);
  return { zod: z.enum(values), fast: (v: unknown) => set.has(v) } satisfies Kind;
}

/** A kind from a zod type alone (no fast or wire check: the general path only). */
export function plain<Z extends z.ZodType>(zod: Z, out?: Out): Kind<Z> {
  return out ? { zod, out } : { zod };
}

/**
 * `kind` with a zod default: the field's Avro default, so that a record written before the
 * field existed reads the same through zod as through the codec. The fast and wire checks
 * still need the value present (a default filled in would change the record).
 */
export function withDefault<Z extends z.ZodType>(
  kind: Kind<Z>,
  value: Exclude<z.output<Z>, undefined>,
): Kind<z.ZodDefault<Z>> {
  return { ...kind, zod: kind.zod.default(value as never) as z.ZodDefault<Z> };
}
