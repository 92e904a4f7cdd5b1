/**
 * One descriptor per event family: what the rest of the pipeline derives from or is
 * checked against. The `.avsc` files of `schemas/avro/` stay the wire contract (the codec
 * reads them; tests hold every descriptor to its family's newest one field for field);
 * a descriptor says, for each of those fields, its kind (schemas/kinds.ts: the zod rule,
 * the fast checks) and its raw-table column, and for the family its partition key, table
 * and state flags. From it come:
 *   - the zod schema and the TypeScript type of a record (`schema`, `Valid<F>`);
 *   - the row of its raw table (`row`, `columns`): no hand-written mapping per family;
 *   - the fast paths: `fastValid` (schemas/fast-valid.ts) and the transcoder
 *     (streams/transcode.ts), both built from the kinds.
 * Adding a field to a family is then: the `.avsc` (a new version with a default), one
 * line here in its family, and the SQL migration adding its column
 * (test/unit/descriptor-store.test.ts fails with the field's name if one is missing).
 */
import { z } from 'zod';
import { VaultstreamError } from '../core/errors.ts';
import { OUT, type Out } from './columns.ts';
import type { Kind } from './kinds.ts';

export type Row = Record<string, unknown>;

/** A field: its kind, and its column when that is not the snake_case of its name. */
export type FieldSpec<Z extends z.ZodType = z.ZodType> = Kind<Z> & { column?: string };
type Fields = Record<string, FieldSpec>;
type Shape<F extends Fields> = { [K in keyof F]: F[K]['zod'] };

/** `kind` stored under `column` (and converted by `out` instead of the kind's conversion, when given). */
export function col<Z extends z.ZodType>(kind: Kind<Z>, column: string, out?: Out | null): FieldSpec<Z> {
  const f: FieldSpec<Z> = { ...kind, column };
  if (out !== undefined) f.out = out ?? undefined;
  return f;
}

/** A field of a descriptor, resolved. */
export interface FieldDesc {
  /** The Avro and record field name. */
  name: string;
  column: string;
  kind: Kind;
}

export interface FamilyOptions<F extends Fields> {
  /** Topic suffix and Avro file stem (`schemas/avro/<name>.v<N>.avsc`). */
  name: string;
  /** The raw table rows are inserted into. */
  table: string;
  /** The record's fields, in the order of its newest `.avsc`. */
  fields: F;
  /** Partition key of a record (docs/architecture.md, Events and partition keys). */
  key: (rec: z.output<z.ZodObject<Shape<F>>>) => string;
  /** A chain event: its row starts with `event_id` (`chainId:blockHash:logIndex`). */
  event?: boolean;
  /** The table carries `ver` (the consumer's insert sequence; the newest state wins). */
  versioned?: boolean;
  /** Incremental views sum this family's deltas: each state change must be inserted exactly once. */
  stateChecked?: boolean;
  /** Decoded records are checked by the kinds' fast checks before zod (every field needs one). */
  fast?: boolean;
  /** Records in the newest schema go from Avro bytes straight to their line (every field needs a wire check). */
  transcode?: boolean;
  /** Columns computed from the whole record, after the fields' columns. */
  derived?: Record<string, (rec: z.output<z.ZodObject<Shape<F>>>) => unknown>;
}

