/**
 * Solana share ingestion: one follower per vault with a Solana mint (registry
 * `solana.mintAddress`), each in its own loop. A failed round (RPC down, timeouts
 * after every retry, a read that does not add up to the supply) is published as a
 * `source_errors` event and retried after the poll interval; nothing here throws out
 * of the loop. While a follower's account subscription is up, its rounds come every
 * `subscribedPollIntervalMs`, or at once when the node notifies a change.
 */

import type { Bus } from '../../bus/types.ts';
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { EventCodec } from '../../schemas/codec.ts';
import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import { pause } from '../pause.ts';
import { Follower, type FollowerProgress } from './follower.ts';
import { Journal } from './journal.ts';
import { publisher, sourceError } from './publish.ts';
import { createRpc } from './rpc.ts';
import { AccountSubscription, wsUrlOf } from './subscription.ts';

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
  const s = config.solana;
  const clock = opts.clock ?? Date.now;
  const publish = publisher(opts.bus, opts.codec, config.topicPrefix);
  const vaults = s.rpcUrls.length ? config.vaults.filter((v) => v.solana?.mintAddress) : [];
  const stopping = new AbortController();
  const subscriptions: AccountSubscription[] = [];
  const wsUrls = s.wsUrls.length ? s.wsUrls : s.rpcUrls.map(wsUrlOf);
  const followers = vaults.map((v) => {
    const rpc = createRpc({
      urls: s.rpcUrls,
      timeoutMs: s.requestTimeoutMs,
      maxAttempts: s.maxAttempts,
      backoffMs: s.backoffMs,
      maxBackoffMs: s.maxBackoffMs,
      jitter: s.jitter,
      maxRequestsPerSecond: s.maxRequestsPerSecond,
      maxConcurrentRequests: s.maxConcurrentRequests,
      onFault: (fault, url, method) => {
        log.warn({ vault: v.slug, url, method, err: fault.message }, 'solana rpc attempt failed');
        publish('source_errors', [
          sourceError(v.slug, SOLANA_CHAIN_ID, 'solana-rpc', method, fault, clock()),
        ]).catch((e) => log.error({ err: errorMessage(e) }, 'cannot publish a source error'));
      },
    });
    const mint = v.solana?.mintAddress as string;
    /** The first websocket URL that confirms the subscription (none: the follower re-reads instead). */
    const subscribe = async (program: string) => {
      for (const url of wsUrls) {
        const sub = new AccountSubscription({
          url,
          mint,
          program,
          commitment: s.commitment,
          timeoutMs: s.requestTimeoutMs,
          maxBuffered: 100_000,
          retryMs: 1000,
          log,
        });
        if (await sub.start()) {
          subscriptions.push(sub);
          return sub;
        }
        sub.close();
      }
      log.warn(
        { vault: v.slug },
        'solana: no account subscription; plain transfers show at the next full re-read',
      );
      return undefined;
    };
    return new Follower({
      vault: v.slug,
      mint,
      rpc,
      publish,
      journal: new Journal(config.dataDir, v.slug),
      settings: s,
      clock,
      subscribe: s.subscribe ? subscribe : undefined,
    });
  });
  const loops = followers.map(async (f) => {
    while (!stopping.signal.aborted) {
      const { vault } = f.progress();
      let busy = false;
      try {
        busy = await f.round();
      } catch (e) {
        log.warn({ vault, err: errorMessage(e) }, 'solana round failed; retrying after the poll interval');
        await publish('source_errors', [
          sourceError(vault, SOLANA_CHAIN_ID, 'solana-rpc', 'round', e, clock()),
        ]).catch((pe) => log.error({ err: errorMessage(pe) }, 'cannot publish a source error'));
      }
      if (busy) continue;
      const sub = f.subscription;
      if (!sub?.up) await pause(s.pollIntervalMs, stopping.signal);
      else {
        const woken = new AbortController();
        const stop = () => woken.abort();
        stopping.signal.addEventListener('abort', stop, { once: true });
        await Promise.race([pause(s.subscribedPollIntervalMs, woken.signal), sub.changed(woken.signal)]);
        woken.abort();
        stopping.signal.removeEventListener('abort', stop);
      }
    }
  });
  if (followers.length) log.info({ vaults: vaults.map((v) => v.slug) }, 'solana ingestion started');
  return {
    async stop() {
      stopping.abort();
      for (const sub of subscriptions) sub.close();
      await Promise.all(loops);
    },
    progress: () => followers.map((f) => f.progress()),
  };
}
