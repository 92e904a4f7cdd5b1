/**
 * What the accountant's events do not say, read from `accountantState()` at the
 * blocks of its `ExchangeRateUpdated` events:
 * - `isPaused` after the update (an out-of-bounds update pauses without `Paused()`);
 * - the fees accrued by the update, as the rise of `feesOwedInBase` since the previous
 *   update, published on the update's own log identity, so a reorg retracts it with the
 *   update. Legacy accountants accrue only inside `updateExchangeRate` and `claimFees`
 *   resets the owed amount to zero, so after a `FeesClaimed` the accrual is counted from
 *   zero. On Veda accountants the platform and performance fees accrue into the same
 *   `feesOwedInBase`: both are reported as MANAGEMENT, there being no way to split them
 *   from the state.
 * - A Nest hub accountant's rise is split as its fee logic accrues it
 *   (`NestHubAccountant._accrueManagementFees`): the management fee is recomputed from
 *   the state just before the update's block and the state after it (`hubManagementFee`);
 *   the rest of the rise is the performance fee (the gain above the hurdle-adjusted
 *   high-water mark, and any holdback reserve crystallized by the update). A management
 *   fee accrued between two updates (Nest's `updateManagementFee` accrues at the old fee)
 *   counts as management. The PERFORMANCE record needs an identity of its own: it is
 *   published on the update's log with `logIndex + PERFORMANCE_LOG_OFFSET`.
 */
import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import type { FeeRecord } from '../../schemas/records.ts';
import { accountantViews } from './abis.ts';
import {
  type AccountantState,
  accountantStateCall,
  decodeAccountantState,
  type HubUpdateMark,
  isHubAccountant,
} from './accountant.ts';
import type { ChainReader } from './chain.ts';
import { decimalText } from './contracts.ts';
import type { DecodedLog } from './decode.ts';
import { chainFields, type Emitted, type MapContext } from './map-context.ts';

/** `feesOwedInBase` at the accountant's last seen update (kept in the checkpoint). */
export interface OwedMark {
  block: number;
  amount: string;
  /** A `FeesClaimed` came after that update: the owed amount restarted from zero. */
  claimed: boolean;
}

export interface AccrualResult {
  /** `${accountant}:${block}` to `isPaused` after that block. */
  paused: Map<string, boolean>;
  fees: Emitted[];
}

const BASE_CALL = encodeFunctionData({ abi: accountantViews, functionName: 'base' });
/** Added to the update's log index to identify its PERFORMANCE fee record (log indices stay far below). */
export const PERFORMANCE_LOG_OFFSET = 2 ** 30;
const DENOMINATOR = 1_000_000n;
const YEAR = 365n * 86_400n;

/**
 * The management fee a hub's `updateExchangeRate` accrued, from its state before (`before`)
 * and after (`after`: the update stored its gross rate, supply and time) and one share
 * (10 ** share decimals): `_accrueManagementFees`, rounding down at the same steps.
 */
export function hubManagementFee(before: HubUpdateMark, after: HubUpdateMark, oneShare: bigint): bigint {
  const total = after.totalSharesLastUpdate;
  if (total === 0n) return 0n;
  const gross = after.lastGrossRate;
  const basis = minOf(gross, before.lastGrossRate);
  const dt = after.lastUpdateTimestamp - before.lastUpdateTimestamp;
  const discount = (basis * BigInt(before.managementFee) * dt) / (DENOMINATOR * YEAR);
  const shareBasis = minOf(before.totalSharesLastUpdate, total);
  const haircut = (discount * shareBasis) / total;
  return (haircut * total) / oneShare;
}

