/**
 * GET /v1/events over real data (the vault scenario replayed into chDB, test/support/api-harness.ts),
 * fed as the service feeds it: a change log (api/events/changes.ts) told of batches and settles,
 * each data version it makes handed to the app. The events are read with an SSE client that
 * parses the stream by the specification (test/support/sse.ts); the watermarks they carry are the
 * store's own (`chain_watermarks`, read here by SQL).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeLog, type Changes } from '../../api/events/changes.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { openSse, type SseClient } from '../support/sse.ts';
import { NOW, vaultScenarioLines } from '../support/vault-scenario.ts';

let api: ApiHarness;
let emit: (version: string, changes: Changes | null) => void = () => {};
const log = new ChangeLog();
const open: SseClient[] = [];

const MAX_CLIENTS = 24;
const BUFFER_BYTES = 65_536;

beforeAll(async () => {
  api = await startApiHarness(vaultScenarioLines(), {
    clock: () => NOW * 1000,
    config: {
      api: {
        events: {
          maxClients: MAX_CLIENTS,
          heartbeatSeconds: 1,
          retryMs: 1500,
          clientBufferBytes: BUFFER_BYTES,
        },
      },
    },
    dataVersion: () => () => log.version(),
    versions: (listener) => {
      emit = listener;
      return () => {
        emit = () => {};
      };
    },
  });
}, 240_000);
beforeAll(async () => {
  watcher = await stream();
});
afterAll(async () => {
  for (const c of open) c.close();
  await api?.close();
});

/**
 * A new data version in which `family` landed for `keys`, told to the app; its version, once it is
 * published (a version told while another is read waits, and several waiting are sent as one, as
 * the service does: each step here is a version of its own).
 */
async function land(family: Parameters<ChangeLog['landed']>[0]['family'], keys: string[]): Promise<string> {
  landed += 1;
  log.landed({ family, rows: keys.length, dataVersion: landed, keys });
  const v = log.version();
  emit(v, log.take(v));
  await (watcher as SseClient).next(isVersion(v));
  return v;
}
let landed = 0;
/** A client of every event, by which `land` sees its version published. */
let watcher: SseClient | undefined;

async function stream(query = '', headers: Record<string, string> = {}): Promise<SseClient> {
  const c = await openSse(`${api.url}/v1/events${query}`, headers);
  open.push(c);
  return c;
}

const isVersion = (v: string) => (e: { event: string; id: string }) => e.event === 'version' && e.id === v;

/** chain id -> newest stored block, as the store holds them. */
async function storedBlocks(): Promise<Record<string, number>> {
  const rows = await api.store.query<{ c: number; b: string }>(
    `SELECT chain_id AS c, toString(block_number) AS b FROM ${api.store.database}.chain_watermarks`,
  );
  return Object.fromEntries(rows.map((r) => [String(r.c), Number(r.b)]));
}

