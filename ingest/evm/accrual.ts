/**
 * What the accountant's events do not say, read from `accountantState()` at the
 * blocks of its `ExchangeRateUpdated` events:
 * - `isPaused` after the update (an out-of-bounds update pauses without `Paused()`);
 * - the fees accrued by the update, as the rise of `feesOwedInBase` since the previous
 *   update, published as a MANAGEMENT fee on the update's own log identity, so a reorg
 *   retracts it with the update. Legacy accountants accrue only inside
 *   `updateExchangeRate` and `claimFees` resets the owed amount to zero, so after a
 *   `FeesClaimed` the accrual is counted from zero. On Veda accountants the platform
 *   and performance fees accrue into the same `feesOwedInBase`: both are reported as
 *   MANAGEMENT, there being no way to split them from the state.
 */
import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { accountantViews } from './abis.ts';
import {
  type AccountantState,
  accountantStateCall,
  decodeAccountantState,
  isHubAccountant,
} from './accountant.ts';
import type { ChainReader } from './chain.ts';
import { decimalText } from './contracts.ts';
import type { DecodedLog } from './decode.ts';
import { chainFields, type Emitted, type MapContext } from './map.ts';

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
  for (const d of updates) {
    const acc = d.log.address.toLowerCase();
    want(d.log.blockNumber, acc);
    if (!owed[acc] && d === updates.find((u) => u.log.address.toLowerCase() === acc))
      want(d.log.blockNumber - 1, acc);
  }
  const states = new Map<string, AccountantState | undefined>();
  for (const [block, accs] of wanted) {
    const list = [...accs];
    const calls = list.flatMap((a) => [
      accountantStateCall(a, ctx.contracts.byAddress.get(a)?.vaults.some(isHubAccountant) ?? false),
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
    for (const vault of c?.vaults ?? [])
      out.fees.push({
        family: 'fees',
        record: {
          ...chainFields(d, ctx),
          vault: vault.slug,
          kind: 'MANAGEMENT',
          token: (baseOf.get(acc) ?? acc).toLowerCase(),
          amount: accrued.toString(),
          decimals: vault.baseAsset.decimals,
          usdPrice: decimalText(vault.baseAsset.usdPrice),
        },
      });
  });
  return out;
}

function markClaim(owed: Record<string, OwedMark>, d: DecodedLog): void {
  const mark = owed[d.log.address.toLowerCase()];
  if (mark && d.event === 'FeesClaimed' && d.log.blockNumber >= mark.block) mark.claimed = true;
}
