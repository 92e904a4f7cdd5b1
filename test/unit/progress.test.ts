/**
 * The backfill progress lines (cli/progress.ts) off a terminal: the first line's events/s is the
 * rate since the display began following the chain, not 0 until a second line.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ChainProgressLike, startProgress } from '../../cli/progress.ts';
import type { Logger } from '../../core/log.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('progress log lines', () => {
  it('gives the first line the events per second since the display began following', () => {
    vi.useFakeTimers();
    let now = 1_000_000;
    const lines: { fields: Record<string, unknown>; msg: string }[] = [];
    const log = { info: (fields: Record<string, unknown>, msg: string) => lines.push({ fields, msg }) };
    const chain: ChainProgressLike = {
      chainId: 1,
      name: 'main',
      phase: 'backfill',
      blocksDone: 0,
      blocksTotal: 2_000,
      blocksPerSecond: 0,
      eventsPublished: 0,
      etaSeconds: null,
    };
    const display = startProgress({
      log: log as unknown as Logger,
      intervalMs: 10_000,
      tty: false,
      clock: () => now,
    });
    display.follow(() => [chain]);
    // 40,000 events in the first 10 s.
    now += 10_000;
    chain.blocksDone = 400;
    chain.blocksPerSecond = 40;
    chain.eventsPublished = 40_000;
    vi.advanceTimersByTime(10_000);
    expect(lines).toHaveLength(1);
    expect(lines[0].fields.eventsPerSecond).toBe(4_000);
    expect(lines[0].msg).toBe('backfill main: 400/2000 blocks, 40 blocks/s, 4000 events/s, ETA ?');
    display.stop();
  });
});
