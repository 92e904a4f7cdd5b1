/**
 * The transfer transcoder (Avro bytes straight to a TabSeparated line) against the general
 * path it short-cuts: decode, fastValid or zod, toRow, `ver`, TsvLines.row. Whenever the
 * transcoder takes a record, the general path must accept it and write the same bytes;
 * when it declines, it must have written nothing. Ordinary transfers (EVM and Solana) must
 * take the fast path, or the benchmark would measure the other one.
 */
import { describe, expect, it } from 'vitest';
import { codecFor } from '../../schemas/codec.ts';
import { FAMILIES, type Valid } from '../../schemas/families.ts';
import { fastValid } from '../../schemas/fast-valid.ts';
import { TsvLines } from '../../store/tsv.ts';
import { encodeRows, prepareRows } from '../../streams/batch-encoder.ts';
import { toRow } from '../../streams/rows.ts';
import { transcoderFor } from '../../streams/transcode.ts';
import { base58, EVM_ZERO, SOLANA_ZERO } from '../support/events.ts';
import { seededRandom } from '../support/rng.ts';

const codec = codecFor({ topicPrefix: 't.' });
const HEAD = 10;
const transcoder = transcoderFor('transfers', codec.latest('transfers').type)!;
const TRANSFER_COLUMNS = transcoder.columns;

type Rec = Record<string, unknown>;

function transfer(over: Rec = {}): Rec {
  return {
    chainId: 98866,
    blockNumber: 1_234_567,
    blockHash: `0x${'ab'.repeat(32)}`,
    blockTimestamp: 1_767_225_600,
    txHash: `0x${'cd'.repeat(32)}`,
    logIndex: 7,
    removed: false,
    vault: 'usdc-vault-1',
    token: `0x${'1f'.repeat(20)}`,
    from: EVM_ZERO,
    to: `0x${'9e'.repeat(20)}`,
    amount: '1000000000000000000',
    ...over,
  };
}

/** The general path's line for a record's bytes, or undefined when it does not store the record. */
function general(bytes: Buffer, ver: number): { line: Buffer; row: Rec } | undefined {
  let rec: unknown;
  try {
    rec = codec.decodeSync('transfers', bytes)?.value;
  } catch {
    return undefined;
  }
  const parsed = fastValid('transfers', rec)
    ? { success: true as const, data: rec }
    : FAMILIES.transfers.schema.safeParse(rec);
  if (!parsed.success) return undefined;
  const row = toRow('transfers', parsed.data as Valid<'transfers'>);
  row.ver = ver;
  const lines = new TsvLines();
  lines.row(row, Object.keys(row));
  return { line: lines.finish().tsv, row };
}

function fast(bytes: Buffer, ver: number) {
  const lines = new TsvLines();
  const t = transcoder.line(bytes, HEAD, bytes.length, ver, lines);
  const out = lines.finish();
  if (!t) {
    // Declined: nothing written.
    expect(out.tsv.length).toBe(0);
    expect(out.ends.length).toBe(0);
    return undefined;
  }
  expect(out.ends).toEqual(Uint32Array.of(out.tsv.length));
  return { line: out.tsv, t };
}

/** Asserts the two paths agree on `bytes`; returns whether the transcoder took the record. */
function agree(bytes: Buffer, ver = 1_763_900_000_000_123): boolean {
  const g = general(bytes, ver);
  const f = fast(bytes, ver);
  if (!f) return false;
  expect(g, `the general path rejects what the transcoder took: ${bytes.toString('hex')}`).toBeDefined();
  expect(f.line.toString('latin1')).toBe(g!.line.toString('latin1'));
  expect(f.t).toEqual({
    eventId: g!.row.event_id,
    removed: g!.row.removed === 1,
    vault: g!.row.vault,
    chainId: g!.row.chain_id,
    blockNumber: g!.row.block_number,
  });
  return true;
}

const enc = (rec: Rec) => codec.encodeSync('transfers', rec);

