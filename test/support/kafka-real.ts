/**
 * A real Apache Kafka broker for the real-broker suites (test/integration/kafka-real*.test.ts):
 * one KRaft node in combined mode (broker + controller), run by scripts/run-kafka.sh (the
 * operator's recipe, docs/operations.md) from the jars scripts/install-kafka.sh puts in its cache
 * (Kafka 3.9.1 from Maven Central, or $VAULTSTREAM_KAFKA_VERSION), on free loopback ports, its
 * config and data in a temp dir. The mock cluster (test/support/kafka-broker.ts) stays for the fast
 * unit suites; this one speaks Kafka's own CreateTopics, group coordinator and storage.
 *
 * The broker can be stopped (SIGTERM: a controlled shutdown, or SIGKILL) and started again on the
 * same ports and data, mid-stream. No broker outlives this process: it runs under the `sh` wrapper
 * devnet/anvil.ts uses too (killed when the wrapper's stdin, a pipe only this process writes,
 * reaches end of file, which the kernel delivers when this process dies).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll } from 'vitest';
import { KafkaBus, type KafkaBusOptions } from '../../bus/kafka.ts';
import { freePort } from '../../devnet/anvil.ts';
import { ROOT } from './cli.ts';

const INSTALL_SCRIPT = join(ROOT, 'scripts', 'install-kafka.sh');
/** The operator's broker (docs/operations.md): the suites run the same script, config and all. */
const RUN_SCRIPT = join(ROOT, 'scripts', 'run-kafka.sh');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

let installed: { home?: string; problem?: string } | undefined;

/**
 * Why the real broker cannot run here, or `undefined` when it can: java on PATH and the jars
 * installed (scripts/install-kafka.sh is run when they are not yet; it needs mvn then).
 */
export function realKafkaProblem(): string | undefined {
  return kafkaHome().problem;
}

/** The installed broker's version, e.g. `3.9.1` (from the install's stamp), or `undefined`. */
export function realKafkaVersion(): string | undefined {
  const { home } = kafkaHome();
  if (!home) return undefined;
  return /kafka_[\d.]+-(\S+)/.exec(readFileSync(join(home, 'lib', '.complete'), 'utf8'))?.[1];
}

function kafkaHome(): { home?: string; problem?: string } {
  if (!installed) {
    const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
    if (java.error || java.status !== 0) {
      installed = { problem: 'java not found on PATH (a JDK 17+ runs the Kafka broker)' };
    } else {
      const run = spawnSync('bash', [INSTALL_SCRIPT], { encoding: 'utf8', timeout: 300_000 });
      const home = run.stdout.trim().split('\n').pop();
      installed =
        run.status === 0 && home
          ? { home }
          : { problem: `scripts/install-kafka.sh failed (${run.status}): ${run.stderr.trim().slice(-500)}` };
    }
  }
  return installed;
}

export interface RealKafka {
  /** Bootstrap address, e.g. `['127.0.0.1:40111']` (the same across restarts). */
  readonly brokers: string[];
  /** The broker's config and data. */
  readonly dir: string;
  /** Stops the broker and keeps its data: SIGTERM (a controlled shutdown) or, with `hard`, SIGKILL. */
  stop(opts?: { hard?: boolean }): Promise<void>;
  /** Starts the stopped broker again on the same ports and data; resolves once it serves. */
  start(): Promise<void>;
  /** Creates topics through the broker's CreateTopics (kafkajs admin), as an operator would. */
  createTopics(topics: string[], partitions: number): Promise<void>;
  /** Stops the broker (SIGKILL) and deletes its data. */
  destroy(): Promise<void>;
  /** The tail of the broker's output, for failure messages. */
  output(): string;
}

/**
 * `sh -c WRAPPER java args...`: prints java's pid, runs it with stdin from /dev/null, kills it
 * when the wrapper's stdin (fd 3) reaches EOF, and exits with its status once it exits.
 */
const WRAPPER =
  'exec 3<&0; "$0" "$@" </dev/null & a=$!; echo "pid $a"; ' +
  '{ cat <&3 >/dev/null; kill -9 $a 2>/dev/null; } & w=$!; exec 3<&-; ' +
  'wait $a; s=$?; kill $w 2>/dev/null; exit $s';

