/**
 * SnapshotVersions' eager rebuilds (store/snapshot-versions.ts): only while a snapshot has been
 * asked for. The builds here are the class's `build` option (what it builds is not its concern):
 * each one is counted and completes at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { type BuildingSnapshot, SnapshotVersions } from '../../store/snapshot-versions.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SnapshotVersions eager rebuilds', () => {
  let snaps: SnapshotVersions<BuildingSnapshot & { version: number }> | undefined;
  afterEach(() => snaps?.stop());

  function setup(opts: { buildMs?: number } = {}) {
    let version = 1;
    const built: number[] = [];
    const current: number[] = [];
    snaps = new SnapshotVersions({
      name: 'test',
      log: silentLogger,
      version: () => version,
      minGapMs: 0,
      pollMs: 5,
      build: async () => {
        built.push(version);
        return { version, done: sleep(opts.buildMs ?? 0).then(() => undefined), drop: async () => {} };
      },
      onCurrent: (s) => current.push(s.version),
    });
    return { snaps, built, current, setVersion: (v: number) => (version = v) };
  }

  it('build once at start, and not again for new data versions nobody has asked for', async () => {
    const { snaps, built, setVersion } = setup();
    snaps.start();
    await snaps.settled();
    for (let v = 2; v <= 5; v++) {
      setVersion(v);
      await sleep(20); // four polls per version
    }
    await snaps.settled();
    expect(built).toEqual([1]);
  });

  it('once asked for, follow each new data version in the background', async () => {
    const { snaps, built, setVersion } = setup();
    snaps.start();
    const lease = await snaps.acquire();
    expect(lease.version).toBe('1');
    await lease.release();
    setVersion(2);
    await sleep(30);
    await snaps.settled();
    expect(built).toEqual([1, 2]);
    const next = await snaps.acquire();
    expect([next.version, next.stale]).toEqual(['2', false]);
    await next.release();
  });

  it('refresh: builds the stored data though nobody asked and the version did not move, after the build in flight', async () => {
    const { snaps, built, current } = setup({ buildMs: 30 });
    snaps.start();
    // Asked while the build at start runs: that build began before, so one more follows it.
    snaps.refresh();
    await sleep(10);
    await snaps.settled();
    await sleep(10);
    await snaps.settled();
    expect(built).toEqual([1, 1]);
    expect(current).toEqual([1, 1]);
    // Asked with no build in flight: one build at once, and no other after it.
    snaps.refresh();
    await snaps.settled();
    await sleep(20);
    expect(built).toEqual([1, 1, 1]);
    expect(current).toEqual([1, 1, 1]);
  });
});
