/**
 * Decoded logs to event records, one transaction at a time, because some events
 * only make sense beside the others of their transaction:
 * - a teller `Deposit` whose receiver is a PredicateProxy takes its user from the
 *   share `Transfer(proxy -> user)` of the same transaction;
 * - the vault's `Enter`/`Exit` are the deposit/withdrawal only when no more specific
 *   event (teller or NestVault `Deposit`, NestVault `Withdraw`/`InstantRedeem`) is in
 *   the transaction; with the zero asset they are a bridge mint/burn, which the
 *   cross-chain teller's `MessageSent/MessageReceived` (or the OFT events) report.
 * `OperatorSet` (of the chain's OperatorRegistry, stored once per vault of the chain, and
 * of each NestVault) goes to `operators`; the fee-rate settings (accountant
 * `PlatformFeeUpdated` / `PerformanceFeeUpdated` / `ManagementFeeUpdated`, uint16 bps or
 * uint32 1e6, and NestVault `SetFee`) go to `fee_rates`; `SetFee` also prices the deposits
 * after it (`deposit-fees.ts`).
 * Deliberately not published, and not counted as unpublished: an `Enter`/`Exit` that a more
 * specific event of its transaction reports (teller or NestVault `Deposit`, NestVault
 * `Withdraw`/`InstantRedeem`/`RedeemFulfilled`) or that moves the zero asset (a bridge
 * mint/burn, reported by `MessageSent/MessageReceived` or the OFT events).
 * Events with no home in the event families (approvals, bound and delay settings, asset
 * lists, role capabilities, pauses) are not fetched (`MAPPED_EVENTS`); one that arrives all
 * the same is decoded, counted in `unpublished` (shown per chain in `/status`), not published.
 *
 * This file holds what is fetched (`MAPPED_EVENTS`) and the per-transaction dispatch; the
 * records of each contract role are built in `map-<role>.ts` (`map-share.ts`: share, OFT
 * and teller; `map-accountant.ts`; `map-queue.ts`; `map-nest.ts`; `map-permissions.ts`:
 * authority and operator registry), share transfers in `map-transfers.ts`, on the shared
 * context and record builders of `map-context.ts`.
 */
import type { WatchedContract } from './contracts.ts';
import type { ContractRole, DecodedLog } from './decode.ts';
import { mapAccountant } from './map-accountant.ts';
import {
  type Args,
  type MapContext,
  type MapResult,
  type RoleMapper,
  type TxFacts,
  txFacts,
  VaultScope,
} from './map-context.ts';
import { mapNestVault } from './map-nest.ts';
import { mapAuthority, mapOperatorRegistry } from './map-permissions.ts';
import { mapQueue } from './map-queue.ts';
import { mapOft, mapShare, mapTeller } from './map-share.ts';
import { transferRecord } from './map-transfers.ts';

/**
 * The events that have a family to be published into, by contract role: the only ones
 * asked of the node (approvals and settings, frequent on a share token, are not fetched).
 */
export const MAPPED_EVENTS: Record<ContractRole, readonly string[]> = {
  share: ['Transfer', 'Enter', 'Exit', 'OFTSent', 'OFTReceived'],
  oft: ['OFTSent', 'OFTReceived'],
  teller: ['Deposit', 'MessageSent', 'MessageReceived'],
  accountant: [
    'ExchangeRateUpdated',
    'FeesClaimed',
    'PlatformFeeUpdated',
    'PerformanceFeeUpdated',
    'ManagementFeeUpdated',
  ],
  authority: ['UserRoleUpdated'],
  queue: ['AtomicRequestUpdated', 'AtomicRequestFulfilled'],
  nestVault: [
    'Deposit',
    'RedeemRequest',
    'RedeemUpdated',
    'RedeemFulfilled',
    'Withdraw',
    'InstantRedeem',
    'FeeClaimed',
    'SetFee',
    'OperatorSet',
  ],
  operatorRegistry: ['OperatorSet'],
};

/** The records of each contract role's events. */
const MAPPERS: Record<ContractRole, RoleMapper> = {
  share: mapShare,
  oft: mapOft,
  teller: mapTeller,
  accountant: mapAccountant,
  authority: mapAuthority,
  queue: mapQueue,
  nestVault: mapNestVault,
  operatorRegistry: mapOperatorRegistry,
};

/** Maps every decoded log of a block range; `decoded` is in chain order. */
export function mapLogs(ctx: MapContext, decoded: DecodedLog[]): MapResult {
  const out: MapResult = { emitted: [], unpublished: new Map() };
  let start = 0;
  for (let i = 1; i <= decoded.length; i++) {
    if (i < decoded.length && decoded[i].log.transactionHash === decoded[start].log.transactionHash) continue;
    mapTransaction(ctx, decoded.slice(start, i), out);
    start = i;
  }
  return out;
}

function mapTransaction(ctx: MapContext, tx: DecodedLog[], out: MapResult): void {
  // Built at the first log that is not a share transfer: a transaction of transfers only needs none.
  let facts: TxFacts | undefined;
  for (const d of tx) {
    const c = ctx.contracts.byAddress.get(d.log.address.toLowerCase()) as WatchedContract;
    // Share transfers are nearly every log of a backfill: one flat record each, no helper built.
    if (d.role === 'share' && d.event === 'Transfer' && c.vaults.length) {
      for (const vault of c.vaults)
        out.emitted.push({ family: 'transfers', record: transferRecord(ctx, d, vault) });
      continue;
    }
    const before = out.emitted.length;
    // Reported by another event (see the file's comment): no record, and not "unpublished" either.
    let covered = false;
    const mapper = MAPPERS[d.role];
    // A queue serves every vault; the offered share names the one a request is about.
    const targets = c.role === 'queue' ? [ctx.contracts.byShare.get((d.args as Args).offerToken)] : c.vaults;
    for (const vault of targets) {
      if (!vault) continue;
      facts ??= txFacts(tx);
      if (mapper(new VaultScope(ctx, d, c, vault, out), facts)) covered = true;
    }
    if (out.emitted.length === before && !covered)
      out.unpublished.set(`${d.role}.${d.event}`, (out.unpublished.get(`${d.role}.${d.event}`) ?? 0) + 1);
  }
}
