/**
 * EVM ingestion: one follower per configured chain with RPC URLs, each in its own
 * loop, so one chain failing never stops the others. Every failed RPC attempt and
 * every failed round is published as `source_errors` (one per vault of the chain);
 * a failed round is retried with core/retry.ts' backoff (`ingest.backoffMs` doubling up to
 * `ingest.maxBackoffMs`, jittered), not only at the next poll. A chain that cannot go on
 * without wrong data (a reorg deeper than its window, another genesis) stops with
 * `phase: 'stopped'` and the reason. Progress (blocks
 * done/total, blocks/s, ETA) is logged while backfilling and served by `progress()`.
 */

import type { Bus } from '../../bus/types.ts';
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { backoffDelay } from '../../core/retry.ts';
import type { ChainConfig } from '../../core/settings/registry.ts';
import { faultSummary } from '../../rpc/rpc-faults.ts';
import type { EventCodec } from '../../schemas/codec.ts';
import { checkpointFile } from '../checkpoint.ts';
import { pause } from '../pause.ts';
import { ChainReader } from './chain.ts';
import { chainContracts } from './contracts.ts';
import { topicsOf } from './decode.ts';
import { ChainFollower } from './follower.ts';
import { MAPPED_EVENTS } from './map.ts';
import { type ChainProgress, ProgressMeter } from './progress.ts';
import { emittedPublisher, type PublishEmitted, sourceErrors } from './publish.ts';
import { type ChainCheckpoint, ChainStopped } from './reorg.ts';
import { createEvmRpc, evmFaultOf, type RpcOptions } from './rpc.ts';

export interface EvmIngestOptions {
  config: Config;
  bus: Bus;
  codec: EventCodec;
  log: Logger;
  /** Wall clock in ms (snapshot schedule, source-error timestamps, rates). */
  clock?: () => number;
  /** Overrides of the RPC client (tests: a fetch, a sleep). */
  rpc?: Pick<RpcOptions, 'fetch' | 'sleep'>;
  /**
   * The first round waits for it (progress is served meanwhile, phase `starting`): the process
   * starts its other roles first, so a backfill's first ranges do not share the main thread with
   * their start-up (cli/roles.ts). Absent: at once.
   */
  startAfter?: Promise<void>;
}

export interface EvmIngest {
  /** Ends every loop after its round in flight. */
  stop(): Promise<void>;
  progress(): ChainProgress[];
}

/** Starts following every chain of `config.chains` that has RPC URLs and vaults. */
export function startEvmIngest(opts: EvmIngestOptions): EvmIngest {
  const { config, log } = opts;
  const clock = opts.clock ?? Date.now;
  const publish = emittedPublisher(opts.bus, opts.codec, config.topicPrefix);
  const stopping = new AbortController();
  const chains = config.chains.filter((c) => c.rpcUrls.length && chainContracts(config, c).vaults.length);
  const running = chains.map((chain) => followChain(opts, chain, publish, clock, stopping.signal));
  if (chains.length) log.info({ chains: chains.map((c) => c.chainId) }, 'evm ingestion started');
  return {
    async stop() {
      stopping.abort();
      await Promise.all(running.map((r) => r.loop));
    },
    progress: () => running.map((r) => r.meter.snapshot()),
  };
}

function followChain(
  opts: EvmIngestOptions,
  chain: ChainConfig,
  publish: PublishEmitted,
  clock: () => number,
  signal: AbortSignal,
) {
  const { config, log } = opts;
  const contracts = chainContracts(config, chain);
  const slugs = contracts.vaults.map((v) => v.slug);
  const chainLog = log.child({ chainId: chain.chainId, chain: chain.name });
  const report = (operation: string, code: Parameters<typeof sourceErrors>[3], err: unknown) =>
    publish(sourceErrors(slugs, chain.chainId, operation, code, errorMessage(err), clock())).catch((e) =>
      chainLog.error({ err: errorMessage(e) }, 'cannot publish a source error'),
    );
  const rpc = createEvmRpc({
    urls: chain.rpcUrls,
    timeoutMs: chain.requestTimeoutMs,
    maxRequestsPerSecond: chain.maxRequestsPerSecond,
    maxConcurrentRequests: chain.maxConcurrentRequests,
    chain: chain.name,
    maxAttempts: config.ingest.maxAttempts,
    backoffMs: config.ingest.backoffMs,
    maxBackoffMs: config.ingest.maxBackoffMs,
    jitter: config.ingest.jitter,
    ...opts.rpc,
    onFault: (fault, url, method) => {
      const err = faultSummary(fault);
      chainLog.warn(
        { url, method, fault: fault.fault, code: fault.errorCode, err },
        'evm rpc attempt failed',
      );
      void report(method, fault.fault, err);
    },
  });
  const reader = new ChainReader({
    rpc,
    addresses: contracts.addresses,
    topics: topicsOf(MAPPED_EVENTS),
    maxBlockRange: chain.maxBlockRange,
    headerBatchSize: config.ingest.headerBatchSize,
    multicall3: chain.multicall3 as `0x${string}`,
  });
  const follower = new ChainFollower({
    contracts,
    reader,
    publish,
    checkpoint: checkpointFile<ChainCheckpoint>(config.dataDir, `evm-${chain.chainId}`),
    log: chainLog,
    clock,
    snapshotIntervalSeconds: config.ingest.snapshotIntervalSeconds,
    onSnapshotError: (e) => {
      chainLog.warn({ err: errorMessage(e) }, 'snapshot failed');
      void report('snapshot', 'SNAPSHOT_FAILED', e);
    },
  });
  const meter = new ProgressMeter(chain, follower, rpc, clock, config.ingest.live);
  const backoff = {
    baseMs: config.ingest.backoffMs,
    maxMs: config.ingest.maxBackoffMs,
    jitter: config.ingest.jitter,
  };
  const loop = (async () => {
    /** Rounds failed in a row. */
    let failures = 0;
    if (opts.startAfter) await Promise.race([opts.startAfter, aborted(signal)]);
    while (!signal.aborted) {
      let busy = false;
      try {
        const r = await follower.round();
        meter.record(r);
        failures = 0;
        busy = r.blocks > 0 || r.retracted > 0;
      } catch (e) {
        if (e instanceof ChainStopped) {
          // Going on would leave wrong data: this chain stops, loudly; the others go on.
          meter.stopped(e.message);
          chainLog.error({ reason: e.reason, err: e.message }, 'evm chain stopped');
          await report(e.reason === 'REORG_TOO_DEEP' ? 'reorg' : 'genesis', e.reason, e);
          break;
        }
        meter.failed(evmFaultOf(e) ? faultSummary(e) : e);
        const delayMs = backoffDelay(failures++, backoff);
        chainLog.warn({ err: errorMessage(e), retryInMs: delayMs }, 'evm round failed; retrying');
        // Each failed RPC attempt was reported as it happened; anything else is reported here.
        if (!evmFaultOf(e)) await report('round', 'ROUND_FAILED', e);
        await pause(delayMs, signal);
        continue;
      }
      if (!busy) await pause(chain.pollIntervalMs, signal);
    }
    await follower.settle();
  })();
  return { loop, meter };
}

/** Resolves once `signal` fires. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
