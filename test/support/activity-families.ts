/**
 * The activity scenario's redemption requests, activity, role updates and fees
 * (test/support/activity-scenario.ts builds the vaults and transfers and calls these).
 */
import { ACTIVITY_KINDS, FEE_KINDS } from '../../schemas/families.ts';
import type { FeeRecord, RedemptionRecord } from '../../schemas/records.ts';
import { type ActivityScenario, NOW } from './activity-model.ts';
import { type ChainFields, DAY, EVM_ZERO, hex } from './events.ts';

type At = (chainId: number, ts: number, logIndex?: number) => ChainFields;
export type Push = <T extends { removed: boolean }>(family: string, list: T[], rec: T) => void;
export type Transfer = (
  slug: string,
  chainId: number,
  ts: number,
  from: string,
  to: string,
  amount: bigint,
) => void;

/**
 * Redemption requests of alpha. The first redeemer gets 100 shares on each EVM chain first;
 * the second moves its shares away before one deadline and gets them back after it.
 */
export function redemptionsOf(s: ActivityScenario, at: At, transfer: Transfer): void {
  const [q1, q2] = s.queues;
  const [h5, h4] = s.redeemers;
  const alpha = s.vaults[0].record;
  const want = hex(0xc0ffee, 20);
  const push = (rec: Omit<RedemptionRecord, 'vault' | 'offerToken' | 'wantToken' | 'wantDecimals'>) => {
    const full = { vault: 'alpha', offerToken: alpha.vaultAddress, wantToken: want, wantDecimals: 6, ...rec };
    s.redemptions.push(full);
    s.lines.push(JSON.stringify({ family: 'redemptions', record: full }));
  };
  const hundred = 100_000_000n;
  for (const c of [98866, 1]) transfer('alpha', c, NOW - 58 * DAY, EVM_ZERO, h5, hundred);
  transfer('alpha', 98866, NOW - 58 * DAY, EVM_ZERO, h4, hundred);
  const req = (
    chainId: number,
    queue: string,
    id: string,
    user: string,
    ts: number,
    amount: bigint,
    deadline: number,
    minPrice = 990_000n,
  ) =>
    push({
      ...at(chainId, ts, 1),
      queue,
      kind: 'REQUEST',
      requestId: id,
      user,
      amount: amount.toString(),
      minPrice: minPrice.toString(),
      deadline,
    });
  const act = (
    kind: 'FILL' | 'CANCEL',
    chainId: number,
    queue: string,
    id: string,
    user: string,
    ts: number,
    amount: bigint,
  ) =>
    push({
      ...at(chainId, ts, 2),
      queue,
      kind,
      requestId: id,
      user,
      amount: amount.toString(),
      minPrice: '0',
      // Fills and cancels carry the request's deadline: a deadline of 0 is valid to the
      // schema but the store rejects it today (dead letter "Cannot read DateTime").
      deadline: NOW - 15 * DAY,
    });
  // filled, then cancelled: neither failed
  req(98866, q1, 'r-filled', h5, NOW - 20 * DAY, 10_000_000n, NOW - 15 * DAY);
  act('FILL', 98866, q1, 'r-filled', h5, NOW - 18 * DAY, 10_000_000n);
  req(98866, q1, 'r-cancelled', h5, NOW - 20 * DAY, 10_000_000n, NOW - 15 * DAY);
  act('CANCEL', 98866, q1, 'r-cancelled', h5, NOW - 19 * DAY, 10_000_000n);
  // updated to amount 0: not failed
  req(98866, q1, 'r-zeroed', h5, NOW - 20 * DAY, 10_000_000n, NOW - 15 * DAY);
  req(98866, q1, 'r-zeroed', h5, NOW - 19 * DAY, 0n, NOW - 15 * DAY);
  // still open
  req(98866, q1, 'r-open', h5, NOW - DAY, 10_000_000n, NOW + 5 * DAY);
  // expired, holder kept the shares: valid; updated once (the latest update counts)
  req(98866, q1, 'r-valid', h5, NOW - 12 * DAY, 30_000_000n, NOW - 10 * DAY, 980_000n);
  req(98866, q1, 'r-valid', h5, NOW - 11 * DAY, 40_000_000n, NOW - 9 * DAY, 985_500n);
  // expired on chain 1 in the other queue, more than held: invalid
  req(1, q2, 'r-too-much', h5, NOW - 8 * DAY, 150_000_000n, NOW - 6 * DAY);
  // expired; the holder sent the shares away before the deadline and got them back after it
  req(98866, q1, 'r-moved', h4, NOW - 8 * DAY, 50_000_000n, NOW - 5 * DAY);
  transfer('alpha', 98866, NOW - 7 * DAY, h4, s.evmHolders[3], hundred);
  transfer('alpha', 98866, NOW - 4 * DAY, s.evmHolders[3], h4, hundred);
  // expired 40 days ago: outside the default 30-day window
  req(1, q2, 'r-old', h5, NOW - 45 * DAY, 1_000_000n, NOW - 40 * DAY);
  // a request a reorg retracted
  const ghost = {
    ...at(98866, NOW - 9 * DAY, 1),
    queue: q1,
    kind: 'REQUEST' as const,
    requestId: 'r-ghost',
    user: h5,
    amount: '5',
    minPrice: '1',
    deadline: NOW - 2 * DAY,
  };
  push(ghost);
  push({ ...ghost, removed: true });
}

