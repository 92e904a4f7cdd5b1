/**
 * Settings of the local devnet (`devnet` in the config file): anvil nodes, the
 * project's contracts and the activity simulator. Owned by the devnet role.
 */
import { z } from 'zod';

export const devnetSchema = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe('Start anvil nodes, deploy the contracts and run the simulator in this process.'),
    chainIds: z
      .array(z.number().int().positive())
      .min(1)
      .default([98866, 1, 56])
      .describe('One anvil node per chain id; the first is the primary chain (the mint flow runs there).'),
    vaults: z.number().int().min(1).max(20).default(3).describe('Vaults deployed on every chain.'),
    backfillDays: z
      .number()
      .int()
      .min(0)
      .max(365)
      .default(45)
      .describe('Days of history written with time travel before going live (UTC days before today).'),
    liveIntervalMs: z
      .number()
      .int()
      .min(0)
      .default(3000)
      .describe(
        'Milliseconds between live simulator ticks (each tick acts on every chain); 0 = no live activity.',
      ),
    liveTicks: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        'Live ticks to run, then the chains stay still (the ground truth is final); 0 = until stopped.',
      ),
    reorgAtTick: z
      .number()
      .int()
      .min(0)
      .default(5)
      .describe(
        'Live tick after which the primary chain reorgs once (snapshot, blocks, revert, other blocks); 0 = never.',
      ),
    reorgHoldSeconds: z
      .number()
      .int()
      .min(0)
      .max(600)
      .default(8)
      .describe('Seconds the orphaned blocks stay the head before the reorg replaces them.'),
    reorgReleaseFile: z
      .string()
      .default('')
      .describe(
        'When set, the orphaned blocks stay the head until this file exists, instead of for `reorgHoldSeconds` (at most 600 s): a test that must see them first creates it once it has.',
      ),
    historyStatesTicks: z
      .number()
      .int()
      .min(0)
      .default(600)
      .describe(
        "Live ticks for which each anvil node keeps the block states of the whole history (12 a backfill day, and these ticks' blocks: devnet/run.ts `keptStates`), so an ingester can read the history at its blocks; then the nodes restart keeping `liveStates` (devnet/state-trim.ts).",
      ),
    liveStates: z
      .number()
      .int()
      .min(0)
      .default(64)
      .describe(
        "Block states each anvil node keeps after `historyStatesTicks` (an ingester may lag that many blocks behind the head); 0 = keep the history's bound and never restart. Each kept state grows with every block mined (anvil 1.7.1): fewer kept, slower growth.",
      ),
    liveTransactionBlocks: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Blocks whose transactions, receipts, call traces and logs each anvil node keeps once it has restarted keeping `liveStates` (anvil's `--transaction-block-keeper`): as block n is mined, block n - this many loses them (the block stays; eth_getLogs finds nothing there), which bounds what the chain's transactions take of a node's memory. Blocks already that old at the restart keep theirs. 0 = keep all. Unset: EMBEDDED_TRANSACTION_BLOCKS (2,000, devnet/run.ts) inside `vaultstream start`, whose ingester starts at block 0 with the devnet and reads near the head; 0 under `vaultstream devnet`, which a service may read from block 0 at any time.",
      ),
    restartTicks: z
      .number()
      .int()
      .min(0)
      .default(4_800)
      .describe(
        "Live ticks between the nodes' later restarts, after the first at `historyStatesTicks` (the same restart: devnet/state-trim.ts): each starts the kept states' copies of the block hashes from empty again, which otherwise grow with every block. 0 = only the first.",
      ),
    seed: z
      .number()
      .int()
      .default(1)
      .describe("Seed of the simulator's random choices: the same seed gives the same history."),
    truthFile: z
      .string()
      .default('')
      .describe('Ground-truth JSON path; empty = `<dataDir>/devnet/ground-truth.json`.'),
  })
  .prefault({});

export type DevnetSettings = z.infer<typeof devnetSchema>;
