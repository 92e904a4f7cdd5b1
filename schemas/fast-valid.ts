/**
 * The fast path of validation, built from the descriptors of the families marked `fast`
 * (schemas/families.ts): each field's kind has one check (schemas/kinds.ts), from which its zod
 * rule is built too. When `fastValid` returns true, `schema.safeParse(rec)` succeeds and its data
 * equals `rec`, so the consumer can use the record as decoded and skip zod's clone. When it
 * returns false the caller asks zod, which either accepts the record anyway (a default to fill
 * in) or words the error. Assumes data properties, as decoded records have: an accessor could
 * answer differently to zod than here. test/unit/fast-valid.test.ts holds the records to zod.
 */
import { FAMILIES, type FamilyName } from './families.ts';
import type { Check } from './kinds.ts';

type Fields = readonly (readonly [key: string, check: Check])[];

const FAST = new Map<FamilyName, Fields>();
for (const [name, d] of Object.entries(FAMILIES))
  if (d.fast)
    FAST.set(
      name as FamilyName,
      d.fields.map((f) => [f.name, f.kind.fast as Check] as const),
    );

/** The families with a fast path. */
export const FAST_FAMILIES: readonly FamilyName[] = [...FAST.keys()];

const isOwnEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * True only when zod would accept `rec` unchanged: an object (not an array) whose own
 * keys are exactly the declared fields, each valid. Any other record, or a family
 * without a fast path, gives false: ask zod.
 */
export function fastValid(family: FamilyName, rec: unknown): boolean {
  const fields = FAST.get(family);
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
