/**
 * The stream consumers: events from the bus into the raw tables, exactly once in
 * effect. Per batch: decode and validate every record (bad ones go to the dead-letter
 * topic with the reason, and the partition moves on), drop state changes already
 * stored (streams/dedup.ts), insert with a deduplication token built from the
 * topic/partition/offset range, and only then let the bus commit the offsets.
 */
import { EventEmitter } from 'node:events';
import { topicName } from '../bus/partition.ts';
import type { Batch, Bus, ConsumedMessage, Subscription } from '../bus/types.ts';
import type { Config } from '../core/config.ts';
import { errorMessage } from '../core/errors.ts';
import { failpoint } from '../core/failpoints.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import * as metrics from '../core/metrics.ts';
import type { EventCodec } from '../schemas/codec.ts';
import { DATA_FAMILIES, type FamilyName } from '../schemas/families.ts';
import type { DeadLetterRecord } from '../schemas/records.ts';
import type { Store } from '../store/client.ts';
import { type BatchEncoder, type Encoded, InlineEncoder, WorkerEncoder } from './batch-encoder.ts';
import { currentStates } from './dedup.ts';
import { InsertJournal } from './insert-journal.ts';
import { TABLES, VERSIONED } from './rows.ts';

export interface ProcessorDeps {
  bus: Bus;
  store: Store;
  codec: EventCodec;
  config: Config;
  log?: Logger;
  /** Milliseconds clock (tests drive it). */
  now?: () => number;
}

/**
 * ClickHouse error codes that mean "this data cannot be stored" (the batch is bisected and the
 * bad records go to the dead-letter topic), as opposed to "the store failed" (retried).
 */
const DATA_ERRORS = {
  CANNOT_PARSE_TEXT: 6,
  CANNOT_PARSE_QUOTED_STRING: 26,
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: 27,
  ATTEMPT_TO_READ_AFTER_EOF: 32,
  CANNOT_PARSE_DATE: 38,
  CANNOT_PARSE_DATETIME: 41,
  TYPE_MISMATCH: 53,
  ARGUMENT_OUT_OF_BOUND: 69,
  CANNOT_CONVERT_TYPE: 70,
  CANNOT_PARSE_NUMBER: 72,
  INCORRECT_DATA: 117,
  TOO_LARGE_STRING_SIZE: 131,
  SIZES_OF_ARRAYS_DONT_MATCH: 190,
  DECIMAL_OVERFLOW: 407,
} as const;
const DATA_ERROR_CODES: ReadonlySet<number> = new Set(Object.values(DATA_ERRORS));

function isDataError(err: unknown): boolean {
  const code = Number((err as { code?: unknown })?.code);
  return Number.isInteger(code) && DATA_ERROR_CODES.has(code);
}

/** Monotonic row versions: the newest state of an event has the largest `ver`. */
function versionSource(now: () => number) {
  // Microsecond-scaled wall clock, strictly increasing: fits a double exactly (< 2^53) until
  // the year 2255, so no BigInt per row.
  let next = 0;
  return (count: number) => {
    const first = Math.max(now() * 1000, next);
    next = first + count;
    return first;
  };
}

/** The topics the consumers read: every data family's and the dead letters'. */
export function consumedTopics(topicPrefix: string): string[] {
  return [...DATA_FAMILIES, 'dlq' as const].map((f) => topicName(topicPrefix, f));
}

/**
 * What the 'landed' event tells of each batch stored: its family, rows stored (after the state
 * lookup), the data version it made, and the partition keys of its records (the vault slug, chain
 * id or Solana signature: docs/architecture.md#events-and-partition-keys), each once; the keys are
 * gathered only while something listens.
 */
export interface Landed {
  family: FamilyName;
  rows: number;
  dataVersion: number;
  keys: string[];
}

export class StreamProcessor extends EventEmitter {
  private sub: Subscription | undefined;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly nextVer: (count: number) => number;
  private readonly byTopic = new Map<string, FamilyName>();
  private readonly encoder: BatchEncoder;
  private readonly journal: InsertJournal;
  /** Bumped whenever a batch lands; the API keys its cache on it. */
  dataVersion = 0;

  constructor(private readonly deps: ProcessorDeps) {
    super();
    this.log = deps.log ?? silentLogger;
    this.now = deps.now ?? Date.now;
    this.nextVer = versionSource(this.now);
    for (const f of [...DATA_FAMILIES, 'dlq' as const]) this.byTopic.set(this.topic(f), f);
    const { config } = deps;
    this.encoder =
      config.streams.workers > 0
        ? new WorkerEncoder(
            { schemaRegistryUrl: config.bus.schemaRegistryUrl, topicPrefix: config.topicPrefix },
            config.streams.workers,
          )
        : new InlineEncoder(deps.codec);
    this.journal = new InsertJournal(deps.store, {
      log: this.log,
      isDataError,
      sharedStore: deps.store.kind === 'server',
    });
  }

  topic(family: FamilyName): string {
    return topicName(this.deps.config.topicPrefix, family);
  }

  get topics(): string[] {
    return [...this.byTopic.keys()];
  }