describe('GET /v1/events', () => {
  it('sends a version event per data version, with the stored watermarks and what changed', async () => {
    const c = await stream();
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(c.headers['cache-control']).toBe('no-store');
    const v = await land('rates', ['alpha']);
    const e = await c.next(isVersion(v));
    expect(JSON.parse(e.data)).toEqual({
      version: v,
      watermarks: await storedBlocks(),
      changed: { vaults: ['alpha'], tokenHolders: true, mintFlows: [] },
    });
    const sig = '5'.repeat(87);
    const m = await land('mint_steps', [sig]);
    expect(JSON.parse((await c.next(isVersion(m))).data).changed).toEqual({
      vaults: [],
      tokenHolders: false,
      mintFlows: [sig],
    });
    expect(c.retry).toBe(1500);
  });

  it('filters by vault and by type; a version whose changes are unknown reaches every vault filter', async () => {
    const beta = await stream('?vault=beta');
    const both = await stream('?vault=alpha&vault=beta&types=versions');
    const activityOnly = await stream('?types=activity');
    const a = await land('transfers', ['alpha']);
    const b = await land('roles', ['beta']);
    await both.next(isVersion(b));
    expect(both.events.filter((e) => e.event === 'version').map((e) => e.id)).toEqual([a, b]);
    await beta.next(isVersion(b));
    expect(beta.events.map((e) => e.id)).toEqual([b]);
    // Not known (the API-only role reads no change log): every vault may have changed.
    emit('unknown-1', null);
    const u = JSON.parse((await beta.next(isVersion('unknown-1'))).data);
    expect(u.changed).toBeNull();
    expect(activityOnly.events).toEqual([]);
  });

  it('replays exactly the versions after Last-Event-ID, then goes on live; an unknown id gets reset', async () => {
    const first = await land('fees', ['alpha']);
    const missed: string[] = [];
    for (const [f, k] of [
      ['fees', 'alpha'],
      ['rates', 'beta'],
      ['activity', 'gamma'],
    ] as const)
      missed.push(await land(f, [k]));
    const again = await stream('', { 'Last-Event-ID': first });
    await again.next(isVersion(missed[2]));
    expect(again.events.map((e) => e.id)).toEqual(missed);
    const live = await land('snapshots', ['beta']);
    await again.next(isVersion(live));
    expect(again.events.map((e) => e.id)).toEqual([...missed, live]);
    // The query parameter, for a client that cannot set the header.
    const byQuery = await stream(`?lastEventId=${encodeURIComponent(missed[1])}`);
    await byQuery.next(isVersion(live));
    expect(byQuery.events.map((e) => e.id)).toEqual([missed[2], live]);

    const stranger = await stream('', { 'Last-Event-ID': 'zzz.1.1' });
    const reset = await stranger.next((e) => e.event === 'reset');
    expect(JSON.parse(reset.data)).toMatchObject({
      version: live,
      reason: expect.stringContaining('zzz.1.1'),
    });
    const after = await land('rates', ['alpha']);
    await stranger.next(isVersion(after));
    expect(stranger.events.map((e) => e.event)).toEqual(['reset', 'version']);
  });

  it('sends a heartbeat comment while nothing changes', async () => {
    const c = await stream();
    await expect
      .poll(() => c.comments.filter((x) => x === 'heartbeat').length, { timeout: 10_000, interval: 100 })
      .toBeGreaterThan(0);
  });

  it('drops the clients that do not read, and the one that reads gets every version', async () => {
    const metric = async (name: string) =>
      Number(
        ((await (await fetch(`${api.url}/metrics`)).text()).match(new RegExp(`^${name} (\\d+)`, 'm')) ??
          [])[1] ?? 0,
      );
    const droppedBefore = await metric('vaultstream_events_dropped_total');
    const reader = await stream();
    // Ten clients that send the request and never read a byte of the answer.
    const port = Number(new URL(api.url).port);
    const silent: Socket[] = await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise<Socket>((ok, fail) => {
            const s = connect(port, '127.0.0.1', () => {
              s.write('GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
              ok(s);
            });
            s.pause();
            s.on('error', () => {});
            s.once('error', fail);
          }),
      ),
    );
    try {
      await expect
        .poll(() => metric('vaultstream_events_clients'), { timeout: 10_000 })
        .toBeGreaterThanOrEqual(12);
      // Versions that each change many vaults (about 130 KB an event), until the sockets'
      // buffers are full and the silent clients' unread events pass api.events.clientBufferBytes.
      const many = Array.from({ length: 2000 }, (_, i) => `vault-${String(i).padStart(54, '0')}`);
      const sent: string[] = [];
      for (let i = 0; i < 200 && (await metric('vaultstream_events_dropped_total')) - droppedBefore < 10; i++)
        sent.push(await land('transfers', many));
      expect((await metric('vaultstream_events_dropped_total')) - droppedBefore).toBe(10);
      // The reader was held by none of them: it has every version, and is still served.
      await reader.next(isVersion(sent[sent.length - 1]));
      expect(reader.events.filter((e) => e.event === 'version').map((e) => e.id)).toEqual(sent);
      expect(reader.ended).toBe(false);
      const after = await land('rates', ['alpha']);
      await reader.next(isVersion(after));
    } finally {
      for (const s of silent) s.destroy();
    }
  });

  it('refuses bad parameters and streams past api.events.maxClients, with the error contract', async () => {
    const bad = await fetch(`${api.url}/v1/events?types=versions,nope`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'BAD_PARAMETER', details: [{ path: 'types.1' }] });
    while (open.filter((c) => !c.ended).length < MAX_CLIENTS) await stream();
    const over = await fetch(`${api.url}/v1/events`);
    expect(over.status).toBe(503);
    expect(over.headers.get('retry-after')).toBe('5');
    expect(await over.json()).toMatchObject({ code: 'TOO_MANY_STREAMS' });
    // A stream closed frees its place.
    const c = open.find((x) => !x.ended) as SseClient;
    c.close();
    await expect
      .poll(async () => (await fetch(`${api.url}/metrics`)).text(), { timeout: 5000 })
      .toMatch(new RegExp(`vaultstream_events_clients ${MAX_CLIENTS - 1}\\b`));
    const one = await stream();
    expect(one.status).toBe(200);
  });
});
