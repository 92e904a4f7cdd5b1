/**
 * The in-process bus's retention (bus/inprocess-retention.ts, a devnet left running
 * must not fill the disk): the bytes every group committed past go back to the file system, the
 * log keeps its size and offsets, and nothing a group has not committed is freed. A group that
 * never committed starts at the log's start; one whose offsets file is older than the start is
 * refused.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { InProcessBus } from '../../bus/inprocess.ts';
import { readStart } from '../../bus/inprocess-retention.ts';
import { partitionFor } from '../../bus/partition.ts';
import type { Batch, BusMessage } from '../../bus/types.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-bus-retention-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const KEY = 'k';
const P = partitionFor(KEY, 4);
/** 6,000 records of ~1 KiB on one partition: about 6 MiB of log. */
const RECORDS = 6000;
const msgs = (from: number, n: number): BusMessage[] =>
  Array.from({ length: n }, (_, i) => ({
    key: KEY,
    value: Buffer.from(`${String(from + i).padStart(8, '0')}${'x'.repeat(1016)}`),
  }));
const allocated = (path: string) => statSync(path).blocks * 512;
const MiB = 1 << 20;

/** Consumes `topic` with `groupId` until `stopAfter` records were taken (or drained), then stops. */
async function consume(bus: InProcessBus, groupId: string, stopAfter = Number.POSITIVE_INFINITY) {
  const seen: string[] = [];
  const errors: unknown[] = [];
  let enough!: () => void;
  const reached = new Promise<void>((r) => (enough = r));
  const sub = await bus.subscribe({
    groupId,
    topics: ['t'],
    maxBatchSize: 100,
    maxWaitMs: 0,
    onError: (err, b: Batch) => {
      if (b.messages.length === 0) errors.push(err);
    },
    handler: async (b) => {
      // Past the stop point a batch fails, so it is never committed.
      if (seen.length >= stopAfter) {
        enough();
        throw new Error('stop here');
      }
      for (const m of b.messages) seen.push(m.value.subarray(0, 8).toString());
    },
  });
  await (stopAfter === Number.POSITIVE_INFINITY ? sub.drained() : reached);
  await sub.stop();
  return { seen, errors };
}

describe('in-process bus retention', () => {
  it('frees what every group committed, keeps offsets, never frees what a group has not committed', async () => {
    const dir = join(root, 'a');
    const bus = new InProcessBus({ dir, partitions: 4, retentionCheckMs: 50 });
    await bus.connect();
    for (let i = 0; i < RECORDS; i += 500) await bus.publish('t', msgs(i, 500));
    const log = bus.logPath('t', P);
    const size = statSync(log).size;
    const full = allocated(log);
    expect(full).toBeGreaterThan(5 * MiB);

    // "slow" commits only its first 3,000 records; "fast" (there from the start) takes everything.
    await consume(bus, 'fast', 0);
    const slow = await consume(bus, 'slow', 3000);
    expect(slow.seen).toHaveLength(3000);
    expect((await consume(bus, 'fast')).seen).toHaveLength(RECORDS);
    const slowAt = BigInt((await bus.readCommitted('slow'))[`t/${P}`]);
    expect(slowAt).toBeGreaterThan(2n * BigInt(MiB));

    // The timer frees the prefix both committed, while a subscription is open.
    const idle = await bus.subscribe({
      groupId: 'fast',
      topics: ['t'],
      maxBatchSize: 100,
      maxWaitMs: 0,
      handler: async () => {},
    });
    await vi.waitFor(() => expect(allocated(log)).toBeLessThanOrEqual(full - 2 * MiB), { timeout: 10_000 });
    // A round that ran while "fast" was still reading made its commit then the start (the slowest
    // commit at that moment); the rounds after it raise the start to "slow"'s commit.
    await vi.waitFor(async () => expect((await readStart(dir))[`t/${P}`]).toBe(String(slowAt)), {
      timeout: 10_000,
    });
    await idle.stop();
    expect(statSync(log).size).toBe(size);
    expect(size - allocated(log)).toBeLessThanOrEqual(Number(slowAt));

    // A new group starts at the log's start (the slowest commit), without reading the hole.
    const late = await consume(bus, 'late');
    expect(late.errors).toEqual([]);
    expect(late.seen).toEqual(
      Array.from({ length: RECORDS - 3000 }, (_, i) => String(3000 + i).padStart(8, '0')),
    );

    // The slow group resumes where it committed and gets every record after it, intact.
    const rest = await consume(bus, 'slow');
    expect(rest.errors).toEqual([]);
    expect(rest.seen).toEqual(late.seen);
    expect(await bus.lag('late', ['t'])).toEqual({ t: [0, 0, 0, 0] });
    await bus.close();
  });

  it('frees nothing a subscribed group has not committed, and nothing by itself with retention off', async () => {
    const bus = new InProcessBus({ dir: join(root, 'b'), partitions: 4, retentionCheckMs: 50 });
    await bus.connect();
    for (let i = 0; i < 3000; i += 500) await bus.publish('t', msgs(i, 500));
    // "stuck" fails its first batch: it has read nothing, and nothing may be freed for it.
    await consume(bus, 'stuck', 0);
    await consume(bus, 'fast');
    const log = bus.logPath('t', P);
    const before = allocated(log);
    expect(await bus.freeCommitted()).toBe(0);
    expect(allocated(log)).toBe(before);
    await bus.close();

    const off = new InProcessBus({ dir: join(root, 'c'), partitions: 4 });
    await off.connect();
    for (let i = 0; i < 3000; i += 500) await off.publish('t', msgs(i, 500));
    const published = allocated(off.logPath('t', P));
    await consume(off, 'fast');
    const sub = await off.subscribe({
      groupId: 'fast',
      topics: ['t'],
      maxBatchSize: 100,
      maxWaitMs: 0,
      handler: async () => {},
    });
    await new Promise((r) => setTimeout(r, 500));
    await sub.stop();
    expect(allocated(off.logPath('t', P))).toBe(published);
    // What the timer would have freed.
    expect(await off.freeCommitted()).toBeGreaterThan(0);
    await off.close();
  });

  it('refuses a group whose committed offset is before the log start', async () => {
    const dir = join(root, 'd');
    const bus = new InProcessBus({ dir, partitions: 4 });
    await bus.connect();
    for (let i = 0; i < 3000; i += 500) await bus.publish('t', msgs(i, 500));
    await consume(bus, 'a');
    const old = await bus.readCommitted('a');
    expect(await bus.freeCommitted()).toBeGreaterThan(0);
    // Restore the group's offsets from before: its records were freed.
    const { writeOffsetsFile } = await import('../../bus/inprocess-files.ts');
    await writeOffsetsFile(bus.groupFile('a'), { ...old, [`t/${P}`]: '0' });
    await expect(consume(bus, 'a')).rejects.toThrow(/before its log's start/);
    await bus.close();
  });
});
