/**
 * A small hand-made scenario for the holders, activity and fees endpoints: three
 * vaults (one with a Solana mint, one with 18 decimals and its own role map, one
 * disabled), transfers on two EVM chains and Solana (chain 101), activity of every
 * kind, redemption requests (filled, cancelled, zeroed, open, expired with and without
 * the shares at the deadline), role grants and revokes (one unknown id), fees of every
 * kind on several days, and a reorg retraction in each family. It exports the events
 * themselves: tests derive every expected value from them.
 */
import type {
  ActivityRecord,
  FeeRecord,
  RedemptionRecord,
  RegistryRecord,
  RoleRecord,
  TransferRecord,
} from '../../schemas/records.ts';
import { seededRandom } from './rng.ts';

const DAY = 86_400;
export const EVM_ZERO = '0x0000000000000000000000000000000000000000';
export const SOLANA_ZERO = '11111111111111111111111111111111';
/** The API clock of the scenario (ms): 2026-10-20 12:00 UTC. */
export const NOW_MS = Date.UTC(2026, 9, 20, 12);
export const NOW = NOW_MS / 1000;

const hex = (n: number | bigint, bytes: number) =>
  `0x${BigInt(n)
    .toString(16)
    .padStart(bytes * 2, '0')}`;
const solanaAccount = (i: number) => `SoHo${'Z'.repeat(36)}${'123456789'[i % 9]}${'ABCDEFGH'[i % 8]}`;

export interface ScenarioVault {
  record: RegistryRecord;
  /** Accountant rate (raw, `rateDecimals`) on `rateChain`. */
  rate: bigint;
  rateDecimals: number;
  rateChain: number;
}

export interface ActivityScenario {
  lines: string[];
  vaults: ScenarioVault[];
  /** Every published record, retractions (`removed: true`) included. */
  transfers: TransferRecord[];
  activity: ActivityRecord[];
  redemptions: RedemptionRecord[];
  roles: RoleRecord[];
  fees: FeeRecord[];
  evmHolders: string[];
  /** Holders of alpha's redemption requests, touched by nothing else. */
  redeemers: string[];
  solanaHolders: string[];
  queues: string[];
}

function registry(
  slug: string,
  i: number,
  fields: Omit<Partial<RegistryRecord>, 'info'> & { info: Record<string, unknown> },
): RegistryRecord {
  return {
    slug,
    status: 'active',
    updatedAt: 1_700_000_000_000,
    vaultAddress: hex(0x7a000 + i, 20),
    name: slug,
    symbol: slug.toUpperCase(),
    decimals: 6,
    chainIds: [98866, 1],
    solanaMint: '',
    baseAssetUsdPrice: '1',
    baseAssetDecimals: 6,
    ...fields,
    info: JSON.stringify(fields.info),
  };
}

