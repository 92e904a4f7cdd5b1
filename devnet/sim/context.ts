/** What every simulator action works with on one chain. */
import type { Address } from 'viem';
import type { HDAccount } from 'viem/accounts';
import type { DevnetAddresses, VaultAddresses, VaultSpec } from '../deploy.ts';
import type { SolanaSim } from '../solana/sim.ts';
import type { SimChain } from './chain.ts';
import type { Rng } from './rng.ts';
import type { GroundTruth } from './truth.ts';

/** NestVault fee ids and the rates the simulator sets (1e6 = 100%). */
export const FEE = { instantRedemption: 0, deposit: 1, redemption: 2 } as const;
export const FEE_RATES: Record<keyof typeof FEE, { rate: bigint; flat: bigint }> = {
  instantRedemption: { rate: 1_500n, flat: 0n },
  deposit: { rate: 500n, flat: 0n },
  redemption: { rate: 1_000n, flat: 10_000n },
};

/** One share unit (every devnet share and the asset have 6 decimals). */
export const ONE = 1_000_000n;

export interface VaultState {
  spec: VaultSpec;
  addrs: VaultAddresses;
  /** The accountant rate the simulator last set. */
  rate: bigint;
  lastRateUpdate: number;
  paused: boolean;
}

export interface SimContext {
  chain: SimChain;
  primary: boolean;
  /** Every simulated chain (bridge destinations). */
  chainIds: number[];
  addrs: DevnetAddresses;
  truth: GroundTruth;
  rng: Rng;
  deployer: HDAccount;
  holders: HDAccount[];
  vaults: VaultState[];
  /** Bridged shares sent before this time may be delivered here (the start of the day or tick, so that
   * what arrives does not depend on how the chains' tasks interleave). */
  deliverBefore: number;
  /** Simulated time of the next action (block time in live mode). */
  now: () => number;
  /** The Solana side (on the primary chain's context only): mint flows start and end there. */
  solana?: SolanaSim;
}

/** The NestVault fee of `gross` for fee kind `kind`: flat + gross * rate / 1e6. */
export function feeOf(kind: keyof typeof FEE, gross: bigint): bigint {
  const f = FEE_RATES[kind];
  return f.flat + (gross * f.rate) / 1_000_000n;
}

/** A holder with a positive balance of the vault's share on this chain (by the ground truth), if any. */
export function holderWithShares(ctx: SimContext, v: VaultState, min = 1n): HDAccount | undefined {
  const rich = ctx.holders.filter(
    (h) => ctx.truth.balanceOf(ctx.chain.chainId, v.addrs.share, h.address) >= min,
  );
  return rich.length ? ctx.rng.pick(rich) : undefined;
}

/** `balance * pct / 100`, at least 1 unit. */
export function part(balance: bigint, pct: number): bigint {
  const p = (balance * BigInt(pct)) / 100n;
  return p > 0n ? p : 1n;
}

export type Addressed = { address: Address };
