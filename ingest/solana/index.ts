/**
 * Solana share ingestion: one follower per vault with a Solana mint (registry
 * `solana.mintAddress`), each in its own loop. A failed round (RPC down, timeouts
 * after every retry) is published as a `source_errors` event and retried after the
 * poll interval; nothing here throws out of the loop.
 */

import type { Bus } from '../../bus/types.ts';
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { EventCodec } from '../../schemas/codec.ts';
import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import { checkpointFile } from '../checkpoint.ts';
import { pause } from '../pause.ts';
import { Follower, type FollowerCheckpoint, type FollowerProgress } from './follower.ts';
import { publisher, sourceError } from './publish.ts';
import { createRpc } from './rpc.ts';

export interface SolanaIngestOptions {
  config: Config;
  bus: Bus;
  codec: EventCodec;
  log: Logger;
  clock?: () => number;
}

export interface SolanaIngest {
  /** Ends the loops after the round in flight. */
  stop(): Promise<void>;
  progress(): FollowerProgress[];
}

/** Starts following every vault with a Solana mint; a no-op when `solana.rpcUrls` is empty. */
export function startSolanaIngest(opts: SolanaIngestOptions): SolanaIngest {
  const { config, log } = opts;
  const clock = opts.clock ?? Date.now;
  const publish = publisher(opts.bus, opts.codec, config.topicPrefix);
  const vaults = config.solana.rpcUrls.length ? config.vaults.filter((v) => v.solana?.mintAddress) : [];
  const stopping = new AbortController();
  const followers = vaults.map((v) => {
    const rpc = createRpc({
      urls: config.solana.rpcUrls,
      timeoutMs: config.solana.requestTimeoutMs,
      maxAttempts: config.solana.maxAttempts,
      backoffMs: config.solana.backoffMs,
      maxBackoffMs: config.solana.maxBackoffMs,
      jitter: config.solana.jitter,
      onFault: (fault, url, method) => {
        log.warn({ vault: v.slug, url, method, err: fault.message }, 'solana rpc attempt failed');
        publish('source_errors', [
          sourceError(v.slug, SOLANA_CHAIN_ID, 'solana-rpc', method, fault, clock()),
        ]).catch((e) => log.error({ err: errorMessage(e) }, 'cannot publish a source error'));
      },
    });
    const mint = v.solana?.mintAddress as string;
    return new Follower({
      vault: v.slug,
      mint,
      rpc,
      publish,
      checkpoint: checkpointFile<FollowerCheckpoint>(config.dataDir, `solana-${v.slug}`),
      settings: config.solana,
      clock,
    });
  });
  const loops = followers.map(async (f) => {
    while (!stopping.signal.aborted) {
      const { vault } = f.progress();
      let busy = false;
      try {
        const before = f.progress();
        await f.round();
        const after = f.progress();
        busy = before.phase !== after.phase;
      } catch (e) {
        log.warn({ vault, err: errorMessage(e) }, 'solana round failed; retrying after the poll interval');
        await publish('source_errors', [
          sourceError(vault, SOLANA_CHAIN_ID, 'solana-rpc', 'round', e, clock()),
        ]).catch((pe) => log.error({ err: errorMessage(pe) }, 'cannot publish a source error'));
      }
      if (!busy) await pause(config.solana.pollIntervalMs, stopping.signal);
    }
  });
  if (followers.length) log.info({ vaults: vaults.map((v) => v.slug) }, 'solana ingestion started');
  return {
    async stop() {
      stopping.abort();
      await Promise.all(loops);
    },
    progress: () => followers.map((f) => f.progress()),
  };
}
