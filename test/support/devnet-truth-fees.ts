/**
 * Fees from the ground truth: per day and kind, the simulator's weekly claims, and the
 * accrual periods between them.
 */
import type { FeeKind, GroundTruthJson } from '../../devnet/sim/truth-json.ts';
import { addDays, DAY, deploymentDay, lc, type TruthVault, utcDay } from './devnet-truth-base.ts';

/** day -> fees of `kind` summed over chains (raw asset units). */
export function feesByDay(truth: GroundTruthJson, v: TruthVault, kind: FeeKind): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const f of truth.fees)
    if (lc(f.share) === v.share && f.kind === kind) out.set(f.day, (out.get(f.day) ?? 0n) + BigInt(f.amount));
  return out;
}

/**
 * NestVault fee kinds: the fees the NestVault keeps until the weekly `claimFees` (the
 * instant-redemption fee goes to the share at once, as Nest's NestVault pays it: never claimed).
 */
const NEST_FEE_KINDS: FeeKind[] = ['deposit', 'redemption'];

/**
 * Whether the simulator claims fees at the end of `day` (devnet/simulator.ts
 * `simulateDay`: weekly, on UTC day numbers = 6 mod 7), within the simulated span.
 */
export function isClaimDay(truth: GroundTruthJson, day: string): boolean {
  const n = Date.parse(`${day}T00:00:00Z`) / 1000 / DAY;
  return n % 7 === 6 && day > deploymentDay(truth) && day <= utcDay(truth.to);
}

/**
 * day -> fees claimed (raw asset units, summed over chains). The weekly claim comes
 * last in the simulated day and takes the accountant's fees owed (booked from its
 * FeesClaimed log) and everything the NestVault charged since the previous claim,
 * that day included.
 */
export function feesClaimedByDay(truth: GroundTruthJson, v: TruthVault): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const nest = new Map<string, bigint>();
  for (const kind of NEST_FEE_KINDS)
    for (const [day, amount] of feesByDay(truth, v, kind)) nest.set(day, (nest.get(day) ?? 0n) + amount);
  const accountant = feesByDay(truth, v, 'accountantClaimed');
  let pending = 0n;
  for (let day = deploymentDay(truth); day <= utcDay(truth.to); day = addDays(day, 1)) {
    pending += nest.get(day) ?? 0n;
    if (!isClaimDay(truth, day)) continue;
    out.set(day, pending + (accountant.get(day) ?? 0n));
    pending = 0n;
  }
  return out;
}

/**
 * Closed accrual periods: for each claim day, the days since the previous claim (that
 * day included) and the accountant fees claimed at its end, which are exactly what
 * accrued over those days (rates update at the start of a day, the claim ends it).
 */
export function accrualPeriods(truth: GroundTruthJson, v: TruthVault): { days: string[]; claimed: bigint }[] {
  const accountant = feesByDay(truth, v, 'accountantClaimed');
  const out: { days: string[]; claimed: bigint }[] = [];
  let days: string[] = [];
  for (let day = deploymentDay(truth); day <= utcDay(truth.to); day = addDays(day, 1)) {
    days.push(day);
    if (!isClaimDay(truth, day)) continue;
    out.push({ days, claimed: accountant.get(day) ?? 0n });
    days = [];
  }
  return out;
}
