/**
 * The simulator's ground truth as written to disk (devnet/sim/truth.ts books it, the tests
 * read it back): its JSON shape, one interface per kind of fact. Amounts are decimal strings
 * of raw integer units (shares and rates have 6 decimals); days are UTC `YYYY-MM-DD`.
 */
import type { Address, Hex } from 'viem';
import type { DevnetAddresses } from '../deploy.ts';

/** `accountantManagement` / `accountantPerformance`: the management and the performance fee a hub
 * accountant accrued on a rate update (the simulator's own arithmetic, mirroring NestHubAccountant). */
export type FeeKind =
  | 'accountantClaimed'
  | 'accountantManagement'
  | 'accountantPerformance'
  | 'instantRedemption'
  | 'deposit'
  | 'redemption';

/** compositionApy of one vault and day (docs/architecture.md, Units and formulas), percent; null where an asset history is too short. */
export interface CompositionApyTruth {
  rolling7d: number | null;
  rolling30d: number | null;
  sec30d: number | null;
  /** Renormalised weight per yield asset slug, percent. */
  weights: Record<string, number>;
}

export interface AtomicRequestTruth {
  chainId: number;
  share: Address;
  queue: Address;
  family: 'veda' | 'nucleus';
  user: Address;
  want: Address;
  amount: string;
  atomicPrice: string;
  deadline: number;
  requestedAt: number;
  /** `expired`: deadline passed with no fill (no event marks it). */
  state: 'open' | 'fulfilled' | 'expired' | 'cancelled';
  fulfilledAt?: number;
  wantReceived?: string;
}

/** One ERC-7540 action on a NestVault, as the simulator sent it (in the order it happened on its chain). */
export interface NestEventTruth {
  chainId: number;
  nestVault: Address;
  /**
   * `request`: shares added to the controller's pending request; `fulfil`: pending shares moved
   * to claimable; `decrease`: `updateRedeem` lowered the pending shares by `shares`; `claim`:
   * claimable shares and assets paid out (`redeem` or `withdraw`).
   */
  kind: 'request' | 'fulfil' | 'decrease' | 'claim';
  controller: Address;
  /** The sender: the owner (request), the keeper (fulfil), the controller or the RedeemOperator. */
  by: Address;
  shares: string;
  /** fulfil: the assets credited as claimable (after the redemption fee); claim: the assets paid. */
  assets?: string;
  at: number;
}

/** A controller's ERC-7540 state on one NestVault as the simulator books it (non-zero ones only). */
export interface NestControllerTruth {
  chainId: number;
  nestVault: Address;
  controller: Address;
  /** `pendingRedeemRequest(0, controller)`. */
  pending: string;
  /** `claimableRedeemRequest(0, controller)`. */
  claimableShares: string;
  /** `maxWithdraw(controller)`: the assets the claimable shares pay. */
  claimableAssets: string;
}

/** What one vault's deployed contracts answer at one block (devnet/sim/contract-views.ts). */
export interface VaultViewsTruth {
  share: Address;
  /** The accountant's `getRate()`. */
  rate: string;
  /** The accountant's `feesOwedInBase`. */
  feesOwed: string;
  /** The NestVault's `totalPendingShares()`. */
  totalPendingShares: string;
  /** The NestVault's `claimableFees(f)` for f = 0 (instant redemption), 1 (deposit), 2 (redemption). */
  claimableFees: string[];
  /** controller -> its ERC-7540 state read from the NestVault (controllers whose three numbers are 0 left out). */
  controllers: Record<string, { pending: string; claimableShares: string; claimableAssets: string }>;
}

/** The contracts' own view functions read at one block of a chain: a simulated day's last block, or the head. */
export interface ContractViewsTruth {
  chainId: number;
  /** The UTC day whose last block this is, and that block's time; both absent for the head (its block
   * carries the wall clock, which would make the truth of a seed differ from run to run). */
  day?: string;
  time?: number;
  block: string;
  vaults: VaultViewsTruth[];
}

export interface BridgeTruth {
  guid: Hex;
  srcChainId: number;
  dstChainId: number;
  user: Address;
  amount: string;
  sentAt: number;
  receivedAt?: number;
}