export interface FamilyDescriptor<S extends z.ZodObject = z.ZodObject> {
  name: string;
  table: string;
  /** Validates a decoded record (and fills the defaults of the `.avsc`). */
  schema: S;
  key(rec: z.output<S>): string;
  fields: readonly FieldDesc[];
  /** The row's columns, in order (without `ver`). */
  columns: readonly string[];
  /** The raw-table row of a valid record (without `ver`, which the writer assigns). */
  row(rec: z.output<S>): Row;
  event: boolean;
  versioned: boolean;
  /** The record carries a `removed` flag: a reorg retracts it by the same event again. */
  retractable: boolean;
  stateChecked: boolean;
  fast: boolean;
  transcode: boolean;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function defineFamily<F extends Fields>(o: FamilyOptions<F>): FamilyDescriptor<z.ZodObject<Shape<F>>> {
  const fields: FieldDesc[] = Object.entries(o.fields).map(([name, f]) => ({
    name,
    column: f.column ?? snake(name),
    kind: f,
  }));
  const shape = Object.fromEntries(fields.map((f) => [f.name, f.kind.zod])) as Shape<F>;
  const schema = z.object(shape);
  const derived = Object.entries(o.derived ?? {});
  const columns = [
    ...(o.event ? ['event_id'] : []),
    ...fields.map((f) => f.column),
    ...derived.map(([c]) => c),
  ];
  if (new Set(columns).size !== columns.length)
    throw new VaultstreamError('INTERNAL', `family ${o.name}: two fields write the same column`);
  for (const [flag, check] of [
    ['fast', 'fast'],
    ['transcode', 'wire'],
  ] as const)
    if (o[flag])
      for (const f of fields)
        if (!f.kind[check])
          throw new VaultstreamError(
            'INTERNAL',
            `family ${o.name} is ${flag} but field ${f.name} has no ${check} check`,
          );
  const row = compileRow(fields, !!o.event, derived) as (rec: z.output<z.ZodObject<Shape<F>>>) => Row;
  return {
    name: o.name,
    table: o.table,
    schema,
    key: o.key,
    fields,
    columns,
    row,
    event: !!o.event,
    versioned: !!o.versioned,
    retractable: Object.hasOwn(o.fields, 'removed'),
    stateChecked: !!o.stateChecked,
    fast: !!o.fast,
    transcode: !!o.transcode,
  };
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The row mapping of a family, compiled from its fields to one object literal (the shape V8
 * builds fastest; a loop over the fields cost 2.3x as much per record). Names are checked
 * to be identifiers before they go into the code; conversions are passed in, not inlined.
 */
function compileRow(
  fields: readonly FieldDesc[],
  event: boolean,
  derived: readonly [string, (rec: never) => unknown][],
): (rec: Record<string, unknown>) => Row {
  for (const name of [...fields.flatMap((f) => [f.name, f.column]), ...derived.map(([c]) => c)])
    if (!IDENT.test(name)) throw new VaultstreamError('INTERNAL', `not an identifier: ${name}`);
  const args: unknown[] = [];
  const arg = (v: unknown) => {
    args.push(v);
    return `a${args.length - 1}`;
  };
  const value = (f: FieldDesc) => {
    // A field left out takes its default, as zod would fill it in (a producer's record, unparsed).
    const fallback = f.kind.zod.safeParse(undefined);
    const v = fallback.success
      ? `(r.${f.name} === undefined ? ${arg(fallback.data)} : r.${f.name})`
      : `r.${f.name}`;
    return f.kind.out ? `${arg(OUT[f.kind.out])}(${v})` : v;
  };
  const body: string[] = [];
  const props: string[] = [];
  if (event) {
    // The event id uses the block hash as stored: computed once for both.
    const hash = fields.find((f) => f.name === 'blockHash');
    if (!hash || !fields.some((f) => f.name === 'chainId') || !fields.some((f) => f.name === 'logIndex'))
      throw new VaultstreamError('INTERNAL', 'a chain event needs chainId, blockHash and logIndex');
    body.push(`const h = ${value(hash)};`);
    props.push(`event_id: r.chainId + ':' + h + ':' + r.logIndex`);
  }
  for (const f of fields) props.push(`${f.column}: ${event && f.name === 'blockHash' ? 'h' : value(f)}`);
  for (const [c, fn] of derived) props.push(`${c}: ${arg(fn)}(r)`);
  const code = `return function row(r) { ${body.join(' ')} return { ${props.join(', ')} }; };`;
  return new Function(...args.map((_, i) => `a${i}`), code)(...args);
}
