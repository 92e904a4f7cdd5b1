/**
 * The mint-flow tracker: finds new flows on the Solana side (burns with a hook to
 * a vault composer, from the CCTP programs' signatures) or on demand (`lookup`),
 * advances every open flow each poll, and publishes each step observation as a
 * `mint_steps` event keyed by the Solana signature. Open flows and the discovery
 * cursors are checkpointed under `<dataDir>/ingest/`, so a restart resumes them.
 * No source failure leaves this loop: it becomes a `source_errors` event and the
 * step's noted error.
 */
import type { Bus } from '../../bus/types.ts';
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { chainTransport } from '../../rpc/evm-transport.ts';
import type { EventCodec } from '../../schemas/codec.ts';
import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { MintStepRecord } from '../../schemas/records.ts';
import { checkpointFile } from '../checkpoint.ts';
import { pause } from '../pause.ts';
import { publisher, sourceError } from '../solana/publish.ts';
import { composerIndex, parseBurn } from './burn.ts';
import { advance, type Flow, type FlowContext, open } from './flow.ts';
import { httpSources, solanaSourceFromConfig } from './http-sources.ts';
import { viemPrimarySource } from './primary.ts';
import type { MintFlowSources } from './sources.ts';

export interface MintFlowTrackerOptions {
  config: Config;
  bus: Bus;
  codec: EventCodec;
  log: Logger;
  clock?: () => number;
  /** Replaces any of the sources built from the config. */
  sources?: Partial<MintFlowSources>;
}

export interface MintFlowTracker {
  stop(): Promise<void>;
  /** Tracks `signature` when it is a mint flow; its first observations are published before this resolves. */
  lookup(signature: string): Promise<'tracked' | 'not_flow'>;
  /** Signatures of the open flows. */
  open(): string[];
}

interface TrackerCheckpoint {
  /** Newest signature seen per CCTP program. */
  cursors: Record<string, string>;
  flows: Flow[];
}

/** The sources from the config, with `given` ones taking precedence. */
function buildSources(config: Config, given: Partial<MintFlowSources> = {}): MintFlowSources {
  const primary =
    given.primary ??
    (() => {
      const chain = config.chains.find((c) => c.chainId === config.mintFlow.primaryChainId);
      return viemPrimarySource({
        transport: chain?.rpcUrls.length ? chainTransport(chain, config.ingest) : undefined,
        relayer: config.mintFlow.relayerAddress,
        composers: [...composerIndex(config).keys()],
        ofts: config.vaults.map((v) => v.coreShareOftAddress).filter(Boolean),
        startBlock: typeof chain?.startBlock === 'number' ? chain.startBlock : 0,
        confirmations: chain?.confirmations ?? 0,
        maxBlockRange: chain?.maxBlockRange ?? 2000,
      });
    })();
  return {
    ...httpSources(config),
    ...given,
    solana: given.solana ?? solanaSourceFromConfig(config),
    primary,
  };
}

/** Starts discovery and tracking (off when `solana.rpcUrls` is empty); see `MintFlowTracker`. */
export function startMintFlowTracker(opts: MintFlowTrackerOptions): MintFlowTracker {
  const { config, log } = opts;
  if (!config.solana.rpcUrls.length && !opts.sources?.solana) {
    // No Solana to read: nothing can be a flow, and there is nothing to poll.
    log.info('mint-flow tracker off: solana.rpcUrls is empty');
    return { stop: async () => {}, lookup: async () => 'not_flow', open: () => [] };
  }
  const clock = opts.clock ?? Date.now;
  const sources = buildSources(config, opts.sources);
  const publish = publisher(opts.bus, opts.codec, config.topicPrefix);
  const checkpoint = checkpointFile<TrackerCheckpoint>(config.dataDir, 'mintflow');
  const saved = checkpoint.load() ?? { cursors: {}, flows: [] };
  const cursors = saved.cursors;
  const flows = new Map(saved.flows.map((f) => [f.burn.signature, f]));
  const defaultVault = config.vaults.find((v) => v.solana)?.slug ?? config.vaults[0]?.slug ?? 'unknown';
  const stopping = new AbortController();
  // Written off the main thread (its fsyncs hold no other role's work), in the order asked.
  const save = () => checkpoint.saveAsync({ cursors, flows: [...flows.values()].filter((f) => !f.done) });

  const reportDown = async (vault: string, source: string, operation: string, err: unknown) => {
    log.warn({ vault, source, operation, err: errorMessage(err) }, 'mint-flow source failed');
    const chainId =
      source === 'primary' ? config.mintFlow.primaryChainId : source === 'solana' ? SOLANA_CHAIN_ID : 0;
    await publish('source_errors', [sourceError(vault, chainId, source, operation, err, clock())]);
  };
  const SOURCE_OF: Record<string, string> = {
    cctpAttestation: 'attestation',
    predicate: 'compliance',
    relay: 'primary',
    reclaim: 'primary',
    solanaMint: 'crossChainScan',
  };
  const ctx: FlowContext = {
    sources,
    clock,
    limits: config.mintFlow.stepTimeoutsMs,
    settings: config.mintFlow,
    oftStoreOf: (vault) => config.vaults.find((v) => v.slug === vault)?.solana?.oftStoreAddress ?? '',
    emit: async (flow, step, obs, observedAt) => {
      const rec: MintStepRecord = { signature: flow.burn.signature, step, observedAt, ...obs };
      await publish('mint_steps', [rec]);
    },
    sourceDown: (flow, step, err) => reportDown(flow.burn.vault, SOURCE_OF[step] ?? step, step, err),
  };

  /** Starts tracking `signature` if its transaction is a flow's burn. */
  async function track(signature: string): Promise<boolean> {
    if (flows.has(signature)) return true;
    const tx = await sources.solana.getTransaction(signature);
    const burn = tx && parseBurn(tx, config);
    if (!burn || flows.has(signature)) return Boolean(burn);
    const flow: Flow = { burn, steps: {}, done: false, lastObservedAt: 0 };
    flows.set(signature, flow);
    await open(flow, ctx, clock());
    await save();
    log.info({ signature, vault: burn.vault }, 'mint flow tracked');
    return true;
  }

  /** New signatures of each CCTP program since its cursor (the first poll only sets the cursor). */
  async function discover(): Promise<void> {
    for (const program of config.mintFlow.cctpPrograms) {
      const sigs = await sources.solana.signaturesFor(program, cursors[program]);
      if (!cursors[program]) {
        if (sigs[0]) cursors[program] = sigs[0].signature;
        continue;
      }
      for (const s of [...sigs].reverse()) {
        if (!s.err) await track(s.signature);
        cursors[program] = s.signature;
      }
    }
    await save();
  }

  async function poll(): Promise<void> {
    try {
      await discover();
    } catch (e) {
      await reportDown(defaultVault, 'solana', 'discover', e).catch(() => {});
    }
    for (const flow of flows.values()) {
      if (flow.done) continue;
      await advance(flow, ctx);
      if (flow.done) log.info({ signature: flow.burn.signature }, 'mint flow finished');
    }
    for (const [sig, flow] of flows) if (flow.done) flows.delete(sig);
    await save();
  }

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await poll();
      } catch (e) {
        log.error({ err: errorMessage(e) }, 'mint-flow poll failed; retrying after the poll interval');
      }
      await pause(config.mintFlow.pollIntervalMs, stopping.signal);
    }
  })();

  return {
    async stop() {
      stopping.abort();
      await loop;
    },
    async lookup(signature) {
      return (await track(signature)) ? 'tracked' : 'not_flow';
    },
    open: () => [...flows.keys()],
  };
}