/** Reads the accountant states the range's rate events need and derives pause flags and fee accruals. */
export async function accrue(
  reader: ChainReader,
  ctx: Pick<MapContext, 'contracts' | 'blockTime'>,
  decoded: DecodedLog[],
  owed: Record<string, OwedMark>,
  baseOf: Map<string, string>,
): Promise<AccrualResult> {
  const relevant = decoded.filter(
    (d) => d.role === 'accountant' && (d.event === 'ExchangeRateUpdated' || d.event === 'FeesClaimed'),
  );
  const out: AccrualResult = { paused: new Map(), fees: [] };
  const updates = relevant.filter((d) => d.event === 'ExchangeRateUpdated');
  if (!updates.length) {
    for (const d of relevant) markClaim(owed, d);
    return out;
  }
  const wanted = new Map<number, Set<string>>();
  const want = (block: number, acc: string) => wanted.set(block, (wanted.get(block) ?? new Set()).add(acc));
  const hub = (acc: string) => ctx.contracts.byAddress.get(acc)?.vaults.some(isHubAccountant) ?? false;
  for (const d of updates) {
    const acc = d.log.address.toLowerCase();
    want(d.log.blockNumber, acc);
    // A hub's fee split needs its state just before the update's block.
    if (hub(acc) || (!owed[acc] && d === updates.find((u) => u.log.address.toLowerCase() === acc)))
      want(d.log.blockNumber - 1, acc);
  }
  const states = new Map<string, AccountantState | undefined>();
  for (const [block, accs] of wanted) {
    const list = [...accs];
    const calls = list.flatMap((a) => [
      accountantStateCall(a, hub(a)),
      ...(baseOf.has(a) ? [] : [{ target: a as Hex, data: BASE_CALL }]),
    ]);
    const answers = await reader.read(calls, block);
    let k = 0;
    for (const a of list) {
      states.set(`${a}:${block}`, decodeAccountantState(answers[k++]));
      if (baseOf.has(a)) continue;
      const base = answers[k++];
      baseOf.set(
        a,
        base ? decodeFunctionResult({ abi: accountantViews, functionName: 'base', data: base }) : a,
      );
    }
  }
  for (const acc of new Set(updates.map((u) => u.log.address.toLowerCase()))) {
    if (owed[acc]) continue;
    const first = updates.find((u) => u.log.address.toLowerCase() === acc) as DecodedLog;
    const before = states.get(`${acc}:${first.log.blockNumber - 1}`);
    if (before)
      owed[acc] = {
        block: first.log.blockNumber - 1,
        amount: before.feesOwedInBase.toString(),
        claimed: false,
      };
  }
  relevant.forEach((d, i) => {
    if (d.event === 'FeesClaimed') {
      markClaim(owed, d);
      return;
    }
    const acc = d.log.address.toLowerCase();
    const state = states.get(`${acc}:${d.log.blockNumber}`);
    if (!state) return;
    out.paused.set(`${acc}:${d.log.blockNumber}`, state.isPaused);
    // The state is read after the block: only its last update of this accountant sees the accrual.
    const later = relevant
      .slice(i + 1)
      .some(
        (x) =>
          x.event === 'ExchangeRateUpdated' &&
          x.log.blockNumber === d.log.blockNumber &&
          x.log.address.toLowerCase() === acc,
      );
    if (later) return;
    const mark = owed[acc];
    const accrued = state.feesOwedInBase - (mark && !mark.claimed ? BigInt(mark.amount) : 0n);
    owed[acc] = { block: d.log.blockNumber, amount: state.feesOwedInBase.toString(), claimed: false };
    if (!mark || accrued <= 0n) return;
    const c = ctx.contracts.byAddress.get(acc);
    for (const vault of c?.vaults ?? []) {
      const before = states.get(`${acc}:${d.log.blockNumber - 1}`);
      const split =
        state.hub && before?.hub
          ? splitHubAccrual(accrued, before, state, mark, 10n ** BigInt(vault.decimals))
          : { MANAGEMENT: accrued, PERFORMANCE: 0n };
      for (const kind of ['MANAGEMENT', 'PERFORMANCE'] as const) {
        if (split[kind] <= 0n) continue;
        const id = chainFields(d, ctx);
        out.fees.push({
          family: 'fees',
          record: {
            ...id,
            logIndex: kind === 'PERFORMANCE' ? id.logIndex + PERFORMANCE_LOG_OFFSET : id.logIndex,
            vault: vault.slug,
            kind,
            token: (baseOf.get(acc) ?? acc).toLowerCase(),
            amount: split[kind].toString(),
            decimals: vault.baseAsset.decimals,
            usdPrice: decimalText(vault.baseAsset.usdPrice),
          },
        });
      }
    }
  });
  return out;
}

const minOf = (a: bigint, b: bigint): bigint => (a < b ? a : b);

/**
 * `accrued` (the rise since `mark`) of a hub split by kind: the update's management fee
 * recomputed from the states around its block, plus what accrued between updates while
 * no claim intervened (`updateManagementFee`); the rest is performance fee.
 */
function splitHubAccrual(
  accrued: bigint,
  before: AccountantState,
  after: AccountantState,
  mark: OwedMark,
  oneShare: bigint,
): Record<Extract<FeeRecord['kind'], 'MANAGEMENT' | 'PERFORMANCE'>, bigint> {
  const between = mark.claimed ? 0n : before.feesOwedInBase - BigInt(mark.amount);
  let management = hubManagementFee(before.hub as HubUpdateMark, after.hub as HubUpdateMark, oneShare);
  if (between > 0n) management += between;
  if (management > accrued) management = accrued;
  return { MANAGEMENT: management, PERFORMANCE: accrued - management };
}

function markClaim(owed: Record<string, OwedMark>, d: DecodedLog): void {
  const mark = owed[d.log.address.toLowerCase()];
  if (mark && d.event === 'FeesClaimed' && d.log.blockNumber >= mark.block) mark.claimed = true;
}
