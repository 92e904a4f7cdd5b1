/**
 * The consumer side of the Kafka bus: one kafkajs consumer per subscription, accumulating each
 * partition's messages across fetches into batches (by size and time), offsets committed
 * explicitly after the handler resolves (see KafkaSubscription for why that is crash-safe).
 */
import type { Admin, Consumer, EachBatchPayload } from 'kafkajs';
import type { Logger } from '../core/log.ts';
import { backoffDelay } from '../core/retry.ts';
import { protocolCause, runAgainAfterCrash } from './kafka-crash.ts';
import { waitUntilDrained } from './kafka-drain.ts';
import { newPartitionBuffer, type PartitionBuffer, toConsumed } from './kafka-partition-buffer.ts';
import type { Batch, ConsumedMessage, SubscribeOptions, Subscription } from './types.ts';

/** Pause before a failed batch is delivered again: doubling from 500 ms up to 30 s, jittered (core/retry.ts). */
const RETRY_PAUSE = { baseMs: 500, maxMs: 30_000, jitter: 0.2 };
/** An idle partition's partial batch is fetched again this long after its window ends (a fetch in flight usually gets there first). */
const IDLE_FLUSH_GRACE_MS = 25;
/** The longest broker long-poll of a fetch (the consumer's maxWaitTimeInMs is capped to it). */
export const MAX_FETCH_WAIT_MS = 100;
/** stop() gives up handing over buffered messages after this long without progress. */
const STOP_FLUSH_IDLE_MS = 3_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One kafkajs consumer running `eachBatch` for a subscription, accumulating each partition's
 * messages across fetches into batches of up to `maxBatchSize` (handed over when full, or
 * `maxWaitMs` after the window opened).
 *
 * Commit safety (kafkajs 2.2.4, node_modules/kafkajs/src/consumer/):
 * - Buffered messages are marked with `resolveOffset` so kafkajs fetches beyond them. Resolved
 *   offsets only move the fetch position (consumerGroup.js `fetch` -> offsetManager `nextOffset`);
 *   they are committed only by an argument-less `commitOffsets()` (offsetManager `uncommittedOffsets`),
 *   which kafkajs calls only through runner.js `autoCommitOffsets`/`autoCommitOffsetsIfNecessary`
 *   (end of a batch, eachBatch errors, heartbeat on rebalance) — all no-ops with `autoCommit: false` —
 *   and through the payload's `commitOffsetsIfNecessary()`, which is never called here. With
 *   autoCommit off, `seek` only moves the fetch position too (offsetManager `seek`). The only commit
 *   is `commitOffsets([{ nextOffset }])` after the handler resolved; a `leave`/`disconnect` commits nothing.
 *   (kafkajs itself commits only on OffsetOutOfRange, consumerGroup.js `recoverFromOffsetOutOfRange`
 *   -> offsetManager `setDefaultOffset`: the earliest offset, as `fromBeginning` is set, when the
 *   records at the fetch position were already deleted by retention; no retained record is skipped.)
 * - The handler and that commit run only inside a kafkajs eachBatch call for the partition. kafkajs
 *   rejoins the group (runner.js `scheduleFetchManager` -> `joinAndSync`) only after the fetch
 *   manager stopped, and fetchManager.js `stop` waits for every fetcher's `workerQueue.push`, i.e.
 *   for every eachBatch in flight; so no rejoin happens between a batch's handling and its commit,
 *   a partition is handled by one eachBatch at a time, and a handler that outlasts the session
 *   timeout stops the heartbeats (the member is evicted and its late commit rejected), as before.
 * - A rejoin replaces the offset manager (consumerGroup.js `[SYNC]`): every assigned partition is
 *   fetched again from its committed offset. The `GROUP_JOIN` event (emitted synchronously right
 *   after) drops every buffer, so messages buffered in an earlier generation, of revoked partitions
 *   or kept ones, are never handed over; they come back from the committed offset to their owner.
 * - A partition left idle with a partial batch is not handed to eachBatch again (runner.js
 *   `handleBatch` skips empty fetches), so at the window's end a timer seeks it back to its first
 *   buffered offset: the next fetch returns those messages again (skipped as duplicates) and the
 *   window is handed over from that eachBatch call. Every seek target (that one, or a failed batch's
 *   first offset) is an offset everything before which is handled, so a seek applied late, even in
 *   a later generation, can only cause redelivery, never a skip.
 * - Two partitions are handled at once (one's insert overlaps the other's decoding), so a crash can
 *   come after one partition's handler resolved and before its commit reached the broker (abort()
 *   skips a commit not yet sent): that batch is redelivered too, like the one whose handler was
 *   running. What the group committed is always a prefix of what was handled, never more.
 * - `stop()` first hands over what is buffered, the same way (refetch, then handle and commit from
 *   eachBatch, before kafkajs is stopped: runner.js `commitOffsets` skips commits once it stops).
 *   Whatever it cannot hand over is dropped uncommitted and redelivered to the group's next consumer.
 */