describe('transfer transcoder', () => {
  it('writes the columns of toRow, then ver', () => {
    expect([...TRANSFER_COLUMNS]).toEqual([
      ...Object.keys(toRow('transfers', transfer() as Valid<'transfers'>)),
      'ver',
    ]);
  });

  it('takes ordinary EVM and Solana transfers and writes what the general path writes', () => {
    const solana = {
      chainId: 101,
      blockNumber: 312_000_000,
      blockHash: base58(44, 1),
      txHash: base58(88, 2),
      token: base58(44, 3),
      from: SOLANA_ZERO,
      to: base58(43, 4),
    };
    const cases: Rec[] = [
      transfer(),
      transfer({ removed: true }),
      transfer(solana),
      transfer({ ...solana, removed: true, amount: '1' }),
      transfer({
        blockHash: `0x${'AB'.repeat(32)}`,
        txHash: `0x${'Cd'.repeat(32)}`,
        from: `0x${'Ee'.repeat(20)}`,
      }),
      transfer({ blockTimestamp: 0 }),
      transfer({ blockTimestamp: 86_400 }),
      transfer({ blockTimestamp: 999_999_999 }),
      transfer({ blockTimestamp: 4_294_967_295 }),
      transfer({ blockNumber: 0, logIndex: 0, amount: '0', chainId: 1 }),
      transfer({ blockNumber: 2 ** 52 - 1, logIndex: 2_147_483_647, chainId: 2_147_483_647 }),
      transfer({ amount: ((1n << 255n) - 1n).toString() }),
      transfer({ vault: 'a' }),
      transfer({ transactionIndex: 0 }),
      transfer({ transactionIndex: 2_147_483_647 }),
      transfer({ ...solana, transactionIndex: -1 }),
    ];
    for (const c of cases) expect(agree(enc(c)), JSON.stringify(c)).toBe(true);
  });

  it('declines what the general path rejects, and writes nothing', () => {
    const bad: Rec[] = [
      transfer({ chainId: 0 }),
      transfer({ chainId: -5 }),
      transfer({ blockNumber: -1 }),
      transfer({ blockTimestamp: -1 }),
      transfer({ blockTimestamp: 4_294_967_296 }),
      transfer({ logIndex: -1 }),
      transfer({ blockHash: `0x${'ab'.repeat(31)}` }),
      transfer({ blockHash: `0x${'gb'.repeat(32)}` }),
      transfer({ txHash: `0X${'ab'.repeat(32)}` }),
      transfer({ token: `0x${'1f'.repeat(19)}` }),
      transfer({ from: base58(31, 0) }),
      transfer({ to: base58(89, 0) }),
      transfer({ to: `${base58(40, 0)}0` }),
      transfer({ to: `${base58(40, 0)}é` }),
      transfer({ vault: '' }),
      transfer({ vault: '-vault' }),
      transfer({ vault: 'Vault' }),
      transfer({ vault: 'vault\t1' }),
      transfer({ amount: '' }),
      transfer({ amount: '01' }),
      transfer({ amount: '-1' }),
      transfer({ amount: '1e18' }),
      transfer({ amount: (1n << 255n).toString() }),
      transfer({ amount: '9'.repeat(78) }),
      transfer({ transactionIndex: -2 }),
    ];
    for (const c of bad) {
      const bytes = enc(c);
      expect(fast(bytes, 1), JSON.stringify(c)).toBeUndefined();
      expect(general(bytes, 1), JSON.stringify(c)).toBeUndefined();
    }
  });

  it('agrees with the general path on 20,000 records with random bytes changed, cut or added', () => {
    const rnd = seededRandom(20261123);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
    const seeds = [
      transfer(),
      transfer({ chainId: 101, blockHash: base58(44, 5), txHash: base58(87, 6) }),
      transfer({ removed: true }),
    ].map(enc);
    let taken = 0;
    let declined = 0;
    for (let k = 0; k < 20_000; k++) {
      const base = pick(seeds);
      let bytes = Buffer.from(base);
      const op = rnd();
      if (op < 0.6) {
        for (let m = 1 + Math.floor(rnd() * 3); m > 0; m--)
          bytes[HEAD + Math.floor(rnd() * (bytes.length - HEAD))] = pick([
            0,
            1,
            2,
            0x2d,
            0x30,
            0x41,
            0x78,
            0x7f,
            0x80,
            0xff,
            Math.floor(rnd() * 256),
          ]);
      } else if (op < 0.8) bytes = bytes.subarray(0, HEAD + Math.floor(rnd() * (bytes.length - HEAD)));
      else bytes = Buffer.concat([bytes, Buffer.from([Math.floor(rnd() * 256)])]);
      if (agree(bytes, k)) taken++;
      else declined++;
    }
    // Both outcomes happen often enough for the comparison to mean something.
    expect(taken).toBeGreaterThan(500);
    expect(declined).toBeGreaterThan(1_000);
  });

  it('prepares a batch whose lines, dead letters and retractions match the general path', async () => {
    const recs = [
      transfer(),
      transfer({ logIndex: 8 }),
      transfer({ removed: true }),
      transfer({ vault: 'Bad' }),
    ];
    const values = [...recs.map(enc), Buffer.from('not avro')];
    const p = await prepareRows(codec, 'transfers', values, 500);
    expect(p.columns).toEqual([...TRANSFER_COLUMNS]);
    expect(p.dead.map((d) => d.index)).toEqual([3, 4]);
    expect(p.dead[0].reason).toMatch(/^invalid transfers record: vault/);
    expect([...p.source]).toEqual([0, 1, 2]);
    const expected = [0, 1, 2].map((i) => general(values[i], 500 + i)!.line.toString()).join('');
    expect(p.tsv.toString()).toBe(expected);
    expect(p.ranges).toEqual([{ vault: 'usdc-vault-1', chainId: 98866, from: 1_234_567, to: 1_234_567 }]);
    // Stored: the first event live. It is dropped; the retraction of event 0 (record 2) is kept.
    const id0 = general(values[0], 0)!.row.event_id as string;
    const e = encodeRows(p, new Map([[id0, true]]));
    expect(e.skipped).toBe(1);
    expect([...e.source]).toEqual([1, 2]);
    expect(Buffer.from(e.tsv).toString()).toBe(
      expected
        .split('\n')
        .slice(1, 3)
        .map((l) => `${l}\n`)
        .join(''),
    );
    expect([...e.lineEnds]).toEqual([expected.split('\n')[1].length + 1, e.tsv.length]);
  });
});

