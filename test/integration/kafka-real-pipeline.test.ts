/**
 * The distributed path on a real Apache Kafka broker (3.9.1, one KRaft node:
 * test/support/kafka-real.ts), nothing pre-created: `replay` publishes (creating the project's
 * topics), a `streams` consumer is SIGKILLed between an insert and its commit, a second one joins
 * the group while the dead member still holds its partitions (Kafka's coordinator rebalances once
 * its session expires), and the broker itself is SIGKILLed and restarted while that consumer is
 * mid-stream. Every view then matches the ground truth: nothing lost, nothing counted twice.
 * The same scenario on the mock cluster is test/integration/pipeline-kafka.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaBus } from '../../bus/kafka.ts';
import { parseConfig } from '../../core/config.ts';
import { DATA_FAMILIES } from '../../schemas/families.ts';
import { createStore } from '../../store/client.ts';
import { runCli, spawnCli } from '../support/cli.ts';
import { type RealKafka, realKafkaProblem, realKafkaVersion, startRealKafka } from '../support/kafka-real.ts';
import { buildScenario, registryLines } from '../support/scenario.ts';
import { expectMatchesTruth, viewSnapshot } from '../support/truth.ts';

const PARTITIONS = 4;
const GROUP = 'vaultstream-streams';
const TOPICS = [...DATA_FAMILIES, 'dlq'].map((f) => `vaultstream.${f}`);

const problem = realKafkaProblem();
if (problem) console.warn(`WARNING: the real Kafka pipeline suite is skipped: ${problem}`);
const suite = problem ? describe.skip : describe;
const name = problem
  ? `pipeline on a real Kafka broker skipped: ${problem}`
  : `pipeline on a real Kafka broker (Apache Kafka ${realKafkaVersion()} KRaft + chDB)`;

suite(name, () => {
  // Made in beforeAll: a skipped suite's body still runs, and would leave the directory behind.
  let dir = '';
  let dataDir = '';
  let file = '';
  const scenario = buildScenario({ seed: 24, transfers: 1500 });
  let kafka: RealKafka;
  let probe: KafkaBus;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vs-kafka-real-'));
    dataDir = join(dir, 'data');
    file = join(dir, 'events.ndjson');
    writeFileSync(
      file,
      `${[...registryLines(['nest-alpha', 'nest-treasuries'], [98866, 1]), ...scenario.lines].join('\n')}\n`,
    );
    kafka = await startRealKafka();
    probe = new KafkaBus({ brokers: kafka.brokers, clientId: 'vs-test-probe', partitions: PARTITIONS });
    env = {
      VAULTSTREAM_DATA_DIR: dataDir,
      KAFKA_BROKERS: kafka.brokers.join(','),
      VAULTSTREAM__bus__sessionTimeoutMs: '6000',
      VAULTSTREAM__streams__maxBatchSize: '60',
      VAULTSTREAM__sql__http__enabled: 'false', // no fixed port 8123 shared with parallel runs
    };
  }, 120_000);
  afterAll(async () => {
    await probe?.close();
    await kafka?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** Messages the group has not committed yet, over every topic. */
  async function groupLag(): Promise<number> {
    const lag = await probe.lag(GROUP, TOPICS);
    return Object.values(lag)
      .flat()
      .reduce((a, b) => a + b, 0);
  }

  it('creates every topic, survives a consumer SIGKILL, a rebalance and a broker SIGKILL + restart mid-stream, and stores every event once', async () => {
    const pub = await runCli(['replay', file], env);
    expect(pub.code, pub.stderr).toBe(1); // the scenario's bad lines
    expect(pub.stdout).toMatch(/rejected 3 lines/);

    // A consumer dies between an insert and its commit; the group still counts it as a member.
    const killed = await runCli(['streams', '--until-drained'], {
      ...env,
      VAULTSTREAM_FAILPOINTS: 'after-insert-transfers_raw:3',
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // Every topic of the project exists now, created by the project with its partition count.
    for (const topic of TOPICS) {
      expect((await probe.lag(GROUP, [topic]))[topic], topic).toHaveLength(PARTITIONS);
    }
    const before = await groupLag();
    expect(before).toBeGreaterThan(0);

    // A second consumer joins; it gets the partitions once the dead member's session expires.
    const resumed = spawnCli(['streams', '--until-drained'], { ...env, LOG_LEVEL: 'info' });
    // Mid-stream (some of the backlog committed, some not): the broker is killed and restarted.
    let lag = before;
    const deadline = Date.now() + 90_000;
    while (lag === before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      lag = await groupLag();
    }
    expect(lag).toBeGreaterThan(0);
    expect(lag).toBeLessThan(before);
    await kafka.stop({ hard: true });
    await new Promise((r) => setTimeout(r, 2_000));
    await kafka.start();

    const result = await resumed.done;
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    expect(await groupLag()).toBe(0);
    const skips = [...result.stderr.matchAll(/"table":"transfers_raw","skipped":(\d+)/g)].map((m) =>
      Number(m[1]),
    );
    expect(Math.max(0, ...skips)).toBeGreaterThan(0); // the killed consumer's stored batch, not stored again

    const store = await createStore(parseConfig({ dataDir }));
    try {
      const views = await viewSnapshot(store);
      expectMatchesTruth(views as never, scenario.truth);
      expect((views.deadLetters as unknown[]).length).toBe(4); // 3 bad lines + 1 record the store rejects
    } finally {
      await store.close();
    }
  }, 240_000);
});
