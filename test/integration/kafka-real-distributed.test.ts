/**
 * The distributed layout of docs/operations.md on one machine, each role a process of its own on
 * a real Apache Kafka broker (scripts/run-kafka.sh): `vaultstream devnet`, `vaultstream ingest`
 * publishing to Kafka, and the consumers with the API on one embedded store
 * (`vaultstream start --roles streams,api`). The consumers' process is SIGKILLed over and over:
 * between an insert and its commit, in the middle of a settle of the metrics tables, and at
 * random moments while it catches up; the broker is SIGKILLed and restarted once among them.
 * Then:
 * - `/readyz` said not ready until the consumers had caught up and the metrics had settled, and
 *   the first answer at ready is the truth;
 * - every balance and holder count equals the devnet's ground truth, and every table and view of
 *   the store equals that of a consumer group that read the same topics once, never killed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KafkaBus } from '../../bus/kafka.ts';
import { consumedTopics } from '../../streams/processor.ts';
import { ROOT, runCli, spawnCli } from '../support/cli.ts';
import * as T from '../support/devnet-truth.ts';
import { type RealKafka, realKafkaProblem, realKafkaVersion, startRealKafka } from '../support/kafka-real.ts';
import { seededRandom } from '../support/rng.ts';

const problem = realKafkaProblem();
if (problem) console.warn(`WARNING: the distributed-layout suite is skipped: ${problem}`);
const suite = problem ? describe.skip : describe;
const name = problem
  ? `the distributed layout on a real Kafka broker skipped: ${problem}`
  : `the distributed layout on a real Kafka broker (Apache Kafka ${realKafkaVersion()}), its consumers SIGKILLed`;

const GROUP = 'vaultstream-streams';
const TOPICS = consumedTopics('vaultstream.');
type Json = any;

suite(name, () => {
  let dir = '';
  let kafka: RealKafka;
  let probe: KafkaBus;
  let configFile = '';
  let truthFile = '';
  let env: Record<string, string> = {};
  const children: ReturnType<typeof spawnCli>[] = [];
  const spawn = (args: string[], extra: Record<string, string>) => {
    const c = spawnCli(['-c', configFile, ...args], { ...env, ...extra });
    children.push(c);
    return c;
  };
  const dataDir = (role: string) => join(dir, role);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vs-distributed-'));
    kafka = await startRealKafka();
    probe = new KafkaBus({ brokers: kafka.brokers, clientId: 'vs-test-probe', partitions: 4 });
    // The devnet alone: its chains, contracts and a history with no live ticks (a fixed truth).
    const devnet = spawnCli(['devnet'], {
      VAULTSTREAM_DATA_DIR: join(dir, 'devnet'),
      VAULTSTREAM__devnet__vaults: '3',
      VAULTSTREAM__devnet__backfillDays: '12',
      VAULTSTREAM__devnet__liveIntervalMs: '0',
      VAULTSTREAM__devnet__reorgAtTick: '0',
    });
    children.push(devnet);
    const printed = await vi.waitFor(
      () => {
        const m = /^# ground truth: (\S+)$/m.exec(devnet.stdout());
        if (!m) throw new Error(`no devnet config yet: ${devnet.stderr().slice(-1500)}`);
        return { yaml: devnet.stdout().slice(0, m.index), truth: m[1] };
      },
      { timeout: 180_000, interval: 250 },
    );
    truthFile = printed.truth;
    // The devnet's printed YAML, for processes that must not start a devnet of their own.
    configFile = join(dir, 'distributed.yaml');
    writeFileSync(configFile, `${printed.yaml}devnet:\n  enabled: false\n`);
    env = {
      KAFKA_BROKERS: kafka.brokers.join(','),
      VAULTSTREAM__bus__sessionTimeoutMs: '6000',
      API_PORT: '0',
      VAULTSTREAM__sql__http__port: '0',
      // The devnet's history ends when it starts: its chains' last block grows old meanwhile.
      VAULTSTREAM__api__readiness__maxLagSeconds: '86400',
      LOG_LEVEL: 'info',
    };
  }, 300_000);
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    await probe?.close();
    await kafka?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function groupLag(group = GROUP): Promise<number> {
    const lag = await probe.lag(group, TOPICS);
    return Object.values(lag)
      .flat()
      .reduce((a, b) => a + b, 0);
  }

  type Consumers = ReturnType<typeof startConsumers>;
  /** The consumers' and API's process; its API address once it listens. */
  function startConsumers(extra: Record<string, string> = {}) {
    const c = spawn(['start', '--roles', 'streams,api'], {
      VAULTSTREAM_DATA_DIR: dataDir('consumers'),
      // Small batches: many inserts and commits to be killed between, over a backlog that lasts.
      VAULTSTREAM__streams__maxBatchSize: '5',
      ...extra,
    });
    let exited = false;
    c.done.then(() => {
      exited = true;
    });
    /** The API's address once it listens; undefined when the process died first (a failpoint). */
    const api = async (): Promise<string | undefined> =>
      vi.waitFor(
        () => {
          const m = /vaultstream API (\S+)\/v1/.exec(c.stdout());
          if (!m && !exited) throw new Error(`no API yet: ${c.stderr().slice(-1500)}`);
          return m?.[1];
        },
        { timeout: 60_000, interval: 100 },
      );
    return { ...c, api, exited: () => exited };
  }

  const readyz = async (api: string) => {
    const res = await fetch(`${api}/readyz`);
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('stores every event once and serves the truth after SIGKILLs of its consumers and of the broker', async () => {
    // Ready means caught up: migrated, but with nothing stored yet, not ready.
    const first = startConsumers();
    const before = await readyz((await first.api()) as string);
    expect(before.status, JSON.stringify(before.body)).toBe(503);
    expect(before.body.reasons.join('; ')).toMatch(/no stored watermark/);
    first.child.kill('SIGKILL');
    await first.done;

    const ingest = spawn(['ingest'], { VAULTSTREAM_DATA_DIR: dataDir('ingest') });
    await vi.waitFor(
      async () =>
        expect(await groupLag(), `ingest publishing; ${ingest.stderr().slice(-1500)}`).toBeGreaterThan(1000),
      { timeout: 120_000, interval: 500 },
    );

    const random = seededRandom(39);
    const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo));
    const kills: string[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /**
     * A random while after the group committed more of the backlog (at once when none is left, or
     * when `run` died first: each run carries a settle failpoint, and near the end of the backlog
     * its settle can come before the next commit).
     */
    const progressed = async (run: Consumers, maxMs: number) => {
      const start = await groupLag();
      if (start > 0)
        await vi.waitFor(async () => expect(run.exited() || (await groupLag()) < start).toBe(true), {
          timeout: 90_000,
          interval: 50,
        });
      await sleep(between(0, maxMs));
    };
    /** Runs the consumers until `kill` kills them, or until a failpoint of theirs does. */
    async function killedRun(
      what: string,
      extra: Record<string, string>,
      kill?: (run: Consumers) => Promise<void>,
    ) {
      // No run before the last completes a settle: one that gets that far dies in it, so the settle
      // runs below always find what the backlog changed still to settle.
      const own = extra.VAULTSTREAM_FAILPOINTS;
      const failpoints = own?.startsWith('after-settle-table')
        ? own
        : [own, `after-settle-table:${between(1, 7)}`].filter(Boolean).join(',');
      const run = startConsumers({ ...extra, VAULTSTREAM_FAILPOINTS: failpoints });
      if (kill) {
        await kill(run);
        run.child.kill('SIGKILL');
      }
      const r = await Promise.race([run.done, sleep(120_000).then(() => null)]);
      expect(
        r,
        // `done` waits for their output to close too, which a child of theirs left behind holds.
        `${what}: the consumers were not killed in time (their process: ${
          run.child.signalCode ?? run.child.exitCode ?? 'runs'
        }); ${run.stderr().slice(-2000)}`,
      ).not.toBeNull();
      expect(r?.signal, `${what}: ${run.stderr().slice(-2000)}`).toBe('SIGKILL');
      kills.push(what);
    }

    // At random moments while catching up: in inserts, lookups, encodes, commits. Meanwhile they
    // say they are not ready, and why.
    const catchingUp: { lag: number; status: number; reasons: string[] }[] = [];
    for (let i = 0; i < 4; i++)
      await killedRun(`random ${i}`, {}, async (run) => {
        const api = await run.api();
        if (!api) return;
        const lag = await groupLag();
        const r = await readyz(api).catch(() => undefined);
        if (r) catchingUp.push({ lag, status: r.status, reasons: r.body.reasons });
        await progressed(run, 600);
      });
    expect(catchingUp.filter((r) => r.lag > 0).length).toBeGreaterThan(0);
    for (const r of catchingUp.filter((c) => c.lag > 0)) {
      expect(r.status, JSON.stringify(r)).toBe(503);
      expect(r.reasons.join('; ')).toMatch(/consumers: .* behind|metrics: /);
    }
    // Between an insert and the commit of its batch.
    for (const n of [2, 3, 5])
      await killedRun(`after insert ${n}`, { VAULTSTREAM_FAILPOINTS: `after-insert:${n}` });
    // While an insert of transfers runs in the engine, its journal entry written or not: a random
    // few ms after it began (larger batches, longer inserts; the raw part and its views' parts are
    // committed one by one meanwhile).
    for (const n of [1, 1, 2, 1, 2, 3, 1, 2, 1, 2])
      await killedRun(`during insert ${n}`, {
        VAULTSTREAM__streams__maxBatchSize: '100',
        VAULTSTREAM_FAILPOINTS: `before-insert-transfers_raw:${n}@${between(5, 60)}`,
      });
    // The broker too, mid-stream, while a consumer works; that consumer is then killed as well.
    await killedRun('broker, then consumers', {}, async (run) => {
      await run.api();
      await progressed(run, 300);
      await kafka.stop({ hard: true });
      await sleep(1500);
      await kafka.start();
      await sleep(between(500, 2500));
    });
    // In the middle of a settle of the metrics tables (after its 1st, then its 4th table).
    for (const n of [1, 4])
      await killedRun(`mid-settle ${n}`, { VAULTSTREAM_FAILPOINTS: `after-settle-table:${n}` });
    // At random moments after that, idle.
    for (let i = 0; i < 2; i++)
      await killedRun(`late random ${i}`, {}, async (run) => {
        await run.api();
        await sleep(between(200, 4000));
      });
    expect(kills.length).toBeGreaterThanOrEqual(10);

    // Nothing more is published (the ingester, live, still polls): the topics are final.
    ingest.child.kill('SIGTERM');
    expect((await ingest.done).code, ingest.stderr().slice(-2000)).toBe(0);

    // The last run: at its first 200 of /readyz, the answer is the truth.
    const last = startConsumers();
    const api = (await last.api()) as string;
    await vi.waitFor(
      async () => {
        const r = await readyz(api);
        expect(r.status, `${JSON.stringify(r.body)}; ${last.stderr().slice(-1500)}`).toBe(200);
      },
      { timeout: 180_000, interval: 100 },
    );
    const truth = T.readTruth(truthFile);
    const holders = (await (await fetch(`${api}/v1/vaults/holders?status=all`)).json()) as Json;
    for (const v of T.truthVaults(truth)) {
      const e = holders.data.find((x: Json) => T.lc(x.vaultAddress) === v.share);
      expect(e?.totalHolders, `${v.slug} totalHolders at the first ready`).toBe(T.holderCount(truth, v));
      T.expectTopHolders(e.holders, T.chainBalances(truth, v), v.slug);
    }
    expect(await groupLag()).toBe(0);
    last.child.kill('SIGTERM');
    expect((await last.done).code).toBe(0);

    // A group of its own reads the same topics once, never killed: the reference.
    const ref = await runCli(
      ['-c', configFile, 'streams', '--until-drained'],
      { ...env, VAULTSTREAM_DATA_DIR: dataDir('reference'), VAULTSTREAM__streams__groupId: 'reference' },
      240_000,
    );
    expect(ref.code, ref.stderr.slice(-2000)).toBe(0);

    const dump = async (role: string) => {
      const out = join(dir, `${role}.json`);
      const r = await runCliNode([join(ROOT, 'test', 'support', 'store-dump-child.ts'), dataDir(role), out]);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      return JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown[]>;
    };
    const [killed, reference] = await Promise.all([dump('consumers'), dump('reference')]);
    expect(Object.keys(killed).length).toBeGreaterThan(40);
    expect(killed.balance_deltas.length).toBeGreaterThan(0);
    const differing = Object.keys(reference).filter((t) => !isDeepStrictEqual(killed[t], reference[t]));
    expect(differing, `tables and views that differ after ${kills.length} kills`).toEqual([]);

    // Every balance, Solana's too, and every holder count equal the truth.
    const balances = new Map(
      (killed.balances as Json[]).map((r) => [
        `${r.vault}|${r.chain_id}|${T.lc(r.holder)}`,
        BigInt(r.balance_raw),
      ]),
    );
    const want = new Map<string, bigint>();
    for (const v of T.truthVaults(truth))
      for (const b of T.chainBalances(truth, v)) want.set(`${v.slug}|${b.chainId}|${b.user}`, b.raw);
    expect(balances).toEqual(want);
  }, 900_000);
});

/** `node --import tsx <script> args` to its end. */
function runCliNode(args: string[]) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    import('node:child_process').then(({ spawn }) => {
      const c = spawn(process.execPath, ['--import', 'tsx', ...args], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      c.stderr.on('data', (d) => (stderr += d));
      c.on('close', (code) => resolve({ code, stderr }));
    });
  });
}