describe('transfers written with an older schema', () => {
  it('take the general path, and store the Avro default for the field v1 lacks', async () => {
    const old = codec.encodeSync('transfers', transfer(), 1);
    expect(codec.newestBodyStart('transfers', old)).toBe(-1);
    const p = await prepareRows(codec, 'transfers', [old, enc(transfer({ transactionIndex: 3 }))], 10);
    expect(p.dead).toEqual([]);
    const lines = p.tsv.toString().split('\n');
    const at = p.columns.indexOf('transaction_index');
    expect(at).toBeGreaterThan(0);
    expect(lines[0].split('\t')[at]).toBe('-1');
    expect(lines[1].split('\t')[at]).toBe('3');
    expect(`${lines[0]}\n`).toBe(general(old, 10)!.line.toString());
  });
});

describe('batch encoder threads', () => {
  it('give what the calling thread gives: lines, dead letters, ranges, and the stored events dropped', async () => {
    const { InlineEncoder, WorkerEncoder } = await import('../../streams/batch-encoder.ts');
    const values = [
      enc(transfer()),
      enc(transfer({ logIndex: 9, chainId: 101, blockHash: base58(44, 7), txHash: base58(88, 8) })),
      enc(transfer({ amount: '01' })),
      Buffer.from('garbage'),
      enc(transfer({ removed: true })),
    ];
    const inline = new InlineEncoder(codec);
    const threads = new WorkerEncoder({ topicPrefix: 't.' }, 2);
    try {
      const results = [];
      for (const e of [inline, threads]) {
        const p = await e.prepare('transfers', values, 1_000);
        const id0 = general(values[0], 0)!.row.event_id as string;
        const out = await e.encode(p.id, new Map([[id0, true]]));
        results.push({ dead: p.dead, ranges: p.ranges, ...out, tsv: Buffer.from(out.tsv).toString() });
      }
      expect(results[1]).toEqual(results[0]);
      expect(results[0].source).toEqual(Uint32Array.of(1, 4));
      expect(results[0].dead.map((d) => d.index)).toEqual([2, 3]);
      // A batch prepared but not encoded can be dropped; an unknown one is an error.
      const p = await threads.prepare('transfers', values, 2_000);
      threads.drop(p.id);
      await expect(threads.encode(p.id, new Map())).rejects.toThrow(/no prepared batch/);
      // Closed, then used again (a processor stopped and started): new threads take over.
      await threads.close();
      const again = await threads.prepare('transfers', values, 3_000);
      expect((await threads.encode(again.id, new Map())).source).toEqual(Uint32Array.of(0, 1, 4));
    } finally {
      await inline.close();
      await threads.close();
    }
  });
});