/** One mint flow (Solana burn -> primary chain -> Solana mint, or reclaim) and the step statuses it ends with. */
export interface MintFlowTruth {
  /** The burn's Solana signature: the flow's id on /v1/solana/mint-status. */
  signature: string;
  wallet: string;
  /** USDC burnt (raw, 6 decimals). */
  amount: string;
  burntAt: number;
  nonce: Hex;
  relayTx: Hex;
  refunded: boolean;
  /** Share OFT guid, shares sent and the Solana mint's signature (delivered flows). */
  guid?: string;
  shares?: string;
  mintSignature?: string;
  /** Final status of each step (MINT_STEPS names); steps absent do not apply. */
  steps: Record<string, 'completed' | 'failed' | 'skipped'>;
}

/** The Solana side (chain 101): vault 0's share mint, its holders, and the mint flows. */
export interface SolanaTruthJson {
  chainId: 101;
  mint: string;
  oftStore: string;
  /** owner -> raw share balance (zero balances omitted). */
  balances: Record<string, string>;
  supply: string;
  transfers: number;
  /** UTC day (YYYY-MM-DD) -> holders at the day's end, every day from the first change to the last. */
  holdersByDay: Record<string, number>;
  mintFlows: MintFlowTruth[];
}

export interface GroundTruthJson {
  seed: number;
  chainIds: number[];
  addresses: DevnetAddresses;
  /** Simulated time span covered: first and last block time written by the simulator. */
  from: number;
  to: number;
  /** chainId -> share -> holder -> balance (zero balances omitted). */
  balances: Record<string, Record<string, Record<string, string>>>;
  /** chainId -> share -> totalSupply. */
  supply: Record<string, Record<string, string>>;
  /** share -> addresses with a positive balance on at least one chain, sorted. */
  holders: Record<string, string[]>;
  /** chainId -> share -> day -> last accountant rate set on or before the end of that day. */
  closePrices: Record<string, Record<string, Record<string, string>>>;
  /** Rate updates that paused the accountant silently (out of bounds). */
  pauses: { chainId: number; share: Address; at: number; rate: string; unpausedAt?: number }[];
  fees: { chainId: number; share: Address; day: string; kind: FeeKind; amount: string }[];
  atomicRequests: AtomicRequestTruth[];
  /** ERC-7540 actions on the NestVaults, and each controller's state as the simulator books it. */
  nestEvents: NestEventTruth[];
  nestControllers: NestControllerTruth[];
  /**
   * Read from the deployed contracts (not the simulator's book): each chain's state at the last
   * block of every simulated day, and at its head (after the backfill and after every live tick).
   */
  contractViews: { days: ContractViewsTruth[]; head: ContractViewsTruth[] };
  /** Latest state per (chain, authority, user, role). */
  roles: {
    chainId: number;
    share: Address;
    authority: Address;
    user: Address;
    role: number;
    enabled: boolean;
  }[];
  /** Latest registry state per (chain, controller, operator). */
  operators: { chainId: number; controller: Address; operator: Address; enabled: boolean }[];
  /** Share OFT moves of vault 0 between chains; `receivedAt` unset = still in flight. */
  bridges: BridgeTruth[];
  reorgs: { chainId: number; forkBlock: string; orphanedBlocks: Hex[]; orphanedTxs: Hex[]; at: number }[];
  /** Counts of what was done, by action name. */
  actions: Record<string, number>;
  /** Yield assets: chainId -> slug -> day -> the asset's rate (6 decimals, USD) at the end of that day. */
  yieldPrices: Record<string, Record<string, Record<string, string>>>;
  /** chainId -> share -> slug -> day -> yield-asset balance the vault held at the end of that day (days with a change). */
  yieldHoldings: Record<string, Record<string, Record<string, Record<string, string>>>>;
  /** share -> day -> compositionApy, from the primary chain's yield prices and the holdings on every chain,
   * for every day from the first yield price to the last simulated day. */
  compositionApy: Record<string, Record<string, CompositionApyTruth>>;
  /** The Solana side, when the devnet runs one. */
  solana?: SolanaTruthJson;
}
