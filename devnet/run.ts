/**
 * `startDevnet`: anvil nodes, the contracts, the simulator's backfill and then its
 * live ticks, in this process. Returns what the rest of the system needs: chain
 * entries (RPC URLs, registry, operator) and vault registry entries in the config's
 * input shapes, ready for `parseConfig({ chains, vaults, ... })`.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { z } from 'zod';
import type { Logger } from '../core/log.ts';
import { silentLogger } from '../core/log.ts';
import type { DevnetSettings } from '../core/settings/devnet.ts';
import type { chainSchema, vaultSchema } from '../core/settings/registry.ts';
import type { mintFlowSchema, solanaSchema } from '../core/settings/solana.ts';
import { type AnvilNode, startAnvil } from './anvil.ts';
import { compileContracts } from './compile.ts';
import {
  type DevnetAddresses,
  defaultVaultSpec,
  deployVaultSystem,
  type VaultSpec,
  vaultRegistryExtras,
} from './deploy.ts';
import { createSimulator, type Simulator } from './simulator.ts';
import {
  CCTP_PROGRAM,
  DESTINATION_DOMAIN,
  SOLANA_OFT_PROGRAM,
  SOURCE_DOMAIN,
  SolanaSim,
} from './solana/sim.ts';
import { stateTrim } from './state-trim.ts';

export type DevnetChainEntry = z.input<typeof chainSchema>;
export type DevnetVaultEntry = z.input<typeof vaultSchema>;

export interface Devnet {
  /** `chains[]` config entries, primary chain first. */
  chains: DevnetChainEntry[];
  /** `vaults[]` registry entries, one per deployed vault (vault 0 with its Solana mint). */
  vaults: DevnetVaultEntry[];
  /** `solana` settings: the local Solana JSON-RPC (LiteSVM). */
  solana: z.input<typeof solanaSchema>;
  /** `mintFlow` settings: the service stand-ins, the relayer, the CCTP program. */
  mintFlow: z.input<typeof mintFlowSchema>;
  addresses: DevnetAddresses;
  /** The nodes' own HOMEs (devnet/anvil.ts), where anvil would write the states it moves out of memory. */
  readonly anvilHomes: string[];
  /** The anvil nodes, in `chains` order. */
  nodes: AnvilNode[];
  /** The simulator's ground truth JSON (rewritten after the backfill and every live tick). */
  truthFile: string;
  simulator: Simulator;
  /** Stops the simulator, then the nodes. */
  stop(): Promise<void>;
}

export interface StartDevnetOptions {
  settings: DevnetSettings;
  /** The service's data directory: the default home of the ground truth. */
  dataDir: string;
  /** Milliseconds since the epoch (the simulator's notion of now). */
  clock?: () => number;
  log?: Logger;
  /**
   * The data directory is this process's (the `start` roles): a previous devnet's data
   * in it (`<dataDir>/devnet` exists) describes chains that are gone with their anvil
   * nodes, so the devnet-derived data (checkpoints, bus log, chDB store, insert spool,
   * ground truth) is deleted before the new chains start. Call before opening the
   * store or the bus.
   */
  clearPrevious?: boolean;
  /**
   * The devnet runs inside the service that reads it (`vaultstream start`): its ingester starts
   * at block 0 with these chains, so `liveTransactionBlocks` defaults to
   * EMBEDDED_TRANSACTION_BLOCKS rather than 0 (keep all).
   */
  embedded?: boolean;
  /** Told as each simulated backfill day completes on every chain, then once live; absent = nothing. */
  onProgress?: (p: DevnetProgress) => void;
}

export interface DevnetProgress {
  phase: 'backfill' | 'live';
  /** Backfill days written on every chain (`days` once live). */
  day: number;
  days: number;
}

/** What a devnet derives in a data directory, relative to it. */
export const DEVNET_DERIVED = ['ingest', 'bus', 'chdb', 'insert-spool', 'devnet'] as const;

/** Deletes a previous devnet's data from `dataDir`; true when there was one. */
export function clearPreviousDevnet(dataDir: string, log: Logger): boolean {
  if (!existsSync(join(dataDir, 'devnet'))) return false;
  const removed = DEVNET_DERIVED.filter((d) => existsSync(join(dataDir, d)));
  for (const d of removed) rmSync(join(dataDir, d), { recursive: true, force: true });
  log.info(
    { dataDir, removed },
    "devnet: the data directory held a previous devnet's data (its chains are gone with their anvil nodes); deleted it to start from empty",
  );
  return true;
}

const CHAIN_NAMES: Record<number, { name: string; key: string }> = {
  98866: { name: 'plume', key: 'primary' },
  1: { name: 'ethereum', key: 'mainnet' },
  56: { name: 'bsc', key: 'bsc' },
  8453: { name: 'base', key: 'base' },
  9745: { name: 'plasma', key: 'plasma' },
  42161: { name: 'arbitrum', key: 'arbitrum' },
  480: { name: 'worldchain', key: 'worldchain' },
  43114: { name: 'avalanche', key: 'avalanche' },
};

