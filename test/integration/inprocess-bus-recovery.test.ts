/**
 * The in-process bus tested like a log: torn tails, CRC failures in the middle and at the end,
 * fsync ordering and the committed offsets file, reopen, concurrent groups, I/O errors outside
 * the handler, and a writer process killed with SIGKILL mid-append. The recovery rules under test
 * are in the header of bus/inprocess.ts.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { InProcessBus } from '../../bus/inprocess.ts';
import { partitionFor } from '../../bus/partition.ts';
import type { Batch, BusMessage, SubscribeOptions } from '../../bus/types.ts';
import { VaultstreamError } from '../../core/errors.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-bus-log-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function freshDir(): string {
  return join(root, `d${n++}`);
}

async function open(dir: string, partitions = 4): Promise<InProcessBus> {
  const bus = new InProcessBus({ dir, partitions });
  await bus.connect();
  return bus;
}

/** Messages all on one partition (one key), values `prefix0`, `prefix1`, ... */
const oneKey = (count: number, prefix = 'v', key = 'k'): BusMessage[] =>
  Array.from({ length: count }, (_, i) => ({ key, value: Buffer.from(`${prefix}${i}-${'p'.repeat(40)}`) }));

interface Got {
  batches: Batch[];
  values: string[];
  offsets: bigint[];
  errors: { err: unknown; batch: Batch }[];
}

/** Subscribes, waits until drained, stops; what the handler and onError saw. */
async function consume(
  bus: InProcessBus,
  groupId: string,
  topics: string[],
  opts: Partial<SubscribeOptions> = {},
): Promise<Got> {
  const got: Got = { batches: [], values: [], offsets: [], errors: [] };
  const sub = await bus.subscribe({
    groupId,
    topics,
    maxBatchSize: 1000,
    maxWaitMs: 0,
    handler: async (b) => {
      got.batches.push(b);
      for (const m of b.messages) {
        got.values.push(m.value.toString());
        got.offsets.push(m.offset);
      }
    },
    onError: (err, batch) => got.errors.push({ err, batch }),
    ...opts,
  });
  await sub.drained();
  await sub.stop();
  return got;
}

/** Record start offsets of a log, walked by the length fields (for a log known to be intact). */
function recordStarts(path: string): number[] {
  const buf = readFileSync(path);
  const out: number[] = [];
  for (let pos = 0; pos < buf.length; pos += 8 + buf.readUInt32BE(pos)) out.push(pos);
  return out;
}

const damage = (g: Got) =>
  g.errors.map(({ err }) => {
    expect(err).toBeInstanceOf(VaultstreamError);
    const e = err as VaultstreamError;
    return { code: e.code, ...(e.details as { from: number; to?: number; kind: string }) };
  });

const strip = (v: string) => v.split('-')[0];

/**
 * A fresh bus log of `count` records under one key, damaged by `edit` (given the log's bytes and
 * each record's start) while the bus is closed; returns the reopened bus and the record starts.
 */
async function damagedLog(
  count: number,
  edit: (buf: Buffer, starts: number[]) => void,
): Promise<{ bus: InProcessBus; starts: number[]; size: number }> {
  const dir = freshDir();
  const first = await open(dir);
  await first.publish('t', oneKey(count));
  await first.close();
  const log = first.logPath('t', partitionFor('k', 4));
  const starts = recordStarts(log);
  const buf = readFileSync(log);
  edit(buf, starts);
  writeFileSync(log, buf);
  return { bus: await open(dir), starts, size: buf.length };
}

