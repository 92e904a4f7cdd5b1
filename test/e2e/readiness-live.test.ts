/**
 * `/readyz` never flaps in healthy running. `vaultstream start` with the
 * devnet and its live activity (a simulator tick every 3 s on every chain, the primary
 * chain's reorg included) is probed every 0.5 s for 2 minutes: every answer is 200, and
 * every chain's phase in `/status` stays `live`. Before, a block mined between two polls
 * put a chain back in `backfill` and `/readyz` answered 503 for about a second at a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getJson, killServices, startService, stderrTail } from '../support/devnet-service.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-e2e-readyz-'));
afterAll(() => {
  killServices();
  // A killed service's analysts process exits when it sees its parent gone: it may still write.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

const PROBE_MS = 120_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('/readyz through 2 minutes of live devnet activity', () => {
  it('answers 200 to every probe, and /status shows every chain live', { timeout: 400_000 }, async () => {
    // Default live settings (tick every 3 s, the reorg at tick 5); a short history to start fast.
    const svc = await startService(join(dir, 'data'), { backfillDays: '1', vaults: '2' });
    // Ready means the backfilled history is served as settled: every finished day answers at
    // ready what it answers once the settles ran on everything stored. Before, /readyz was 200
    // before the first settle after the backfill, and those days answered a TVL of 0 and no APY.
    const vaults: string[] = (await getJson(svc, '/v1/vaults')).data.map((v: any) => v.slug);
    // The same days both times, should a UTC midnight pass in between.
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    const finished = async () => {
      const out: Record<string, unknown> = {};
      for (const slug of vaults) {
        const perf = (await getJson(svc, `/v1/vaults/${slug}/performance-history`)).data.history;
        const holders = (await getJson(svc, `/v1/vaults/${slug}/holders-history`)).data.history;
        out[slug] = {
          perf: perf.filter((d: any) => d.day < today),
          holders: holders.filter((d: any) => d.day < today),
        };
      }
      return out;
    };
    const atReady = await finished();
    expect(
      Object.values(atReady).some((v: any) => v.perf.length > 0),
      'finished days',
    ).toBe(true);
    expect(
      Object.values(atReady).some((v: any) => v.holders.length > 0),
      'finished holder-count days',
    ).toBe(true);
    await sleep(8_000);
    expect(atReady).toEqual(await finished());
    const flaps: string[] = [];
    const phases: string[] = [];
    const firstHead = new Map<number, number>();
    const lastHead = new Map<number, number>();
    let probes = 0;
    const end = Date.now() + PROBE_MS;
    while (Date.now() < end) {
      const res = await fetch(`${svc.api}/readyz`);
      const body = await res.json();
      probes++;
      if (res.status !== 200)
        flaps.push(`${new Date().toISOString()} ${res.status} ${body.reasons.join('; ')}`);
      if (probes % 4 === 0) {
        const status = await getJson(svc, '/status');
        for (const c of status.ingest.evm) {
          if (c.phase !== 'live') phases.push(`${c.chainId} ${c.phase} (next ${c.next}, head ${c.head})`);
          if (!firstHead.has(c.chainId)) firstHead.set(c.chainId, c.head);
          lastHead.set(c.chainId, c.head);
        }
      }
      await sleep(500);
    }
    expect(flaps, stderrTail(svc)).toEqual([]);
    expect(phases).toEqual([]);
    expect(probes, 'a probe about every 0.5 s').toBeGreaterThanOrEqual(150);
    // The chains did move meanwhile (live activity, not a quiet devnet).
    expect(firstHead.size).toBe(3);
    for (const [id, first] of firstHead)
      expect(lastHead.get(id), `chain ${id} head`).toBeGreaterThan(first + 10);
  });
});