/** Builds the scenario (deterministic). */
export function buildActivityScenario(): ActivityScenario {
  const rand = seededRandom(11);
  const mint = `M1nt${'Q'.repeat(38)}`;
  const vaults: ScenarioVault[] = [
    {
      record: registry('alpha', 0, {
        solanaMint: mint,
        info: {
          solana: { mintAddress: mint, oftStoreAddress: '', composerAddress: '', decimals: 9, startBlock: 0 },
        },
      }),
      rate: 1_050_000n,
      rateDecimals: 6,
      rateChain: 98866,
    },
    {
      record: registry('beta', 1, {
        decimals: 18,
        baseAssetUsdPrice: '2000.5',
        baseAssetDecimals: 18,
        info: { roles: { '1': 'CURATOR', '3': 'TELLER' } },
      }),
      rate: 1_100_000_000_000_000_000n,
      rateDecimals: 18,
      rateChain: 1,
    },
    {
      record: registry('gamma', 2, { status: 'disabled', chainIds: [1], info: {} }),
      rate: 1n,
      rateDecimals: 0,
      rateChain: 1,
    },
  ];
  const s: ActivityScenario = {
    lines: vaults.map((v) => JSON.stringify({ family: 'registry', record: v.record })),
    vaults,
    transfers: [],
    activity: [],
    redemptions: [],
    roles: [],
    fees: [],
    evmHolders: Array.from({ length: 8 }, (_, i) => hex(0xb0b000 + i, 20)),
    redeemers: [hex(0x5ede01, 20), hex(0x5ede02, 20)],
    solanaHolders: Array.from({ length: 4 }, (_, i) => solanaAccount(i)),
    queues: [hex(0x9e1, 20), hex(0x9e2, 20)],
  };
  let blockNo = 5000;
  const at: At = (chainId, ts, logIndex = 0) => {
    blockNo++;
    return {
      chainId,
      blockNumber: blockNo,
      blockHash: hex(BigInt(chainId) * 10n ** 12n + BigInt(blockNo), 32),
      blockTimestamp: ts,
      txHash: hex(0x7000000 + blockNo, 32),
      logIndex,
      removed: false,
    };
  };
  const push: Push = (family, list, rec) => {
    list.push(rec);
    s.lines.push(JSON.stringify({ family, record: rec }));
  };
  const token = (slug: string, chainId: number) =>
    chainId === 101 ? mint : vaults.find((v) => v.record.slug === slug)!.record.vaultAddress;
  const transfer: Transfer = (slug, chainId, ts, from, to, amount) =>
    push('transfers', s.transfers, {
      ...at(chainId, ts),
      vault: slug,
      token: token(slug, chainId),
      from,
      to,
      amount: amount.toString(),
    });

  // Random mints, transfers and burns over 60 days before NOW, on each vault's chains.
  const start = NOW - 60 * DAY;
  const held = new Map<string, bigint>();
  const places: [string, number, string[], string][] = [
    ['alpha', 98866, s.evmHolders, EVM_ZERO],
    ['alpha', 1, s.evmHolders, EVM_ZERO],
    ['alpha', 101, s.solanaHolders, SOLANA_ZERO],
    ['beta', 98866, s.evmHolders, EVM_ZERO],
    ['beta', 1, s.evmHolders, EVM_ZERO],
    ['gamma', 1, s.evmHolders, EVM_ZERO],
  ];
  const times = Array.from({ length: 160 }, () => start + Math.floor(rand() * 55 * DAY)).sort(
    (a, b) => a - b,
  );
  for (const ts of times) {
    const [slug, chainId, who, zero] = places[Math.floor(rand() * places.length)];
    const a = who[Math.floor(rand() * who.length)];
    const key = `${slug}|${chainId}|${a}`;
    const bal = held.get(key) ?? 0n;
    const scale = slug === 'beta' ? 10n ** 15n : 1n;
    if (bal > 0n && rand() < 0.5) {
      const to = rand() < 0.3 ? zero : who[Math.floor(rand() * who.length)];
      const amount = rand() < 0.3 ? bal : (bal * BigInt(1 + Math.floor(rand() * 99))) / 100n || bal;
      if (to === a) continue;
      transfer(slug, chainId, ts, a, to, amount);
      held.set(key, bal - amount);
      if (to !== zero)
        held.set(`${slug}|${chainId}|${to}`, (held.get(`${slug}|${chainId}|${to}`) ?? 0n) + amount);
    } else {
      const amount = BigInt(1 + Math.floor(rand() * 5_000_000_000)) * scale;
      transfer(slug, chainId, ts, zero, a, amount);
      held.set(key, bal + amount);
    }
  }
  // Two holders with exactly equal positions (ties sort by address), and a reorged mint.
  transfer('gamma', 98866, start + DAY, EVM_ZERO, s.evmHolders[6], 777_000_000n);
  transfer('gamma', 98866, start + DAY, EVM_ZERO, s.evmHolders[7], 777_000_000n);
  const ghost = {
    ...at(98866, start + 2 * DAY),
    vault: 'alpha',
    token: token('alpha', 98866),
    from: EVM_ZERO,
  };
  push('transfers', s.transfers, { ...ghost, to: s.evmHolders[0], amount: '999999999999' });
  push('transfers', s.transfers, { ...ghost, to: s.evmHolders[0], amount: '999999999999', removed: true });

  redemptionsOf(s, at, transfer);
  activityOf(s, at, push, rand);
  rolesOf(s, at, push);
  feesOf(s, at, push);
  for (const v of vaults)
    s.lines.push(
      JSON.stringify({
        family: 'rates',
        record: {
          ...at(v.rateChain, NOW - 3 * DAY),
          vault: v.record.slug,
          accountant: hex(0xacc, 20),
          rate: v.rate.toString(),
          rateDecimals: v.rateDecimals,
          source: 'EVENT',
          isPaused: false,
        },
      }),
    );
  // Watermarks: every chain ingested up to a minute before NOW.
  for (const c of [98866, 1, 101]) {
    const { chainId, blockNumber, blockHash, blockTimestamp } = at(c, NOW - 60);
    const record = {
      chainId,
      blockNumber,
      blockHash,
      parentHash: hex(1, 32),
      blockTimestamp,
      removed: false,
    };
    s.lines.push(JSON.stringify({ family: 'blocks', record }));
  }
  return s;
}