describe('in-process bus: torn tails', () => {
  for (const [name, cut] of [
    ['inside the value', (_start: number, size: number) => size - 5],
    ['inside the header', (start: number) => start + 3], // 3 header bytes of the last record are left
  ] as const) {
    it(`ignores a last record torn ${name}, keeps every whole record, and appends after it`, async () => {
      const dir = freshDir();
      let bus = await open(dir);
      await bus.publish('t', oneKey(10));
      await bus.close();
      const log = bus.logPath('t', partitionFor('k', 4));
      const starts = recordStarts(log);
      const size = statSync(log).size;
      const tornAt = starts[9];
      truncateSync(log, cut(tornAt, size));
      expect(statSync(log).size).toBeGreaterThan(tornAt);

      bus = await open(dir);
      const first = await consume(bus, 'g', ['t']);
      expect(first.values.map(strip)).toEqual(Array.from({ length: 9 }, (_, i) => `v${i}`));
      // A torn tail may be a write in progress in another process: no error until something follows it.
      expect(first.errors).toEqual([]);
      expect(JSON.parse(readFileSync(bus.groupFile('g'), 'utf8'))[`t/${partitionFor('k', 4)}`]).toBe(
        String(tornAt),
      );

      const tornEnd = statSync(log).size;
      await bus.publish('t', oneKey(3, 'w'));
      const second = await consume(bus, 'g', ['t']);
      expect(second.values.map(strip)).toEqual(['w0', 'w1', 'w2']);
      expect(second.offsets[0]).toBe(BigInt(tornEnd));
      expect(damage(second)).toEqual([
        expect.objectContaining({ code: 'DECODE_FAILED', from: tornAt, to: tornEnd }),
      ]);
      await bus.close();

      // A reopened log read by a new group: every whole record, once, in order.
      bus = await open(dir);
      const all = await consume(bus, 'fresh', ['t']);
      expect(all.values.map(strip)).toEqual([
        ...Array.from({ length: 9 }, (_, i) => `v${i}`),
        'w0',
        'w1',
        'w2',
      ]);
      expect(damage(all)).toHaveLength(1);
      await bus.close();
    });
  }
});

describe('in-process bus: corrupt records', () => {
  it('skips a record with a bad CRC in the middle, delivers every later record, and says so', async () => {
    const { bus, starts } = await damagedLog(10, (buf, at) => {
      buf[at[4] + 20] ^= 0xff; // a value byte of the fifth record
    });
    const got = await consume(bus, 'g', ['t']);
    expect(got.values.map(strip)).toEqual(['v0', 'v1', 'v2', 'v3', 'v5', 'v6', 'v7', 'v8', 'v9']);
    const [d] = damage(got);
    expect(damage(got)).toHaveLength(1);
    expect(d).toMatchObject({ code: 'DECODE_FAILED', from: starts[4], to: starts[5], kind: 'corrupt' });
    expect(String((got.errors[0].err as Error).message)).toContain('crc mismatch');
    expect(got.errors[0].batch.messages).toEqual([]);
    expect(await bus.lag('g', ['t'])).toEqual({ t: [0, 0, 0, 0] });
    await bus.close();
  });

  it('skips an impossible length field in the middle (a huge length does not allocate or crash)', async () => {
    const { bus, starts } = await damagedLog(6, (buf, at) => buf.writeUInt32BE(0xfffffff0, at[2]));
    const got = await consume(bus, 'g', ['t']);
    expect(got.values.map(strip)).toEqual(['v0', 'v1', 'v3', 'v4', 'v5']);
    expect(damage(got)).toEqual([
      expect.objectContaining({ from: starts[2], to: starts[3], kind: 'corrupt' }),
    ]);
    await bus.close();
  });

  it('stops at a bad CRC in the last record with an error, drains, and resumes after it once more records come', async () => {
    const { bus, starts, size } = await damagedLog(5, (buf) => {
      buf[buf.length - 1] ^= 0x01;
    });
    const got = await consume(bus, 'g', ['t']);
    expect(got.values.map(strip)).toEqual(['v0', 'v1', 'v2', 'v3']);
    const [d] = damage(got);
    expect(damage(got)).toHaveLength(1);
    expect(d).toMatchObject({ code: 'DECODE_FAILED', from: starts[4], kind: 'corrupt' });
    expect(d.to).toBeUndefined();

    await bus.publish('t', oneKey(2, 'w'));
    const more = await consume(bus, 'g', ['t']);
    expect(more.values.map(strip)).toEqual(['w0', 'w1']);
    expect(damage(more)).toEqual([expect.objectContaining({ from: starts[4], to: size })]);
    await bus.close();
  });
});

