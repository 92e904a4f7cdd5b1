/**
 * The change log of the event stream (api/events/changes.ts): what the consumers and the settle
 * told it, given back per data version, exactly up to that version; and the event log
 * (api/events/log.ts) a reconnecting client is replayed from, within its bounds.
 */
import { describe, expect, it } from 'vitest';
import { ChangeLog, followVersions } from '../../api/events/changes.ts';
import { EventLog, type NewEvent } from '../../api/events/log.ts';

describe('ChangeLog', () => {
  it('names what landed and settled up to each version, and nothing after it', () => {
    const log = new ChangeLog();
    log.landed({ family: 'transfers', rows: 3, dataVersion: 1, keys: ['a', 'b'] });
    log.landed({ family: 'activity', rows: 1, dataVersion: 2, keys: ['b'] });
    log.landed({ family: 'mint_steps', rows: 2, dataVersion: 3, keys: ['sig1', 'sig2'] });
    const v1 = log.version();
    // After the version was taken: it belongs to the next one.
    log.landed({ family: 'rates', rows: 1, dataVersion: 4, keys: ['c'] });
    log.settled(1, ['d']);
    const v2 = log.version();
    expect(log.take(v1)).toEqual({
      vaults: ['a', 'b'],
      activity: ['b'],
      tokenHolders: true,
      mintFlows: ['sig1', 'sig2'],
    });
    expect(log.take(v2)).toEqual({ vaults: ['c', 'd'], activity: [], tokenHolders: true, mintFlows: [] });
    expect(log.take(v2)).toEqual({ vaults: [], activity: [], tokenHolders: false, mintFlows: [] });
  });

  it('ignores batches that stored nothing and keys that are not vaults', () => {
    const log = new ChangeLog();
    log.landed({ family: 'activity', rows: 0, dataVersion: 1, keys: ['a'] });
    log.landed({ family: 'blocks', rows: 5, dataVersion: 2, keys: ['98866'] });
    log.landed({ family: 'snapshots', rows: 1, dataVersion: 3, keys: ['a'] });
    // The version moves with every batch, whatever it stored.
    expect(log.version()).toMatch(/^[0-9a-z]+\.3\.0$/);
    expect(log.take(log.version())).toEqual({
      vaults: ['a'],
      activity: [],
      tokenHolders: false,
      mintFlows: [],
    });
  });

  it('does not know the changes of a version of another run', () => {
    const log = new ChangeLog();
    log.landed({ family: 'transfers', rows: 1, dataVersion: 1, keys: ['a'] });
    expect(log.take('zzzzzz.1.0')).toBeNull();
  });

  it('tells each new version once, from the one given on', async () => {
    const log = new ChangeLog();
    const seen: { v: string; vaults: string[] | undefined }[] = [];
    const from = log.version();
    log.landed({ family: 'roles', rows: 1, dataVersion: 1, keys: ['r'] });
    const stop = followVersions(
      () => log.version(),
      log,
      (v, c) => seen.push({ v, vaults: c?.vaults }),
      { from, intervalMs: 5 },
    );
    await new Promise((r) => setTimeout(r, 60));
    stop();
    expect(seen).toEqual([{ v: log.version(), vaults: ['r'] }]);
  });
});

const version = (v: string, bytes: number, activity = 0): NewEvent[] => [
  ...Array.from({ length: activity }, (_, i) => ({
    id: `${v}:${i + 1}`,
    kind: 'activity' as const,
    vaults: ['a'],
    everyVault: false,
    frame: Buffer.alloc(10),
  })),
  { id: v, kind: 'version', vaults: [], everyVault: false, frame: Buffer.alloc(bytes) },
];

describe('EventLog', () => {
  it('finds the event after an id, and forgets the oldest versions past its bounds, whole', () => {
    const log = new EventLog({ versions: 3, bytes: 1_000_000 });
    for (const v of ['v1', 'v2', 'v3']) log.append(version(v, 100, 2));
    expect(log.after('v1')).toBe(3);
    expect(log.after('v2:1')).toBe(4);
    expect(log.at(4)?.id).toBe('v2:2');
    log.append(version('v4', 100, 1));
    // v1 and its activity are gone: an id of it is not kept.
    expect(log.after('v1')).toBeUndefined();
    expect(log.after('v1:2')).toBeUndefined();
    expect(log.first).toBe(3);
    expect(log.at(3)?.id).toBe('v2:1');
    expect(log.end).toBe(11);
  });

  it('keeps its bytes within the bound, but always the newest version', () => {
    const log = new EventLog({ versions: 1000, bytes: 1000 });
    for (let i = 0; i < 50; i++) log.append(version(`v${i}`, 100));
    expect(log.size).toBeLessThanOrEqual(1000);
    expect(log.after('v49')).toBe(50);
    expect(log.after('v39')).toBeUndefined();
    log.append(version('big', 5000));
    expect(log.size).toBe(5000);
    expect(log.at(log.first)?.id).toBe('big');
  });
});