export class KafkaSubscription implements Subscription {
  private stopping = false;
  /** stop() is handing over what is buffered: every buffer is due, nothing new is taken. */
  private flushing = false;
  /** Handler calls running. */
  private handling = 0;
  private aborted = false;
  /** A crashed consumer is being run again (restartAfterCrash). */
  private restarting = false;
  private stopPromise?: Promise<void>;
  private readonly inFlight = new Set<Promise<void>>();
  /** When the last eachBatch call returned with no other one running (kafkajs then fetches again). */
  private roundEndedAt = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private readonly buffers = new Map<string, PartitionBuffer>();
  /** Bumped on every group join; a batch handled across a join is not committed. */
  private generation = 0;
  private signalAbort!: () => void;
  private readonly abortSignal = new Promise<void>((resolve) => {
    this.signalAbort = resolve;
  });

  constructor(
    private readonly consumer: Consumer,
    private readonly admin: Admin,
    private readonly opts: SubscribeOptions,
    private readonly logger: Logger,
    private readonly onStopped: (sub: KafkaSubscription) => void = () => {},
  ) {}

  /** Connects, joins the group (the first join takes ~3 s on a fresh group) and starts consuming. */
  async start(): Promise<void> {
    // Listeners run synchronously inside joinAndSync, before any fetch of the new generation.
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => this.dropBuffers());
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) this.restartAfterCrash(payload.error);
    });
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: this.opts.topics, fromBeginning: true });
    await this.run();
  }

  /** Runs the consumer again after a crash kafkajs does not restart from (bus/kafka-crash.ts). */
  private restartAfterCrash(error: unknown): void {
    if (this.stopping || this.restarting) return;
    this.restarting = true;
    void runAgainAfterCrash(error, {
      run: async () => {
        await this.consumer.connect();
        await this.run();
      },
      stopped: () => this.stopping,
      pause: RETRY_PAUSE,
      log: (err, pauseMs) =>
        this.logger.error(
          { err, groupId: this.opts.groupId, pauseMs },
          'kafka consumer stopped after a crash; running it again',
        ),
    }).finally(() => {
      this.restarting = false;
    });
  }

  private async run(): Promise<void> {
    await this.consumer.run({
      // One partition's insert overlaps another's decoding; a partition is never handled twice at once.
      partitionsConsumedConcurrently: 2,
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => {
        const run = this.eachBatch(payload).finally(() => {
          this.inFlight.delete(run);
          if (this.inFlight.size === 0) this.roundEndedAt = Date.now();
        });
        this.inFlight.add(run);
        return run;
      },
    });
  }

  /** A (re)join: every partition restarts from its committed offset, so nothing buffered is kept. */
  private dropBuffers(): void {
    this.generation++;
    for (const buf of this.buffers.values()) this.clearDeadline(buf);
    this.buffers.clear();
  }

  private clearDeadline(buf: PartitionBuffer): void {
    if (buf.timer) {
      clearTimeout(buf.timer);
      this.timers.delete(buf.timer);
      buf.timer = undefined;
    }
  }

  /** Arms the idle-window timer of a partition that keeps a partial batch (at once when flushing). */
  private armDeadline(tp: string, buf: PartitionBuffer, delayMs?: number): void {
    if (buf.timer || buf.messages.length === 0 || this.stopping || this.buffers.get(tp) !== buf) return;
    const due = this.flushing
      ? 0
      : (delayMs ?? buf.openedAt + this.opts.maxWaitMs + IDLE_FLUSH_GRACE_MS - Date.now());
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        buf.timer = undefined;
        if (this.stopping || this.buffers.get(tp) !== buf || buf.messages.length === 0 || buf.active) return;
        const open = Date.now() - buf.openedAt;
        if (!this.flushing && open < this.opts.maxWaitMs) return this.armDeadline(tp, buf);
        // While eachBatch calls run, kafkajs's fetching is held up (it fetches again once they all
        // returned, and a fetch answers within MAX_FETCH_WAIT_MS); a partition that still has messages
        // then comes back by itself, and a seek now would only discard that fetch. So wait for the
        // round to end and the next fetch to answer, for at most another window.
        const busy = this.inFlight.size > 0 || Date.now() - this.roundEndedAt < MAX_FETCH_WAIT_MS;
        if (busy && !this.flushing && open < 2 * this.opts.maxWaitMs) {
          return this.armDeadline(tp, buf, IDLE_FLUSH_GRACE_MS);
        }
        // Bring the partition back to eachBatch: refetch from the first buffered offset (see the class comment).
        try {
          this.consumer.seek({
            topic: buf.topic,
            partition: buf.partition,
            offset: String(buf.messages[0].offset),
          });
        } catch (err) {
          // Not running (crashed and restarting): its rejoin drops this buffer.
          this.logger.debug({ err, topic: buf.topic, partition: buf.partition }, 'idle flush seek failed');
        }
      },
      Math.max(0, due),
    );
    buf.timer = timer;
    this.timers.add(timer);
  }

  private async eachBatch(p: EachBatchPayload): Promise<void> {
    const { topic, partition } = p.batch;
    // isStale: a seek is pending, this fetch predates it; the messages come again after the seek.
    if (this.stopping || !p.isRunning() || p.isStale()) return;
    const tp = `${topic}/${partition}`;
    let buf = this.buffers.get(tp);
    if (!buf) {
      buf = newPartitionBuffer(topic, partition);
      this.buffers.set(tp, buf);
    }
    // Flushing for stop(): only buffered messages are handed over; new ones stay for the next consumer.
    if (this.flushing && buf.messages.length === 0) return;
    const generation = this.generation;
    buf.active = true;
    try {
      buf.high = BigInt(p.batch.highWatermark);
      for (const m of this.flushing ? [] : p.batch.messages) {
        const offset = BigInt(m.offset);
        if (buf.next !== undefined && offset < buf.next) continue; // refetched after an idle seek
        if (buf.messages.length === 0) buf.openedAt = Date.now();
        buf.messages.push(toConsumed(m));
        buf.next = offset + 1n;
      }
      // Fetch on past what is buffered; resolved offsets are never committed (autoCommit: false).
      if (buf.next !== undefined) p.resolveOffset(String(buf.next - 1n));
      const { maxBatchSize, maxWaitMs } = this.opts;
      while (buf.messages.length > 0 && !this.stopping && generation === this.generation) {
        const full = buf.messages.length >= maxBatchSize;
        if (!full && !this.flushing && Date.now() - buf.openedAt < maxWaitMs) break;
        if (!p.isRunning()) return;
        this.clearDeadline(buf);
        const taken = buf.messages.splice(0, maxBatchSize);
        if (!(await this.deliver(p, buf, taken, generation))) return;
        // What did not fit opens the next window.
        if (buf.messages.length > 0) buf.openedAt = Date.now();
      }
    } finally {
      buf.active = false;
      this.armDeadline(tp, buf);
    }
  }

  /** Hands one batch to the handler and commits it; false when it was not committed. */
  private async deliver(
    p: EachBatchPayload,
    buf: PartitionBuffer,
    taken: ConsumedMessage[],
    generation: number,
  ): Promise<boolean> {
    const { topic, partition } = buf;
    const tp = `${topic}/${partition}`;
    const nextOffset = taken[taken.length - 1].offset + 1n;
    const lag = buf.high > nextOffset ? Number(buf.high - nextOffset) : 0;
    const batch: Batch = { topic, partition, messages: taken, nextOffset, lag };
    let failed: { err: unknown } | undefined;
    this.handling++;
    try {
      await Promise.race([this.opts.handler(batch), this.abortSignal]);
    } catch (err) {
      failed = { err };
    } finally {
      this.handling--;
    }
    if (failed) {
      const { err } = failed;
      if (this.aborted) return false;
      try {
        this.opts.onError?.(err, batch);
      } catch (cbErr) {
        this.logger.error({ err: cbErr }, 'bus onError callback threw');
      }
      if (this.stopping) return false; // the next subscription resumes from the committed offset
      const n = (this.failures.get(tp) ?? 0) + 1;
      this.failures.set(tp, n);
      const pauseMs = backoffDelay(n - 1, RETRY_PAUSE);
      this.logger.warn(
        { err, topic, partition, offset: String(taken[0].offset), pauseMs },
        'bus handler failed',
      );
      // Drop what is buffered and redeliver from the batch's first offset once the pause is over.
      buf.messages = [];
      buf.next = taken[0].offset;
      this.clearDeadline(buf);
      this.consumer.seek({ topic, partition, offset: String(taken[0].offset) });
      const resume = p.pause();
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.stopping) resume();
      }, pauseMs);
      this.timers.add(timer);
      return false;
    }
    // Aborted, or the group was rejoined meanwhile (kafkajs can rejoin from another node's fetch on
    // stale metadata): the partition is fetched again from the committed offset, so do not commit.
    if (this.aborted || generation !== this.generation) return false;
    this.failures.delete(tp);
    try {
      await this.consumer.commitOffsets([{ topic, partition, offset: String(nextOffset) }]);
    } catch (err) {
      // Thrown to kafkajs, which rejoins and refetches from the committed offset on a rebalance or
      // an unknown member. It recognises those by the protocol error's `type`, which its commit
      // retrier hides inside a KafkaJSNonRetriableError's `cause`: unwrapped, or kafkajs would crash.
      throw protocolCause(err);
    }
    await p.heartbeat();
    return true;
  }

  /**
   * Hands over what is buffered at once (each partition's partial batch is handled and committed,
   * nothing new is taken), lets the batch in flight finish and commit, then leaves the group and
   * disconnects. A buffer that cannot be handed over (handler failure, rebalance, no progress for
   * STOP_FLUSH_IDLE_MS) is dropped uncommitted: the next consumer of the group gets it from the
   * committed offset.
   */
  stop(): Promise<void> {
    this.stopPromise ??= this.shutdown(false);
    return this.stopPromise;
  }

  /**
   * Disconnects at once, as a crash would: the batch in flight is abandoned without a commit
   * (its handler keeps running, its result is ignored), so the group redelivers it, along with
   * whatever was buffered.
   */
  abort(): Promise<void> {
    this.aborted = true;
    this.signalAbort();
    this.stopPromise ??= this.shutdown(true);
    return this.stopPromise;
  }

  private async shutdown(abort: boolean): Promise<void> {
    if (!abort) await this.flushBuffers();
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const buf of this.buffers.values()) buf.timer = undefined;
    try {
      this.consumer.pause(this.opts.topics.map((topic) => ({ topic })));
    } catch {
      // not running (crashed and restarting): nothing to pause
    }
    // Before disconnecting: once kafkajs is stopping, runner.js `commitOffsets` silently skips commits.
    if (!abort) await Promise.allSettled([...this.inFlight]);
    try {
      await this.consumer.disconnect();
    } catch (err) {
      this.logger.warn({ err, groupId: this.opts.groupId }, 'kafka consumer disconnect failed');
    }
    this.buffers.clear();
    this.onStopped(this);
  }

  /** The first phase of stop(): every buffered partition is refetched and handed over from eachBatch. */
  private async flushBuffers(): Promise<void> {
    this.flushing = true;
    for (const [tp, buf] of this.buffers) {
      this.clearDeadline(buf);
      this.armDeadline(tp, buf);
    }
    let progressAt = Date.now();
    let left = -1;
    for (;;) {
      const pending = [...this.buffers.values()].reduce((n, b) => n + b.messages.length, 0);
      if (pending === 0 || this.aborted) return;
      if (pending !== left || this.handling > 0) progressAt = Date.now();
      left = pending;
      if (Date.now() - progressAt > STOP_FLUSH_IDLE_MS) {
        this.logger.warn(
          { groupId: this.opts.groupId, messages: pending },
          'stopping with buffered messages unhandled',
        );
        return;
      }
      await sleep(20);
    }
  }

  /**
   * Resolves once the group's committed offset reached, on every partition of the subscribed
   * topics, the high watermark at call time, waiting through broker outages. Rejects if the
   * subscription stops first.
   */
  drained(): Promise<void> {
    return waitUntilDrained(
      this.admin,
      this.opts.groupId,
      this.opts.topics,
      () => this.stopping,
      this.logger,
    );
  }
}