/** Starts a single-node KRaft broker on free loopback ports with an empty data dir. */
export async function startRealKafka(): Promise<RealKafka> {
  const { home, problem } = kafkaHome();
  if (!home) throw new Error(`cannot run the Kafka broker: ${problem}`);
  const dir = mkdtempSync(join(tmpdir(), 'vs-kafka-real-'));
  let ports: [number, number] = [0, 0];

  let port = 0;
  let tail = '';
  const keep = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-8000);
  };
  let child: ChildProcess | undefined;
  let javaPid = 0;
  let exited: Promise<void> = Promise.resolve();

  const launch = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const args = ['--dir', dir, '--port', String(ports[0]), '--controller-port', String(ports[1])];
      const c = spawn('/bin/sh', ['-c', WRAPPER, 'bash', RUN_SCRIPT, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      child = c;
      exited = new Promise<void>((r) => c.once('exit', () => r()));
      c.stdin?.on('error', () => {});
      c.once('exit', () => c.stdin?.destroy());
      let out = '';
      const timer = setTimeout(
        () => fail(new Error(`Kafka did not start within ${START_TIMEOUT_MS} ms: ${tail.slice(-2000)}`)),
        START_TIMEOUT_MS,
      );
      const done = () => {
        clearTimeout(timer);
        c.off('exit', onExit);
      };
      const fail = (err: Error) => {
        done();
        killGroup(c, 'SIGKILL');
        reject(err);
      };
      const onExit = (code: number | null, signal: string | null) =>
        fail(new Error(`Kafka exited (code ${code}, signal ${signal}): ${tail.slice(-2000)}`));
      c.once('exit', onExit);
      c.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /pid (\d+)/.exec(out);
        if (m) javaPid = Number(m[1]);
      });
      let recent = '';
      const onStderr = (d: Buffer) => {
        recent = (recent + d.toString()).slice(-400);
        if (!recent.includes('kafka: serving on')) return;
        c.stderr?.off('data', onStderr);
        done();
        resolve();
      };
      c.stderr?.on('data', keep);
      c.stderr?.on('data', onStderr);
    });

  // Another process may take a probed port before the broker binds it: retry with new ones.
  let lastError: unknown;
  for (let attempt = 0; attempt < 4 && port === 0; attempt++) {
    ports = [await freePort(), await freePort()];
    rmSync(join(dir, 'data'), { recursive: true, force: true });
    try {
      await launch();
      port = ports[0];
    } catch (err) {
      lastError = err;
      await exited;
    }
  }
  if (port === 0) {
    rmSync(dir, { recursive: true, force: true });
    throw lastError;
  }

  const brokers = [`127.0.0.1:${port}`];
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const stop = async (opts: { hard?: boolean } = {}) => {
    if (!child || !running()) return;
    if (opts.hard) killGroup(child, 'SIGKILL');
    else if (javaPid) process.kill(javaPid, 'SIGTERM');
    else killGroup(child, 'SIGTERM');
    const late = setTimeout(() => child && killGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(late);
  };

  return {
    brokers,
    dir,
    stop,
    async start() {
      if (running()) return;
      await launch();
    },
    async createTopics(topics, partitions) {
      const admin = new kafkajs.Kafka({
        clientId: 'vaultstream-test-admin',
        brokers,
        logLevel: kafkajs.logLevel.NOTHING,
      }).admin();
      await admin.connect();
      try {
        await admin.createTopics({
          waitForLeaders: true,
          topics: topics.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
        });
      } finally {
        await admin.disconnect();
      }
    },
    async destroy() {
      await stop({ hard: true });
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => tail,
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

export interface RealKafkaFixture {
  /** The file's broker (started in beforeAll). */
  kafka(): RealKafka;
  /** A bus on the file's broker, closed after the file's tests. */
  newBus(opts?: Partial<Pick<KafkaBusOptions, 'maxRequestBytes' | 'partitions' | 'clientId'>>): KafkaBus;
}

/**
 * Registers beforeAll/afterAll hooks that start one broker for the test file and tear it down
 * with every bus made through the returned fixture (the counterpart of useMockKafka).
 */
export function useRealKafka(opts: { partitions: number; sessionTimeoutMs: number }): RealKafkaFixture {
  let kafka: RealKafka | undefined;
  const buses: KafkaBus[] = [];
  beforeAll(async () => {
    kafka = await startRealKafka();
  }, START_TIMEOUT_MS * 2);
  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
    await kafka?.destroy();
  }, 60_000);
  const started = () => {
    if (!kafka) throw new Error('the Kafka broker is not started (used outside a test?)');
    return kafka;
  };
  return {
    kafka: started,
    newBus(extra = {}) {
      const bus = new KafkaBus({
        brokers: started().brokers,
        clientId: 'vaultstream-test',
        partitions: opts.partitions,
        sessionTimeoutMs: opts.sessionTimeoutMs,
        ...extra,
      });
      buses.push(bus);
      return bus;
    },
  };
}