/**
 * Block states each node keeps at first, in memory only (devnet/anvil.ts `keepStates`): the
 * history's blocks (about 11 a day, devnet/sim/chain.ts) and `historyStatesTicks` more (600:
 * about 30 minutes of live ticks) for the ingester to read the history at its blocks; then
 * the nodes restart keeping `liveStates` (devnet/state-trim.ts). Without a bound anvil writes
 * every state it moves out of memory to disk, about 270 KB a block: 2.4 GB two minutes after
 * a default start, 210 MB more a minute.
 */
export function keptStates(settings: Pick<DevnetSettings, 'backfillDays' | 'historyStatesTicks'>): number {
  return 12 * settings.backfillDays + settings.historyStatesTicks;
}

/**
 * Blocks whose transactions, receipts, call traces and logs each node keeps after its restart
 * when the devnet is embedded (`devnet.liveTransactionBlocks` unset): about 1.7 hours of live
 * ticks (a block a tick per chain) and 70 MB of a node's memory (~35 KB a tick's block), 30
 * times `liveStates`. Nothing re-reads that far back: the ingester starts at block 0 with the
 * devnet (`vaultstream start` deletes a previous devnet's checkpoints: clearPreviousDevnet) and
 * reads at most `liveStates` blocks behind the head once the nodes have restarted (its calls at
 * older blocks fail), its reorg window is 64 blocks, the mint flow tracker reads each relay's
 * receipt as it comes, and the restart's replay reads the blocks since its checkpoint before any
 * is dropped. An ingester asking for dropped blocks anyway stops with an error (ingest/evm/chain.ts
 * `transactionsDropped`), never reads them as empty.
 */
export const EMBEDDED_TRANSACTION_BLOCKS = 2_000;

/** `devnet.liveTransactionBlocks`, or its default for an embedded devnet (0 otherwise: keep all). */
export function liveTransactionBlocks(settings: DevnetSettings, embedded: boolean): number {
  return settings.liveTransactionBlocks ?? (embedded ? EMBEDDED_TRANSACTION_BLOCKS : 0);
}

/** Starts the devnet described by `settings` and returns once the backfill is written and live ticks are scheduled. */
export async function startDevnet(opts: StartDevnetOptions): Promise<Devnet> {
  const { settings } = opts;
  const clock = opts.clock ?? Date.now;
  const log = opts.log ?? silentLogger;
  if (opts.clearPrevious) clearPreviousDevnet(opts.dataDir, log);
  mkdirSync(join(opts.dataDir, 'devnet'), { recursive: true });
  const truthFile = settings.truthFile || join(opts.dataDir, 'devnet', 'ground-truth.json');
  mkdirSync(dirname(truthFile), { recursive: true });
  // The genesis is a day before the first backfilled day, so deployment and setup precede it.
  const genesis = (Math.floor(clock() / 86_400_000) - settings.backfillDays - 1) * 86_400;
  const nodes: AnvilNode[] = [];
  let solana: SolanaSim | undefined;
  try {
    solana = await SolanaSim.start(settings.seed, genesis, clock);
    nodes.push(
      ...(await Promise.all(
        settings.chainIds.map((chainId) =>
          startAnvil({ chainId, timestamp: genesis, manyPerBlock: true, keepStates: keptStates(settings) }),
        ),
      )),
    );
    const compiled = compileContracts();
    const specs: VaultSpec[] = Array.from({ length: settings.vaults }, (_, i) => defaultVaultSpec(i));
    const deployed = await Promise.all(
      nodes.map((n) => deployVaultSystem(n.rpcUrl, { vaults: specs, compiled })),
    );
    const addresses = deployed[0];
    const trim = stateTrim({
      nodes,
      historyStatesTicks: settings.historyStatesTicks,
      liveStates: settings.liveStates,
      keepTransactionBlocks: liveTransactionBlocks(settings, opts.embedded ?? false),
      restartTicks: settings.restartTicks,
      reconnect: () => simulator.reconnect(),
      log,
    });
    const simulator: Simulator = await createSimulator({
      chains: nodes.map((n) => ({ chainId: n.chainId, rpcUrl: n.rpcUrl })),
      addresses,
      specs,
      backfillDays: settings.backfillDays,
      seed: settings.seed,
      truthFile,
      reorgAtTick: settings.reorgAtTick,
      reorgHoldMs: settings.reorgHoldSeconds * 1000,
      reorgReleaseFile: settings.reorgReleaseFile || undefined,
      clock,
      log,
      onDay: (day, days) => opts.onProgress?.({ phase: 'backfill', day, days }),
      solana,
      afterTick: trim.afterTick,
    });
    await simulator.backfill();
    await trim.start();
    if (settings.liveIntervalMs > 0) simulator.startLive(settings.liveIntervalMs, settings.liveTicks);
    opts.onProgress?.({ phase: 'live', day: settings.backfillDays, days: settings.backfillDays });
    log.info(
      { chains: nodes.map((n) => ({ chainId: n.chainId, rpcUrl: n.rpcUrl })), truthFile },
      'devnet: running',
    );
    log.info({ rpcUrl: solana.rpcUrl, mint: solana.mint }, 'devnet: solana (LiteSVM) running');
    return {
      chains: nodes.map((n) => chainEntry(n, addresses)),
      vaults: specs.map((spec, i) => ({
        ...vaultEntry(spec, i, addresses, settings.chainIds),
        // Vault 0's share also lives on Solana (the mint flow's destination).
        ...(i === 0 && solana
          ? {
              solana: {
                mintAddress: solana.mint,
                oftStoreAddress: solana.oftStore,
                composerAddress: addresses.composer,
                decimals: 6,
                startBlock: 0,
              },
            }
          : {}),
      })),
      solana: { rpcUrls: [solana.rpcUrl], pollIntervalMs: 1_000, commitment: 'confirmed' },
      mintFlow: {
        attestationUrl: solana.services.irisUrl,
        complianceUrl: solana.services.predicateUrl,
        crossChainScanUrl: solana.services.scanUrl,
        pollIntervalMs: 1_000,
        primaryChainId: settings.chainIds[0],
        sourceDomain: SOURCE_DOMAIN,
        destinationDomain: DESTINATION_DOMAIN,
        cctpPrograms: [CCTP_PROGRAM],
        solanaOftProgramId: SOLANA_OFT_PROGRAM,
        relayerAddress: addresses.relayer,
      },
      addresses,
      get anvilHomes() {
        return nodes.map((n) => n.home);
      },
      nodes,
      truthFile,
      simulator,
      async stop() {
        await simulator.stop();
        await solana?.stop();
        await Promise.all(nodes.map((n) => n.stop()));
      },
    };
  } catch (err) {
    await solana?.stop();
    await Promise.all(nodes.map((n) => n.stop()));
    throw err;
  }
}

