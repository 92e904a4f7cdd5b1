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
 */
import { toEventSelector } from 'viem';
import type { FamilyName } from '../../schemas/families.ts';
import type { ActivityRecord, FeeRateRecord, FeeRecord, RedemptionRecord } from '../../schemas/records.ts';
import { type AssetInfo, assetInfo, type ChainContracts, type WatchedContract } from './contracts.ts';
import type { ContractRole, DecodedLog } from './decode.ts';

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

/** The accountant fee-rate events by topic0: canonical signature, fee kind and rate denominator. */
export const ACCOUNTANT_FEE_EVENTS: ReadonlyMap<
  string,
  { event: string; kind: FeeRateRecord['kind']; scale: 10_000 | 1_000_000 }
> = new Map(
  (
    [
      ['PlatformFeeUpdated(uint16,uint16)', 'PLATFORM', 10_000],
      ['PerformanceFeeUpdated(uint16,uint16)', 'PERFORMANCE', 10_000],
      ['ManagementFeeUpdated(uint16,uint16)', 'MANAGEMENT', 10_000],
      ['ManagementFeeUpdated(uint32,uint32)', 'MANAGEMENT', 1_000_000],
      ['PerformanceFeeUpdated(uint32,uint32)', 'PERFORMANCE', 1_000_000],
    ] as const
  ).map(([event, kind, scale]) => [toEventSelector(event), { event, kind, scale }]),
);
export const SET_FEE_EVENT = 'SetFee(uint8,(uint32,uint256),(uint32,uint256))';
/** NestVault `Fees` enum (reference section 6): the kind of a `SetFee`'s `f`. */
export const NEST_FEE_KINDS: readonly FeeRateRecord['kind'][] = [
  'INSTANT_REDEMPTION',
  'DEPOSIT',
  'REDEMPTION',
];

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

const ZERO = '0x0000000000000000000000000000000000000000';
/** NestVault requests have no deadline; the latest `DateTime` keeps them from reading as expired. */
export const NO_DEADLINE = 4_294_967_295;