interface ChainFields {
  chainId: number;
  blockNumber: number;
  blockHash: string;
  blockTimestamp: number;
  txHash: string;
  logIndex: number;
  removed: boolean;
}
type At = (chainId: number, ts: number, logIndex?: number) => ChainFields;
type Push = <T extends { removed: boolean }>(family: string, list: T[], rec: T) => void;
type Transfer = (slug: string, chainId: number, ts: number, from: string, to: string, amount: bigint) => void;

/**
 * Redemption requests of alpha. The first redeemer gets 100 shares on each EVM chain first;
 * the second moves its shares away before one deadline and gets them back after it.
 */
function redemptionsOf(s: ActivityScenario, at: At, transfer: Transfer): void {
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
function activityOf(s: ActivityScenario, at: At, push: Push, rand: () => number): void {
  const kinds = [
    'DEPOSIT',
    'WITHDRAW',
    'REDEEM_REQUEST',
    'INSTANT_REDEEM',
    'BRIDGE_IN',
    'BRIDGE_OUT',
  ] as const;
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
function rolesOf(s: ActivityScenario, at: At, push: Push): void {
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
function feesOf(s: ActivityScenario, at: At, push: Push): void {
  const kinds = [
    'MANAGEMENT',
    'PERFORMANCE',
    'INSTANT_REDEMPTION',
    'DEPOSIT',
    'REDEMPTION',
    'CLAIMED',
  ] as const;
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

/** The records still on the canonical chain: each retracted event and its retraction dropped. */
export function canonical<
  T extends { chainId: number; blockHash: string; logIndex: number; removed: boolean },
>(list: T[]): T[] {
  const id = (r: T) => `${r.chainId}:${r.blockHash}:${r.logIndex}`;
  const gone = new Set(list.filter((r) => r.removed).map(id));
  return list.filter((r) => !gone.has(id(r)));
}

/** Raw balance per `${vault}|${chainId}|${holder}` from the canonical transfers at or before `until`. */
export function balancesAt(s: ActivityScenario, until = Number.POSITIVE_INFINITY): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const add = (k: string, d: bigint) => out.set(k, (out.get(k) ?? 0n) + d);
  for (const t of canonical(s.transfers)) {
    if (t.blockTimestamp > until) continue;
    if (t.from !== EVM_ZERO && t.from !== SOLANA_ZERO)
      add(`${t.vault}|${t.chainId}|${t.from}`, -BigInt(t.amount));
    if (t.to !== EVM_ZERO && t.to !== SOLANA_ZERO) add(`${t.vault}|${t.chainId}|${t.to}`, BigInt(t.amount));
  }
  return out;
}

/** `raw / 10^decimals` as the JSON number the API must print (decimal string → Number). */
export function units(raw: bigint, decimals: number): number {
  const neg = raw < 0n;
  const s = (neg ? -raw : raw).toString().padStart(decimals + 1, '0');
  const n = Number(decimals ? `${s.slice(0, s.length - decimals)}.${s.slice(s.length - decimals)}` : s);
  return neg ? -n : n;
}
