/**
 * A real Apache Kafka broker for the real-broker suites (test/integration/kafka-real*.test.ts):
 * one KRaft node in combined mode (broker + controller), run as `java kafka.Kafka` from the jars
 * scripts/install-kafka.sh puts in its cache (Kafka 3.9.1 from Maven Central, or
 * $VAULTSTREAM_KAFKA_VERSION), on free loopback
 * ports, its data in a temp dir. The mock cluster (test/support/kafka-broker.ts) stays for the fast
 * unit suites; this one speaks Kafka's own CreateTopics, group coordinator and storage.
 *
 * The broker can be stopped (SIGTERM: a controlled shutdown, or SIGKILL) and started again on the
 * same ports and data, mid-stream. No broker outlives this process: it runs under the `sh` wrapper
 * devnet/anvil.ts uses too (killed when the wrapper's stdin, a pipe only this process writes,
 * reaches end of file, which the kernel delivers when this process dies).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll } from 'vitest';
import { KafkaBus, type KafkaBusOptions } from '../../bus/kafka.ts';
import { freePort } from '../../devnet/anvil.ts';
import { ROOT } from './cli.ts';

const INSTALL_SCRIPT = join(ROOT, 'scripts', 'install-kafka.sh');
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

/** Kafka's cluster ids are 16 random bytes in URL-safe base64; one starting with '-' breaks CLIs. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function serverProperties(dataDir: string, port: number, controllerPort: number): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${dataDir}`,
    // A single node: the internal topics' default replication factor (3) would leave
    // __consumer_offsets uncreated and every group without a coordinator.
    'offsets.topic.replication.factor=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    // Fewer internal partitions than the default 50: a faster first group join, same semantics.
    'offsets.topic.num.partitions=8',
    // The first member of a new group joins at once instead of after 3 s.
    'group.initial.rebalance.delay.ms=0',
    // After a SIGKILL the restarted broker cannot register until the controller expires the dead
    // one's session: 4 s instead of 9 s (heartbeats every second instead of every 2 s).
    'broker.session.timeout.ms=4000',
    'broker.heartbeat.interval.ms=1000',
    '',
  ].join('\n');
}

const LOG4J = [
  'log4j.rootLogger=WARN, stderr',
  'log4j.appender.stderr=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stderr.Target=System.err',
  'log4j.appender.stderr.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n',
  // The readiness line: "[KafkaRaftServer nodeId=1] Kafka Server started".
  'log4j.logger.kafka.server.KafkaRaftServer=INFO',
  '',
].join('\n');

/** The same for Kafka 4.x, which logs through log4j 2. */
const LOG4J2 = [
  'appender.stderr.type=Console',
  'appender.stderr.name=STDERR',
  'appender.stderr.target=SYSTEM_ERR',
  'appender.stderr.layout.type=PatternLayout',
  'appender.stderr.layout.pattern=[%d] %p %m (%c)%n',
  'rootLogger.level=warn',
  'rootLogger.appenderRef.stderr.ref=STDERR',
  'logger.started.name=kafka.server.KafkaRaftServer',
  'logger.started.level=info',
  '',
].join('\n');

/** Starts a single-node KRaft broker on free loopback ports with an empty data dir. */
export async function startRealKafka(): Promise<RealKafka> {
  const { home, problem } = kafkaHome();
  if (!home) throw new Error(`cannot run the Kafka broker: ${problem}`);
  const classpath = join(home, 'lib', '*');
  const dir = mkdtempSync(join(tmpdir(), 'vs-kafka-real-'));
  const dataDir = join(dir, 'data');
  const config = join(dir, 'server.properties');
  const log4j = join(dir, 'log4j.properties');
  const log4j2 = join(dir, 'log4j2.properties');
  writeFileSync(log4j, LOG4J);
  writeFileSync(log4j2, LOG4J2);
  const jvm = [
    '-Xms128m',
    '-Xmx512m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Djava.awt.headless=true',
    `-Dlog4j.configuration=file:${log4j}`,
    `-Dlog4j2.configurationFile=${log4j2}`,
    '-cp',
    classpath,
  ];

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
      const c = spawn('/bin/sh', ['-c', WRAPPER, 'java', ...jvm, 'kafka.Kafka', config], {
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
        if (!recent.includes('Kafka Server started')) return;
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
    const [p, controllerPort] = [await freePort(), await freePort()];
    rmSync(dataDir, { recursive: true, force: true });
    writeFileSync(config, serverProperties(dataDir, p, controllerPort));
    const format = spawnSync(
      'java',
      [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', config],
      { encoding: 'utf8' },
    );
    if (format.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`kafka storage format failed: ${format.stderr || format.stdout}`);
    }
    try {
      await launch();
      port = p;
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