type Args = Record<string, any>;

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
  const has = (role: string, ...events: string[]) =>
    tx.some((d) => d.role === role && events.includes(d.event));
  const tellerDeposit = has('teller', 'Deposit');
  const nestDeposit = has('nestVault', 'Deposit');
  const nestExit = has('nestVault', 'Withdraw', 'InstantRedeem', 'RedeemFulfilled');
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
    const a = d.args as Args;
    // A queue serves every vault; the offered share names the one a request is about.
    const targets = c.role === 'queue' ? [ctx.contracts.byShare.get(a.offerToken)] : c.vaults;
    for (const vault of targets) {
      if (!vault) continue;
      const base = { ...chainFields(d, ctx), vault: vault.slug };
      const share = vault.vaultAddress.toLowerCase();
      const asset = (token: string): AssetInfo =>
        assetInfo(vault, ctx.contracts.chain.chainId, token, ctx.decimals);
      const emit = (family: FamilyName, record: Record<string, unknown>) =>
        out.emitted.push({ family, record: { ...base, ...record } });
      const activity = (
        kind: ActivityRecord['kind'],
        user: string,
        shares: bigint,
        assets: bigint,
        assetsToken: string,
      ) =>
        emit('activity', {
          kind,
          user,
          shares: shares.toString(),
          sharesToken: share,
          assets: assets.toString(),
          assetsToken,
          assetsDecimals: asset(assetsToken).decimals,
        });
      const fee = (kind: FeeRecord['kind'], token: string, amount: bigint) => {
        if (amount <= 0n) return;
        const info = asset(token);
        emit('fees', {
          kind,
          token,
          amount: amount.toString(),
          decimals: info.decimals,
          usdPrice: info.usdPrice,
        });
      };
      const redemption = (r: Omit<RedemptionRecord, keyof typeof base | 'wantDecimals' | 'queue'>) =>
        emit('redemptions', { ...r, queue: c.address, wantDecimals: asset(r.wantToken).decimals });

      switch (`${d.role}.${d.event}`) {
        case 'share.Enter':
          if (a.asset !== ZERO && !tellerDeposit && !nestDeposit)
            activity('DEPOSIT', a.to, a.shares, a.amount, a.asset);
          else covered = true;
          break;
        case 'share.Exit':
          if (a.asset !== ZERO && !nestExit) activity('WITHDRAW', a.from, a.shares, a.amount, a.asset);
          else covered = true;
          break;
        case 'share.OFTSent':
        case 'oft.OFTSent':
          activity('BRIDGE_OUT', a.fromAddress, a.amountSentLD, 0n, share);
          break;
        case 'share.OFTReceived':
        case 'oft.OFTReceived':
          activity('BRIDGE_IN', a.toAddress, a.amountReceivedLD, 0n, share);
          break;
        case 'teller.Deposit':
          activity(
            'DEPOSIT',
            depositor(ctx, tx, share, a.receiver),
            a.shareAmount,
            a.depositAmount,
            a.depositAsset,
          );
          break;
        case 'teller.MessageSent': {
          const burn = tx.find((x) => x.event === 'Exit' && x.log.address.toLowerCase() === share);
          activity('BRIDGE_OUT', (burn?.args as Args | undefined)?.from ?? a.to, a.shareAmount, 0n, share);
          break;
        }
        case 'teller.MessageReceived':
          activity('BRIDGE_IN', a.to, a.shareAmount, 0n, share);
          break;
        case 'accountant.ExchangeRateUpdated':
          emit('rates', {
            accountant: c.address,
            rate: a.newRate.toString(),
            rateDecimals: vault.baseAsset.decimals,
            source: 'EVENT',
            isPaused: ctx.pausedAfter(c.address, d.log.blockNumber),
          });
          break;
        case 'accountant.FeesClaimed':
        case 'nestVault.FeeClaimed':
          fee('CLAIMED', a.feeAsset ?? c.asset ?? ZERO, a.amount);
          break;
        case 'accountant.PlatformFeeUpdated':
        case 'accountant.PerformanceFeeUpdated':
        case 'accountant.ManagementFeeUpdated': {
          const shape = ACCOUNTANT_FEE_EVENTS.get(d.log.topics[0].toLowerCase());
          if (shape)
            emit('fee_rates', {
              contract: c.address,
              event: shape.event,
              kind: shape.kind,
              oldRate: Number(a.oldFee),
              newRate: Number(a.newFee),
              rateScale: shape.scale,
              oldFlat: '0',
              newFlat: '0',
            });
          break;
        }
        case 'nestVault.SetFee': {
          const kind = NEST_FEE_KINDS[Number(a.f)];
          if (kind)
            emit('fee_rates', {
              contract: c.address,
              event: SET_FEE_EVENT,
              kind,
              oldRate: Number(a.oldFee.rate),
              newRate: Number(a.fee.rate),
              rateScale: 1_000_000,
              oldFlat: a.oldFee.flat.toString(),
              newFlat: a.fee.flat.toString(),
            });
          break;
        }
        case 'nestVault.OperatorSet':
        case 'operatorRegistry.OperatorSet':
          emit('operators', {
            contract: c.address,
            source: d.role === 'operatorRegistry' ? 'REGISTRY' : 'VAULT',
            controller: a.controller,
            operator: a.operator,
            approved: a.approved,
          });
          break;
        case 'authority.UserRoleUpdated':
          emit('roles', { authority: c.address, user: a.user, role: a.role, enabled: a.enabled });
          break;
        case 'queue.AtomicRequestUpdated': {
          const id = { requestId: `${a.user}:${a.offerToken}:${a.wantToken}`, user: a.user };
          const tokens = { offerToken: a.offerToken, wantToken: a.wantToken };
          const deadline = a.deadline > BigInt(NO_DEADLINE) ? NO_DEADLINE : Number(a.deadline);
          // A cancel is an update to zero: the queue keeps one request per (user, offer, want).
          const kind = a.amount === 0n ? 'CANCEL' : 'REQUEST';
          redemption({
            kind,
            ...id,
            ...tokens,
            amount: a.amount.toString(),
            minPrice: a.minPrice.toString(),
            deadline,
          });
          if (kind === 'REQUEST')
            activity(
              'REDEEM_REQUEST',
              a.user,
              a.amount,
              ((a.amount as bigint) * (a.minPrice as bigint)) / 10n ** BigInt(vault.decimals),
              a.wantToken,
            );
          break;
        }
        case 'queue.AtomicRequestFulfilled':
          redemption({
            kind: 'FILL',
            requestId: `${a.user}:${a.offerToken}:${a.wantToken}`,
            user: a.user,
            offerToken: a.offerToken,
            wantToken: a.wantToken,
            amount: a.offerAmountSpent.toString(),
            minPrice: unitPrice(a.wantAmountReceived, a.offerAmountSpent, vault.decimals).toString(),
            deadline: 0,
          });
          break;
        case 'nestVault.Deposit':
          activity('DEPOSIT', a.receiver, a.shares, a.assets, c.asset || ZERO);
          fee('DEPOSIT', c.asset || ZERO, ctx.depositFee?.(d) ?? 0n);
          break;
        case 'nestVault.RedeemRequest':
          activity('REDEEM_REQUEST', a.owner, a.shares, 0n, c.asset || ZERO);
          redemption(nestRequest('REQUEST', a.controller, a.shares, share, c.asset || ZERO));
          break;
        case 'nestVault.RedeemUpdated':
          redemption(
            nestRequest(
              a.newShares ? 'REQUEST' : 'CANCEL',
              a.controller,
              a.newShares,
              share,
              c.asset || ZERO,
            ),
          );
          break;
        case 'nestVault.RedeemFulfilled': {
          const r = nestRequest('FILL', a.controller, a.shares, share, c.asset || ZERO);
          redemption({
            ...r,
            minPrice: unitPrice(a.assets, a.shares, vault.decimals).toString(),
            deadline: 0,
          });
          fee('REDEMPTION', c.asset || ZERO, (a.assets as bigint) - (a.actualAssets as bigint));
          break;
        }
        case 'nestVault.Withdraw':
          if (!has('nestVault', 'InstantRedeem'))
            activity('WITHDRAW', a.controller, a.shares, a.assets, c.asset || ZERO);
          break;
        case 'nestVault.InstantRedeem':
          activity('INSTANT_REDEEM', a.receiver, a.shares, a.postFeeAmount, c.asset || ZERO);
          fee('INSTANT_REDEMPTION', c.asset || ZERO, (a.assets as bigint) - (a.postFeeAmount as bigint));
          break;
      }
    }
    if (out.emitted.length === before && !covered)
      out.unpublished.set(`${d.role}.${d.event}`, (out.unpublished.get(`${d.role}.${d.event}`) ?? 0) + 1);
  }
}

