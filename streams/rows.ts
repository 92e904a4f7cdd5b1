/**
 * Maps a validated event record to the row of its raw table, as its family's descriptor
 * says (schemas/families.ts): columns, conversions (EVM hex lower-cased, times as the
 * store reads them), `event_id`, and the family's table and state flags.
 */
import type { Row } from '../schemas/descriptor.ts';
import { FAMILIES, type FamilyName, type Publishable, type Valid } from '../schemas/families.ts';

const names = Object.keys(FAMILIES) as FamilyName[];
const only = (flag: 'versioned' | 'stateChecked') => new Set(names.filter((f) => FAMILIES[f][flag]));

/** The raw table of each family. */
export const TABLES = Object.fromEntries(names.map((f) => [f, FAMILIES[f].table])) as Record<
  FamilyName,
  string
>;

/**
 * The raw-table row for a valid record (without `ver`, which the writer assigns). Fields
 * with a default may be left out (a producer's record): the row has the default, as the
 * record read back from the bus would.
 */
export function toRow<F extends FamilyName>(family: F, rec: Valid<F> | Publishable<F>): Row {
  return (FAMILIES[family].row as (r: typeof rec) => Row)(rec);
}

/** Families whose raw table carries `ver`/`removed` and an `event_id`. */
export const VERSIONED: ReadonlySet<FamilyName> = only('versioned');
/** Families whose incremental views sum deltas: each state change must be inserted exactly once. */
export const STATE_CHECKED: ReadonlySet<FamilyName> = only('stateChecked');
