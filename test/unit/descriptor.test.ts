/**
 * Every family's descriptor (schemas/families.ts) against its newest `.avsc`, the wire
 * contract: the same fields in the same order, each field's kind readable from its Avro
 * type, and every Avro default the one zod fills in. The table side is
 * test/unit/descriptor-store.test.ts.
 */
import type avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { loadSchemas } from '../../schemas/codec.ts';
import { FAMILIES, type FamilyName } from '../../schemas/families.ts';
import { FAST_FAMILIES } from '../../schemas/fast-valid.ts';
import { STATE_CHECKED, TABLES, VERSIONED } from '../../streams/rows.ts';
import { transcoderFor } from '../../streams/transcode.ts';

const schemas = loadSchemas();
const names = Object.keys(FAMILIES) as FamilyName[];
const newest = (f: FamilyName) => schemas.get(f)?.at(-1)?.type as avro.types.RecordType | undefined;

/** The Avro type name a field reads as (a union or logical type by its own name). */
const avroName = (t: avro.Type) => t.typeName;

describe('family descriptors against the .avsc files', () => {
  it.each(names)('%s: the descriptor has the newest .avsc fields, in order, and nothing else', (family) => {
    const type = newest(family);
    expect(type, `no schemas/avro/${family}.v<N>.avsc`).toBeDefined();
    const avroFields = type!.fields.map((f) => f.name);
    const fields = FAMILIES[family].fields.map((f) => f.name);
    const missing = avroFields.filter((n) => !fields.includes(n));
    const extra = fields.filter((n) => !avroFields.includes(n));
    expect(missing, `${family}: .avsc fields the descriptor lacks`).toEqual([]);
    expect(extra, `${family}: descriptor fields the .avsc lacks`).toEqual([]);
    expect(fields, `${family}: field order`).toEqual(avroFields);
  });

  it.each(names)('%s: each kind with a wire check reads the Avro type of its field', (family) => {
    const type = newest(family)!;
    for (const f of FAMILIES[family].fields) {
      const wire = f.kind.wire;
      if (!wire) continue;
      expect(avroName(type.field(f.name).type), `${family}.${f.name}`).toBe(wire.avro);
    }
  });

  it.each(names)(
    '%s: a record without its defaulted fields reads the .avsc defaults through zod',
    (family) => {
      const type = newest(family)!;
      const defaulted = type.fields.filter((f) => f.defaultValue() !== undefined);
      if (!defaulted.length) return;
      // A valid record from the codec's own defaults and random values is not at hand for every
      // family, so each default is checked on its field's schema alone.
      const shape = FAMILIES[family].schema.shape as Record<
        string,
        { safeParse(v: unknown): { success: boolean; data?: unknown } }
      >;
      for (const f of defaulted) {
        const parsed = shape[f.name].safeParse(undefined);
        expect(parsed.success, `${family}.${f.name} has an Avro default but zod requires it`).toBe(true);
        expect(parsed.data, `${family}.${f.name}: zod's default differs from the .avsc's`).toEqual(
          f.defaultValue(),
        );
      }
      // And the other way: zod fills in nothing the .avsc does not.
      for (const f of type.fields.filter((x) => x.defaultValue() === undefined))
        expect(
          shape[f.name].safeParse(undefined).success,
          `${family}.${f.name}: zod default without an Avro one`,
        ).toBe(false);
    },
  );
});

describe('what comes from the descriptors', () => {
  it('tables, flags and fast paths', () => {
    expect(TABLES.transfers).toBe('transfers_raw');
    expect(new Set(Object.values(TABLES)).size).toBe(names.length);
    expect([...STATE_CHECKED].sort()).toEqual(['fees', 'transfers']);
    for (const f of names) {
      const d = FAMILIES[f];
      expect(VERSIONED.has(f), f).toBe(d.versioned);
      // A chain event is versioned and retractable, and its row leads with its identity.
      if (d.event) {
        expect(d.versioned && d.retractable, f).toBe(true);
        expect(d.columns[0], f).toBe('event_id');
      }
      if (d.stateChecked) expect(d.event, `${f}: state checks need event ids`).toBe(true);
    }
    expect([...FAST_FAMILIES].sort()).toEqual(['activity', 'blocks', 'rates', 'transfers']);
  });

  it('a transcoder exists for the families marked so, built from the newest .avsc field order', () => {
    for (const f of names) {
      const t = transcoderFor(f, newest(f)!);
      expect(!!t, f).toBe(FAMILIES[f].transcode);
      if (t) expect(t.columns).toEqual([...FAMILIES[f].columns, 'ver']);
    }
  });

  it('refuses a writer schema whose fields are not the descriptor’s, naming the problem', async () => {
    const { Transcoder } = await import('../../streams/transcode.ts');
    const fields = FAMILIES.transfers.fields.map((f) => f.name);
    expect(() => new Transcoder('transfers', fields.slice(1))).toThrow(/writer schema's fields/);
    expect(() => new Transcoder('transfers', [...fields.slice(1), 'extra'])).toThrow(
      /writer schema's fields/,
    );
    expect(
      () =>
        new Transcoder(
          'fees',
          FAMILIES.fees.fields.map((f) => f.name),
        ),
    ).toThrow(/no transcoder/);
  });
});