/** The `transfers` record of a share `Transfer` for `vault` (the fields of `chainFields`, flat). */
function transferRecord(ctx: MapContext, d: DecodedLog, vault: WatchedContract['vaults'][number]) {
  const { log } = d;
  const a = d.args as Args;
  return {
    chainId: ctx.contracts.chain.chainId,
    blockNumber: log.blockNumber,
    blockHash: log.blockHash,
    blockTimestamp: ctx.blockTime(log.blockNumber),
    txHash: log.transactionHash,
    logIndex: log.logIndex,
    removed: false,
    vault: vault.slug,
    token: shareOf(vault),
    from: a.from as string,
    to: a.to as string,
    amount: (a.amount as bigint).toString(),
    // eth_getLogs gives it and the ingester keeps it on the log (ingest/evm/chain.ts parseLog);
    // a log built without one (tests, fixtures) publishes the Avro default, unknown.
    transactionIndex: log.transactionIndex ?? -1,
  };
}

const SHARES = new WeakMap<object, string>();
/** The vault's share address, lower-cased (once per vault). */
function shareOf(vault: WatchedContract['vaults'][number]): string {
  let share = SHARES.get(vault);
  if (share === undefined) {
    share = vault.vaultAddress.toLowerCase();
    SHARES.set(vault, share);
  }
  return share;
}

/** The real depositor: the proxy's share recipient when the teller's receiver is a PredicateProxy. */
function depositor(ctx: MapContext, tx: DecodedLog[], share: string, receiver: string): string {
  if (!ctx.contracts.predicateProxies.has(receiver)) return receiver;
  const onward = tx.find(
    (x) =>
      x.event === 'Transfer' && x.log.address.toLowerCase() === share && (x.args as Args).from === receiver,
  );
  return onward ? (onward.args as Args).to : receiver;
}

/** Want-token units paid per whole share (`10^shareDecimals` raw shares), rounded down. */
function unitPrice(want: bigint, shares: bigint, shareDecimals: number): bigint {
  return shares === 0n ? 0n : (want * 10n ** BigInt(shareDecimals)) / shares;
}

function nestRequest(
  kind: RedemptionRecord['kind'],
  controller: string,
  shares: bigint,
  share: string,
  want: string,
) {
  // ERC-7540 requestId is always 0: a controller has one request per vault.
  return {
    kind,
    requestId: controller,
    user: controller,
    offerToken: share,
    wantToken: want,
    amount: shares.toString(),
    minPrice: '0',
    deadline: NO_DEADLINE,
  };
}