/** Activity of every kind on alpha and beta, inside and outside the last 7 days. */
export function activityOf(s: ActivityScenario, at: At, push: Push, rand: () => number): void {
  const kinds = ACTIVITY_KINDS;
  for (const [v, slug] of [
    [s.vaults[0], 'alpha'],
    [s.vaults[1], 'beta'],
  ] as const)
    for (let i = 0; i < 18; i++) {
      const chainId = i % 3 === 0 ? 1 : 98866;
      // hours ago: spread over 12 days, two of them exactly at the edge of the week
      const ago = i === 4 ? 7 * 24 * 3600 : i === 5 ? 7 * 24 * 3600 - 1 : Math.floor(rand() * 12 * DAY);
      push('activity', s.activity, {
        ...at(chainId, NOW - ago, i % 4),
        vault: slug,
        kind: kinds[i % kinds.length],
        user: s.evmHolders[i % s.evmHolders.length],
        shares: (BigInt(1 + Math.floor(rand() * 1e6)) * 10n ** BigInt(v.record.decimals - 3)).toString(),
        sharesToken: v.record.vaultAddress,
        assets: BigInt(1 + Math.floor(rand() * 1e9)).toString(),
        assetsToken: hex(0xa55e7, 20),
        assetsDecimals: 6,
      });
    }
  const ghost = s.activity[0];
  push('activity', s.activity, { ...ghost, removed: true });
}

/** Grants and revokes on alpha (Nest names) and beta (its own map), one unknown id. */
export function rolesOf(s: ActivityScenario, at: At, push: Push): void {
  const [u1, u2, u3] = s.evmHolders;
  const grant = (slug: string, chainId: number, ts: number, user: string, role: number, enabled: boolean) =>
    push('roles', s.roles, {
      ...at(chainId, ts, 3),
      vault: slug,
      authority: hex(0xa0, 20),
      user,
      role,
      enabled,
    });
  grant('alpha', 98866, NOW - 30 * DAY, u1, 1, true);
  grant('alpha', 98866, NOW - 20 * DAY, u1, 1, false);
  grant('alpha', 98866, NOW - 20 * DAY, u2, 3, true);
  grant('alpha', 98866, NOW - 19 * DAY, u3, 99, true);
  grant('alpha', 1, NOW - 19 * DAY, u1, 1, true);
  grant('alpha', 1, NOW - 18 * DAY, u2, 14, true);
  grant('beta', 98866, NOW - 10 * DAY, u1, 1, true);
  grant('beta', 98866, NOW - 10 * DAY, u2, 2, true);
  // a revoke a reorg retracted: u2 keeps TELLER on alpha
  const revoke = {
    ...at(98866, NOW - 5 * DAY, 3),
    vault: 'alpha',
    authority: hex(0xa0, 20),
    user: u2,
    role: 3,
    enabled: false,
  };
  push('roles', s.roles, revoke);
  push('roles', s.roles, { ...revoke, removed: true });
}

/** Fees of every kind on alpha and beta over the last ~14 months, one retracted. */
export function feesOf(s: ActivityScenario, at: At, push: Push): void {
  const kinds = FEE_KINDS;
  const prices = ['1', '0.9998', '1.0001', '2000.5'];
  let n = 0;
  for (const slug of ['alpha', 'beta'])
    for (const daysAgo of [420, 364, 200, 31, 3, 3, 0])
      for (const kind of kinds) {
        n++;
        if ((n + daysAgo) % 4 === 0) continue; // some days without some kinds
        push('fees', s.fees, {
          ...at(n % 2 ? 98866 : 1, NOW - daysAgo * DAY - (n % 5) * 3600, 4),
          vault: slug,
          kind,
          token: hex(0xfee, 20),
          amount: (BigInt(n) * 1_234_567n + 89n).toString(),
          decimals: 6,
          usdPrice: prices[n % prices.length],
        });
      }
  // Retract a fee whose day and kind have another fee, so the day's sum must drop by exactly it.
  const day = (f: FeeRecord) => `${f.vault}|${f.kind}|${Math.floor(f.blockTimestamp / DAY)}`;
  const ghost = s.fees.find((f) => s.fees.some((g) => g !== f && day(g) === day(f)))!;
  push('fees', s.fees, { ...ghost, removed: true });
}