function chainEntry(node: AnvilNode, a: DevnetAddresses): DevnetChainEntry {
  return {
    chainId: node.chainId,
    name: CHAIN_NAMES[node.chainId]?.name ?? `devnet-${node.chainId}`,
    rpcUrls: [node.rpcUrl],
    // None: the devnet mines only while it simulates, so every block must be ingested as it comes
    // (the follower waits for `confirmations` blocks after one). The simulator's reorg (up to 4
    // blocks) is deeper than that; the ingester keeps 64 blocks to walk back to the common ancestor.
    confirmations: 0,
    reorgWindow: 64,
    // A local node: no request rate limit (the default suits public endpoints).
    maxRequestsPerSecond: 0,
    startBlock: 0,
    pollIntervalMs: 1_000,
    operatorRegistry: a.operatorRegistry,
    redeemOperator: a.redeemOperator,
    multicall3: a.multicall3,
    // Every vault has its own Veda and Nucleus queue; a request's offer token names the vault.
    atomicQueues: a.vaults.flatMap((v) => [v.queueVeda, v.queueNucleus]),
  };
}

/** The registry entry of vault `i`; the teller named is the Veda one for even vaults, the Nucleus one for odd. */
function vaultEntry(spec: VaultSpec, i: number, a: DevnetAddresses, chainIds: number[]): DevnetVaultEntry {
  const v = a.vaults[i];
  const chain = Object.fromEntries(
    chainIds
      .filter((id) => CHAIN_NAMES[id])
      .map((id) => [CHAIN_NAMES[id].key, { startBlock: 0, accountantType: 'legacy' }]),
  );
  return {
    slug: spec.symbol.toLowerCase(),
    name: spec.name,
    symbol: spec.symbol,
    vaultType: 'boringNest',
    vaultAddress: v.share,
    accountantAddress: v.accountant,
    authorityAddress: v.authority,
    tellerContractAddress: i % 2 === 0 ? v.tellerVeda : v.tellerNucleus,
    coreShareOftAddress: i === 0 ? a.oft : '',
    coreVaults: [
      {
        coreVaultAddress: v.nestVault,
        asset: 'USDC',
        chainAssets: chainIds.map((chainId) => ({ chainId, assetAddress: a.asset })),
      },
    ],
    coreComposers: i === 0 ? [{ asset: 'USDC', composerAddress: a.composer, assetAddress: a.asset }] : [],
    decimals: 6,
    chain,
    chainIds,
    ...vaultRegistryExtras(spec, a, chainIds),
    liquidAssets: chainIds.map((chainId) => ({
      contractAddress: a.asset,
      symbol: 'USDC',
      decimals: 6,
      chainId,
    })),
  };
}