describe('in-process bus: fsync ordering and the committed offsets file', () => {
  it('replaces the offsets file atomically; it never points past the data or between records', async () => {
    const dir = freshDir();
    const bus = await open(dir, 2);
    const msgs = Array.from({ length: 3000 }, (_, i) => ({ key: `k${i % 7}`, value: Buffer.from(`v${i}`) }));
    await bus.publish('t', msgs);
    const file = bus.groupFile('g');
    const boundaries = [0, 1].map(
      (p) => new Set([...recordStarts(bus.logPath('t', p)), statSync(bus.logPath('t', p)).size]),
    );
    const seen: Record<string, string>[] = [];
    let reading = true;
    const watcher = (async () => {
      while (reading) {
        if (existsSync(file)) seen.push(JSON.parse(readFileSync(file, 'utf8'))); // throws on a torn file
        await new Promise((r) => setImmediate(r));
      }
    })();
    const got = await consume(bus, 'g', ['t'], { maxBatchSize: 50 });
    reading = false;
    await watcher;
    expect(got.values).toHaveLength(3000);
    expect(seen.length).toBeGreaterThan(5);
    const last: Record<string, bigint> = {};
    for (const snap of seen)
      for (const [k, v] of Object.entries(snap)) {
        const p = Number(k.split('/')[1]);
        expect(boundaries[p].has(Number(v))).toBe(true);
        expect(BigInt(v)).toBeGreaterThanOrEqual(last[k] ?? 0n);
        last[k] = BigInt(v);
      }
    expect(readdirSync(join(dir, '_groups')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await bus.close();
  });

  it('refuses to subscribe when a committed offset is past the end of its log, or the offsets file is garbage', async () => {
    const dir = freshDir();
    let bus = await open(dir);
    await bus.publish('t', oneKey(10));
    await consume(bus, 'g', ['t']);
    await bus.close();
    const log = bus.logPath('t', partitionFor('k', 4));
    truncateSync(log, 100);
    bus = await open(dir);
    const opts = { groupId: 'g', topics: ['t'], maxBatchSize: 10, maxWaitMs: 0, handler: async () => {} };
    await expect(bus.subscribe(opts)).rejects.toMatchObject({
      code: 'DECODE_FAILED',
      message: /past the end/,
    });
    writeFileSync(bus.groupFile('g'), '{"t/0": "12"'); // a torn write the rename protocol never leaves
    await expect(bus.subscribe(opts)).rejects.toMatchObject({
      code: 'DECODE_FAILED',
      message: /not valid JSON/,
    });
    writeFileSync(bus.groupFile('g'), '{"t/0": -3}');
    await expect(bus.subscribe(opts)).rejects.toMatchObject({ code: 'DECODE_FAILED' });
    await expect(bus.lag('g', ['t'])).rejects.toBeInstanceOf(VaultstreamError);
    await bus.close();
  });
});

describe('in-process bus: reopen', () => {
  it('keeps data and committed offsets across close and reopen', async () => {
    const dir = freshDir();
    let bus = await open(dir);
    const all = Array.from({ length: 400 }, (_, i) => ({ key: `k${i % 11}`, value: Buffer.from(`v${i}`) }));
    await bus.publish('t', all.slice(0, 250));
    const first = await consume(bus, 'g', ['t']);
    expect(first.values).toHaveLength(250);
    await bus.publish('t', all.slice(250));
    await bus.close();

    bus = await open(dir);
    const lag = await bus.lag('g', ['t']);
    expect(lag.t.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const second = await consume(bus, 'g', ['t']);
    expect(second.values.sort()).toEqual(
      all
        .slice(250)
        .map((m) => m.value.toString())
        .sort(),
    );
    expect(await bus.lag('g', ['t'])).toEqual({ t: [0, 0, 0, 0] });
    await bus.close();

    bus = await open(dir);
    expect((await consume(bus, 'g', ['t'])).values).toEqual([]);
    expect((await consume(bus, 'other', ['t'])).values.sort()).toEqual(
      all.map((m) => m.value.toString()).sort(),
    );
    await bus.close();
  });
});

describe('in-process bus: concurrent readers', () => {
  it('two groups read several topics and partitions independently, each record exactly once and in order', async () => {
    const dir = freshDir();
    const bus = await open(dir);
    const topics = ['a', 'b', 'c'];
    type Seen = Map<string, { offset: bigint; seq: number }[]>;
    const groups: Record<string, Seen> = { g1: new Map(), g2: new Map() };
    const subs = await Promise.all(
      Object.entries(groups).map(([groupId, seen], gi) =>
        bus.subscribe({
          groupId,
          topics,
          maxBatchSize: gi === 0 ? 17 : 500,
          maxWaitMs: gi === 0 ? 0 : 20,
          handler: async (b) => {
            for (const m of b.messages) {
              const k = `${b.topic}/${b.partition}/${m.key}`;
              expect(b.partition).toBe(partitionFor(m.key, 4));
              seen.set(k, [...(seen.get(k) ?? []), { offset: m.offset, seq: Number(m.value.toString()) }]);
            }
            if (gi === 1) await new Promise((r) => setTimeout(r, 2));
          },
        }),
      ),
    );
    const perTopic = 1200;
    for (let round = 0; round < 6; round++)
      for (const t of topics)
        await bus.publish(
          t,
          Array.from({ length: perTopic / 6 }, (_, i) => ({
            key: `${t}${i % 9}`,
            value: Buffer.from(String(round * (perTopic / 6) + i)),
          })),
        );
    await Promise.all(subs.map((s) => s.drained()));
    await Promise.all(subs.map((s) => s.stop()));
    for (const seen of Object.values(groups)) {
      let total = 0;
      for (const list of seen.values()) {
        total += list.length;
        for (let i = 1; i < list.length; i++) {
          expect(list[i].offset).toBeGreaterThan(list[i - 1].offset);
          expect(list[i].seq).toBeGreaterThan(list[i - 1].seq);
        }
      }
      expect(total).toBe(perTopic * topics.length);
      for (const t of topics) {
        const seqs = [...seen].filter(([k]) => k.startsWith(`${t}/`)).flatMap(([, l]) => l.map((x) => x.seq));
        expect(new Set(seqs).size).toBe(perTopic);
      }
    }
    await bus.close();
  });
});

describe('in-process bus: errors outside the handler', () => {
  it('refuses an oversized key before writing anything', async () => {
    const dir = freshDir();
    const bus = await open(dir);
    await expect(
      bus.publish('t', [{ key: 'k'.repeat(70_000), value: Buffer.from('x') }]),
    ).rejects.toMatchObject({
      code: 'BAD_INPUT',
    });
    expect(existsSync(join(dir, 't'))).toBe(false);
    await bus.close();
  });

  it('surfaces an unreadable or unwritable log as BUS_UNAVAILABLE with its cause, and keeps running', async () => {
    const dir = freshDir();
    const bus = await open(dir);
    await bus.publish('t', oneKey(3, 'v', 'k'));
    // Another partition's log path is a directory: opening succeeds, reading fails with EISDIR.
    const other = [0, 1, 2, 3].find((p) => p !== partitionFor('k', 4))!;
    mkdirSync(bus.logPath('t', other));
    const otherKey = Array.from({ length: 100 }, (_, i) => `x${i}`).find(
      (k) => partitionFor(k, 4) === other,
    )!;
    await expect(bus.publish('t', [{ key: otherKey, value: Buffer.from('y') }])).rejects.toMatchObject({
      code: 'BUS_UNAVAILABLE',
      cause: expect.objectContaining({ code: 'EISDIR' }),
    });
    const errors: unknown[] = [];
    const values: string[] = [];
    const sub = await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      maxBatchSize: 100,
      maxWaitMs: 0,
      handler: async (b) => {
        for (const m of b.messages) values.push(strip(m.value.toString()));
      },
      onError: (err) => errors.push(err),
    });
    await vi.waitFor(
      () => {
        expect(values.length, 'records handed over').toBeGreaterThanOrEqual(3);
        expect(errors.length, 'the error reported').toBeGreaterThan(0);
      },
      { timeout: 10_000 },
    );
    await sub.stop();
    expect(values).toEqual(['v0', 'v1', 'v2']);
    expect(errors[0]).toMatchObject({
      code: 'BUS_UNAVAILABLE',
      cause: expect.objectContaining({ code: 'EISDIR' }),
    });
    await bus.close();
  });
});

describe('in-process bus: a writer killed with SIGKILL mid-append', () => {
  it('keeps every acknowledged record, reads only whole records, and takes new appends', async () => {
    const dir = freshDir();
    const delivered = new Map<string, number>();
    const offsetsByPart = new Map<number, bigint[]>();
    const damages: unknown[] = [];
    for (let round = 0; round < 3; round++) {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(import.meta.dirname, '../support/inprocess-bus-appender.ts'),
          dir,
          `r${round}`,
          '40',
          String(2000 + round * 1500),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const roundAcks: number[] = [];
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const lines = out.split('\n');
        out = lines.pop()!;
        for (const l of lines) if (l.startsWith('ack ')) roundAcks.push(Number(l.slice(4)));
      });
      const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, sig) => r(sig)));
      const target = 20 + round * 17;
      await vi.waitFor(() => expect(roundAcks.length).toBeGreaterThanOrEqual(target), {
        timeout: 15_000,
        interval: 25,
      });
      // Kill at a slightly different point each round (the child keeps appending meanwhile).
      await new Promise((r) => setTimeout(r, round * 3));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      // The parent reopens and reads the log (a new process's view of the child's appends).
      const bus = await open(dir);
      const got = await consume(bus, 'g', ['t'], {
        handler: async (b) => {
          const list = offsetsByPart.get(b.partition) ?? [];
          for (const m of b.messages) {
            list.push(m.offset);
            const [seq, i, pad] = m.value.toString().split(':');
            delivered.set(`${m.key}|${seq}:${i}`, (delivered.get(`${m.key}|${seq}:${i}`) ?? 0) + 1);
            // Whole records only: the padding is intact.
            expect(pad === 'x'.repeat(pad.length) && [2000, 3500, 5000].includes(pad.length)).toBe(true);
          }
          offsetsByPart.set(b.partition, list);
        },
      });
      for (const e of got.errors) damages.push(e.err);
      // Every acknowledged publish of this round is there, whole.
      for (const a of roundAcks)
        for (let i = 0; i < 40; i++)
          expect(delivered.get(`k${i % 13}|r${round}.${a}:${i}`) ?? 0).toBeGreaterThan(0);
      await bus.close();
    }
    // No record was delivered twice to the group, and offsets only grow per partition.
    for (const c of delivered.values()) expect(c).toBe(1);
    for (const list of offsetsByPart.values())
      for (let i = 1; i < list.length; i++) expect(list[i]).toBeGreaterThan(list[i - 1]);
    for (const e of damages) expect(e).toMatchObject({ code: 'DECODE_FAILED' });

    // New appends after the last kill are delivered.
    const bus = await open(dir);
    await bus.publish('t', [{ key: 'k0', value: Buffer.from(`final.0:0:${'x'.repeat(2000)}`) }]);
    const last = await consume(bus, 'g', ['t']);
    expect(last.values.map((v) => v.split(':')[0])).toEqual(['final.0']);
    await bus.close();
  });
});
