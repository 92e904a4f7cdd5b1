/**
 * What the per-role mappers of `map.ts` share: the mapping context and result, the
 * identity fields of a chain event, and `VaultScope`, the record builders for one
 * decoded log and one vault it concerns.
 */
import type { FamilyName } from '../../schemas/families.ts';
import type { ActivityRecord, FeeRecord, RedemptionRecord } from '../../schemas/records.ts';
import { type AssetInfo, assetInfo, type ChainContracts, type WatchedContract } from './contracts.ts';
import type { DecodedLog } from './decode.ts';

/** One record to publish. */
export interface Emitted {
  family: FamilyName;
  record: Record<string, unknown> & { vault?: string };
}

export interface MapContext {
  contracts: ChainContracts;
  /** Block timestamp (Unix seconds) of an ingested block. */
  blockTime(blockNumber: number): number;
  /** On-chain `decimals()` of tokens the registry does not describe. */
  decimals: Map<string, number>;
  /** `accountantState().isPaused` right after the block (the pause gotcha: no event says so). */
  pausedAfter(accountant: string, blockNumber: number): boolean;
  /** The fee a NestVault `Deposit` charged, in its asset (`deposit-fees.ts`); absent: none known. */
  depositFee?(deposit: DecodedLog): bigint | undefined;
}

export interface MapResult {
  emitted: Emitted[];
  /** Decoded events with no family to publish into, by name. */
  unpublished: Map<string, number>;
}

export const ZERO = '0x0000000000000000000000000000000000000000';
/** NestVault requests have no deadline; the latest `DateTime` keeps them from reading as expired. */
export const NO_DEADLINE = 4_294_967_295;

export type Args = Record<string, any>;
export type Vault = WatchedContract['vaults'][number];

/** The identity fields every chain event carries, for the event of `d`. */
export function chainFields(d: DecodedLog, ctx: Pick<MapContext, 'contracts' | 'blockTime'>) {
  return {
    chainId: ctx.contracts.chain.chainId,
    blockNumber: d.log.blockNumber,
    blockHash: d.log.blockHash,
    blockTimestamp: ctx.blockTime(d.log.blockNumber),
    txHash: d.log.transactionHash,
    logIndex: d.log.logIndex,
    removed: false,
  };
}

type Base = ReturnType<typeof chainFields> & { vault: string };

/** What the whole transaction says, which some events of it need (see `map.ts`). */
export interface TxFacts {
  tx: DecodedLog[];
  /** Whether the transaction has an event of `role` named one of `events`. */
  has(role: string, ...events: string[]): boolean;
  tellerDeposit: boolean;
  nestDeposit: boolean;
  nestExit: boolean;
}

/** The facts of `tx`. */
export function txFacts(tx: DecodedLog[]): TxFacts {
  const has = (role: string, ...events: string[]) =>
    tx.some((d) => d.role === role && events.includes(d.event));
  return {
    tx,
    has,
    tellerDeposit: has('teller', 'Deposit'),
    nestDeposit: has('nestVault', 'Deposit'),
    nestExit: has('nestVault', 'Withdraw', 'InstantRedeem', 'RedeemFulfilled'),
  };
}

/**
 * The records one decoded log makes for one vault: each carries the event's identity
 * (`chainFields`) and the vault's slug. A role's mapper returns true when the event is
 * covered (reported by another event, see `map.ts`): no record and not unpublished.
 */
export type RoleMapper = (s: VaultScope, facts: TxFacts) => boolean;

export class VaultScope {
  readonly base: Base;
  /** The vault's share address, lower-cased. */
  readonly share: string;
  readonly a: Args;

  constructor(
    readonly ctx: MapContext,
    readonly d: DecodedLog,
    readonly c: WatchedContract,
    readonly vault: Vault,
    private readonly out: MapResult,
  ) {
    this.base = { ...chainFields(d, ctx), vault: vault.slug };
    this.share = vault.vaultAddress.toLowerCase();
    this.a = d.args as Args;
  }

  asset(token: string): AssetInfo {
    return assetInfo(this.vault, this.ctx.contracts.chain.chainId, token, this.ctx.decimals);
  }

  emit(family: FamilyName, record: Record<string, unknown>): void {
    this.out.emitted.push({ family, record: { ...this.base, ...record } });
  }

  activity(
    kind: ActivityRecord['kind'],
    user: string,
    shares: bigint,
    assets: bigint,
    assetsToken: string,
  ): void {
    this.emit('activity', {
      kind,
      user,
      shares: shares.toString(),
      sharesToken: this.share,
      assets: assets.toString(),
      assetsToken,
      assetsDecimals: this.asset(assetsToken).decimals,
    });
  }

  fee(kind: FeeRecord['kind'], token: string, amount: bigint): void {
    if (amount <= 0n) return;
    const info = this.asset(token);
    this.emit('fees', {
      kind,
      token,
      amount: amount.toString(),
      decimals: info.decimals,
      usdPrice: info.usdPrice,
    });
  }

  redemption(r: Omit<RedemptionRecord, keyof Base | 'wantDecimals' | 'queue'>): void {
    this.emit('redemptions', { ...r, queue: this.c.address, wantDecimals: this.asset(r.wantToken).decimals });
  }
}

/** Want-token units paid per whole share (`10^shareDecimals` raw shares), rounded down. */
export function unitPrice(want: bigint, shares: bigint, shareDecimals: number): bigint {
  return shares === 0n ? 0n : (want * 10n ** BigInt(shareDecimals)) / shares;
}