  async start(): Promise<void> {
    const { streams } = this.deps.config;
    // An insert cut short by the previous run is completed before anything is looked up.
    const redone = await this.journal.recover();
    if (redone) this.log.info({ inserts: redone }, 'completed the inserts the previous run had cut short');
    this.sub = await this.deps.bus.subscribe({
      groupId: streams.groupId,
      topics: this.topics,
      maxBatchSize: streams.maxBatchSize,
      maxWaitMs: streams.maxWaitMs,
      handler: (b) => this.handle(b),
      onError: (err, b) =>
        this.log.error(
          { err: errorMessage(err), topic: b.topic, partition: b.partition },
          'storing batch failed',
        ),
    });
    this.log.info({ topics: this.topics.length, bus: this.deps.bus.kind }, 'stream consumers started');
  }

  /** Resolves when everything published before the call is stored. */
  async drained(): Promise<void> {
    await this.sub?.drained();
  }

  /** Finishes the batch in flight, commits it, and stops. */
  async stop(): Promise<void> {
    await this.sub?.stop();
    this.sub = undefined;
    await this.encoder.close();
  }

  private deadLetter(batch: Batch, m: ConsumedMessage, reason: string): DeadLetterRecord {
    return {
      topic: batch.topic,
      partition: batch.partition,
      offset: String(m.offset),
      key: m.key,
      reason,
      payload: m.value,
      at: this.now(),
    };
  }

  /**
   * Inserts the encoded lines `[from, to)`; when the store rejects the data itself (a value it
   * cannot parse or convert), bisects them to find the offending rows and returns those as dead
   * letters, so one poison record never blocks its partition. Any other failure (store down,
   * timeout) is thrown and the whole batch is retried.
   */
  private async insertIsolating(
    batch: Batch,
    table: string,
    enc: Encoded,
    from: number,
    to: number,
    token: string,
  ): Promise<DeadLetterRecord[]> {
    const start = from ? enc.lineEnds[from - 1] : 0;
    const tsv = Buffer.from(enc.tsv.buffer, enc.tsv.byteOffset + start, enc.lineEnds[to - 1] - start);
    failpoint('before-insert');
    failpoint(`before-insert-${table}`);
    try {
      await this.journal.insert(`${batch.topic}/${batch.partition}`, table, enc.columns, tsv, token);
      metrics.rowsInserted.inc({ table }, to - from);
      return [];
    } catch (err) {
      if (!isDataError(err)) throw err;
      if (to - from === 1)
        return [
          this.deadLetter(
            batch,
            batch.messages[enc.source[from]],
            `rejected by the store: ${errorMessage(err)}`,
          ),
        ];
      const half = (from + to) >> 1;
      return [
        ...(await this.insertIsolating(batch, table, enc, from, half, `${token}/a`)),
        ...(await this.insertIsolating(batch, table, enc, half, to, `${token}/b`)),
      ];
    }
  }

  /** Stores one batch; resolves only when it is durable (the bus then commits). */
  async handle(batch: Batch): Promise<void> {
    const family = this.byTopic.get(batch.topic);
    if (!family) throw new Error(`no family for topic ${batch.topic}`);
    const timer = metrics.batchSeconds.startTimer({ topic: family });
    const table = TABLES[family];
    const { messages } = batch;
    const firstVer = VERSIONED.has(family) ? this.nextVer(messages.length) : 0;
    const prepared = await this.encoder.prepare(
      family,
      messages.map((m) => m.value),
      firstVer,
    );
    const dead = prepared.dead.map((d) => this.deadLetter(batch, messages[d.index], d.reason));
    let stored: Map<string, boolean>;
    try {
      // What an insert cut short left is completed first: the lookup then reads whole inserts only.
      await this.journal.recover();
      stored = prepared.ranges.length
        ? await currentStates(this.deps.store, table, prepared.ranges)
        : new Map();
    } catch (err) {
      this.encoder.drop(prepared.id);
      throw err;
    }
    const enc = await this.encoder.encode(prepared.id, stored);
    const rows = enc.lineEnds.length;
    if (enc.skipped) {
      metrics.rowsSkipped.inc({ table }, enc.skipped);
      this.log.info(
        { table, skipped: enc.skipped },
        'dropped event states already stored (replayed or re-published)',
      );
    }
    if (rows) {
      const first = messages[0].offset;
      const last = messages[messages.length - 1].offset;
      dead.push(
        ...(await this.insertIsolating(
          batch,
          table,
          enc,
          0,
          rows,
          `${batch.topic}:${batch.partition}:${first}-${last}`,
        )),
      );
      failpoint('after-insert');
      failpoint(`after-insert-${table}`);
    }
    if (dead.length) {
      // Dead letters are published before the batch commits: a crash in between re-sends them,
      // and the dead_letters table keys them by topic/partition/offset.
      const msgs = await Promise.all(
        dead.map(async (d) => ({ key: d.topic, value: await this.deps.codec.encode('dlq', d) })),
      );
      if (family === 'dlq') this.log.error({ count: dead.length }, 'undecodable dead letters dropped');
      else await this.deps.bus.publish(this.topic('dlq'), msgs);
      metrics.deadLetters.inc({ topic: family }, dead.length);
      this.log.warn(
        { topic: batch.topic, partition: batch.partition, count: dead.length, reason: dead[0].reason },
        'records sent to the dead-letter topic',
      );
    }
    timer();
    this.dataVersion++;
    const keys = this.listenerCount('landed') ? [...new Set(messages.map((m) => m.key))] : [];
    this.emit('landed', { family, rows, dataVersion: this.dataVersion, keys } satisfies Landed);
  }
}
