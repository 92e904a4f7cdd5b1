/**
 * GET /v1/events on the live devnet (`vaultstream start` with its simulator, test/support/devnet-service.ts):
 * version events arrive as rows land, a client reconnecting with `Last-Event-ID` gets exactly the
 * events it missed, and the simulator's deposits come as activity events with the fields and
 * values GET /vaults/recent-transactions answers for the same row. The stream is read with the
 * tests' own SSE client (test/support/sse.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getJson, killServices, type Service, startService, stderrTail } from '../support/devnet-service.ts';
import { openSse, type SseClient, type SseEvent } from '../support/sse.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-e2e-events-'));
let svc: Service;
const clients: SseClient[] = [];
/** A client of every event from the start: what the others are compared with. */
let watch: SseClient;

async function stream(headers: Record<string, string> = {}, query = ''): Promise<SseClient> {
  const c = await openSse(`${svc.api}/v1/events${query}`, headers);
  clients.push(c);
  expect(c.status).toBe(200);
  return c;
}

const versions = (c: SseClient) => c.events.filter((e) => e.event === 'version');

beforeAll(async () => {
  svc = await startService(join(dir, 'data'), { backfillDays: '2', liveIntervalMs: '2000' });
  watch = await stream();
}, 300_000);

afterAll(() => {
  for (const c of clients) c.close();
  killServices();
  // A killed service's analysts process exits when it sees its parent gone: it may still write.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

describe('GET /v1/events on the devnet', () => {
  it('sends a version event as rows land, with the watermarks and the vaults changed', async () => {
    const e = await watch.next(
      (x) => x.event === 'version' && JSON.parse(x.data).changed?.vaults.length > 0,
      60_000,
    );
    const v = JSON.parse(e.data);
    expect(e.id).toBe(v.version);
    // Every chain of the devnet (its three EVM chains and Solana) with a stored block.
    const chains = (await getJson(svc, '/status')).chains.map((c: { chainId: number }) => String(c.chainId));
    expect(Object.keys(v.watermarks).sort()).toEqual([...chains].sort());
    for (const b of Object.values<number>(v.watermarks)) expect(b).toBeGreaterThan(0);
    const slugs = (await getJson(svc, '/v1/vaults')).data.map((x: { slug: string }) => x.slug);
    for (const s of v.changed.vaults) expect(slugs).toContain(s);
  }, 90_000);

  it('replays exactly the missed events to a client reconnecting with Last-Event-ID', async () => {
    const first = await stream();
    const seen = await first.next((x) => x.event === 'version', 60_000);
    first.close();
    const from = watch.events.findIndex((x) => x.id === seen.id && x.event === 'version');
    expect(from, 'the watcher saw the same version (findIndex: -1 when not)').not.toBe(-1);
    // Three versions pass while the client is away.
    await vi.waitFor(
      () =>
        expect(versions({ ...watch, events: watch.events.slice(from + 1) }).length).toBeGreaterThanOrEqual(3),
      { timeout: 60_000, interval: 200 },
    );
    const again = await stream({ 'Last-Event-ID': seen.id });
    const upTo = versions(watch).at(-1) as SseEvent;
    await again.next((x) => x.event === 'version' && x.id === upTo.id, 30_000);
    const missed = watch.events.slice(from + 1, watch.events.indexOf(upTo) + 1);
    const got = again.events.slice(
      0,
      again.events.findIndex((x) => x.id === upTo.id && x.event === 'version') + 1,
    );
    expect(got.map((x) => `${x.event}#${x.id}`)).toEqual(missed.map((x) => `${x.event}#${x.id}`));
    expect(got.map((x) => x.data)).toEqual(missed.map((x) => x.data));
    expect(again.events.some((x) => x.event === 'reset')).toBe(false);
  }, 120_000);

  it("sends the simulator's deposit as an activity event, as recent-transactions answers it", async () => {
    const e = await watch.next(
      (x) => x.event === 'activity' && JSON.parse(x.data).transactionType === 'DEPOSIT',
      90_000,
    );
    const row = JSON.parse(e.data);
    const key = (t: { chainId: number; transactionHash: string; logIndex: number }) =>
      `${t.chainId}:${t.transactionHash}:${t.logIndex}`;
    // The answer may be one data version behind the event: read until the row is there.
    const answered = await vi.waitFor(
      async () => {
        const data = (await getJson(svc, '/v1/vaults/recent-transactions?limit=100')).data;
        const found = data.flatMap((v: any) => v.recentTransactions).find((t: any) => key(t) === key(row));
        expect(found, `the row in recent-transactions; ${stderrTail(svc)}`).toBeDefined();
        return found;
      },
      { timeout: 30_000, interval: 300 },
    );
    expect(row).toEqual(answered);
    expect(Object.keys(row)).toEqual(Object.keys(answered));
    // Its version event comes after it, naming its vault.
    const vault = (await getJson(svc, '/v1/vaults')).data.find(
      (v: any) => v.vaultAddress.toLowerCase() === row.vaultAddress.toLowerCase(),
    );
    const version = await watch.next((x) => x.event === 'version' && e.id.startsWith(`${x.id}:`), 30_000);
    expect(JSON.parse(version.data).changed.vaults).toContain(vault.slug);
  }, 150_000);
});
