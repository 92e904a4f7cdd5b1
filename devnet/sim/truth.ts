/**
 * The simulator's ground truth: what it did, booked independently of the chain
 * (shares from its own arithmetic, not from balanceOf), so tests can compare the
 * chain, the ingested events and the API against it. Amounts are decimal strings
 * of raw integer units (shares and rates have 6 decimals); days are UTC `YYYY-MM-DD`.
 */
import { renameSync, writeFileSync } from 'node:fs';
import type { Address, Hex } from 'viem';
import type { DevnetAddresses } from '../deploy.ts';

/** `accountantAccrued`: management plus performance fee a hub accountant accrued on a rate update (the
 * simulator's own arithmetic, mirroring NestHubAccountant). */
export type FeeKind =
  | 'accountantClaimed'
  | 'accountantAccrued'
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

export interface NestRedemptionTruth {
  chainId: number;
  nestVault: Address;
  controller: Address;
  shares: string;
  requestedAt: number;
  state: 'pending' | 'claimable' | 'claimed';
  assets?: string;
  claimedBy?: Address;
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
  nestRedemptions: NestRedemptionTruth[];
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

const DAY_MS = 86_400_000;
const dayShift = (day: string, n: number) =>
  new Date(Date.parse(day) + n * DAY_MS).toISOString().slice(0, 10);

/** The value of the latest key at or before `day` of a day-keyed map (null when none). */
function atOrBefore(series: Record<string, string> | undefined, day: string): string | null {
  let best: string | null = null;
  let bestDay = '';
  for (const [d, v] of Object.entries(series ?? {}))
    if (d <= day && d >= bestDay) {
      best = v;
      bestDay = d;
    }
  return best;
}

/**
 * compositionApy per share and day, independently of the service: weights = USD held of each yield
 * asset over every chain at the day's close (rate x balance), renormalised over the yield assets;
 * asset apyNd = (P(d)/P(d-N) - 1) * 365/N * 100 from the primary chain's close rates.
 */
export function compositionApyTruth(
  primary: number,
  shares: string[],
  yieldPrices: GroundTruthJson['yieldPrices'],
  yieldHoldings: GroundTruthJson['yieldHoldings'],
  lastDay: string,
): GroundTruthJson['compositionApy'] {
  const prices = yieldPrices[String(primary)] ?? {};
  const slugs = Object.keys(prices).sort();
  const firstDay = slugs.flatMap((s) => Object.keys(prices[s])).sort()[0];
  const out: GroundTruthJson['compositionApy'] = {};
  if (!firstDay) return out;
  const apy = (slug: string, day: string, n: number) => {
    const p = atOrBefore(prices[slug], day);
    const q = atOrBefore(prices[slug], dayShift(day, -n));
    return p === null || q === null ? null : (Number(p) / Number(q) - 1) * (365 / n) * 100;
  };
  for (const share of shares) {
    const byDay: Record<string, CompositionApyTruth> = {};
    for (let day = firstDay; day <= lastDay; day = dayShift(day, 1)) {
      const usd = new Map<string, number>();
      for (const slug of slugs) {
        const p = atOrBefore(prices[slug], day);
        let held = 0n;
        for (const chain of Object.keys(yieldHoldings))
          held += BigInt(atOrBefore(yieldHoldings[chain]?.[share]?.[slug], day) ?? '0');
        usd.set(slug, p === null ? 0 : (Number(held) / 1e6) * (Number(p) / 1e6));
      }
      const total = [...usd.values()].reduce((a, b) => a + b, 0);
      const weights = Object.fromEntries(
        slugs.map((s) => [s, total > 0 ? ((usd.get(s) ?? 0) / total) * 100 : 0]),
      );
      const roll = (n: number) => {
        let num = 0;
        let den = 0;
        for (const s of slugs) {
          const a = apy(s, day, n);
          if (a === null || !weights[s]) continue;
          num += weights[s] * a;
          den += weights[s];
        }
        return den > 0 ? num / den : null;
      };
      const rolling30d = roll(30);
      byDay[day] = {
        rolling7d: roll(7),
        rolling30d,
        sec30d: rolling30d === null ? null : 2 * ((1 + ((rolling30d / 100) * 30) / 365) ** 6 - 1) * 100,
        weights,
      };
    }
    out[share] = byDay;
  }
  return out;
}

/** `obj[k0][k1]...[kn] = value`, creating the intermediate objects. */
function setPath(obj: Record<string, unknown>, keys: string[], value: string): void {
  let node = obj;
  for (const k of keys.slice(0, -1)) {
    node[k] ??= {};
    node = node[k] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

/**
 * Entries grouped by chain, each chain's in the order they happened: the chains'
 * tasks interleave, so the order across chains is not part of the history.
 */
function byChain<T extends { chainId: number }>(items: T[]): T[] {
  return [...items].sort((a, b) => a.chainId - b.chainId);
}

export const utcDay = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().slice(0, 10);

/** The mutable book behind `GroundTruthJson`. */
export class GroundTruth {
  private readonly balances = new Map<string, bigint>();
  private readonly supply = new Map<string, bigint>();
  private readonly closePrices = new Map<string, string>();
  private readonly roles = new Map<string, GroundTruthJson['roles'][number]>();
  private readonly operators = new Map<string, GroundTruthJson['operators'][number]>();
  readonly pauses: GroundTruthJson['pauses'] = [];
  readonly fees: GroundTruthJson['fees'] = [];
  readonly atomicRequests: AtomicRequestTruth[] = [];
  readonly nestRedemptions: NestRedemptionTruth[] = [];
  readonly bridges: BridgeTruth[] = [];
  readonly reorgs: GroundTruthJson['reorgs'] = [];
  private readonly actions = new Map<string, number>();
  private readonly yieldPrices = new Map<string, string>();
  private readonly yieldRates = new Map<string, bigint>();
  private readonly yieldHoldings = new Map<string, bigint>();
  private readonly yieldHoldingDays = new Map<string, string>();
  /** The Solana side's book, when there is one. */
  solana: { toJSON(): SolanaTruthJson } | undefined;
  private from = 0;
  private to = 0;

  constructor(
    private readonly seed: number,
    private readonly chainIds: number[],
    private readonly addresses: DevnetAddresses,
  ) {}

  /** Notes an action done at `at` (block time). */
  did(action: string, at: number): void {
    this.actions.set(action, (this.actions.get(action) ?? 0) + 1);
    if (!this.from || at < this.from) this.from = at;
    if (at > this.to) this.to = at;
  }

  balanceOf(chainId: number, share: Address, holder: Address): bigint {
    return this.balances.get(`${chainId}|${share}|${holder}`) ?? 0n;
  }

  /** Mint (`from` zero address), burn (`to` zero address) or transfer of shares. */
  move(chainId: number, share: Address, from: Address | null, to: Address | null, amount: bigint): void {
    if (from) this.add(`${chainId}|${share}|${from}`, -amount);
    if (to) this.add(`${chainId}|${share}|${to}`, amount);
    const supplyKey = `${chainId}|${share}`;
    if (!from) this.supply.set(supplyKey, (this.supply.get(supplyKey) ?? 0n) + amount);
    if (!to) this.supply.set(supplyKey, (this.supply.get(supplyKey) ?? 0n) - amount);
  }

  private add(key: string, delta: bigint): void {
    const v = (this.balances.get(key) ?? 0n) + delta;
    if (v < 0n) throw new Error(`ground truth: negative balance for ${key}`);
    this.balances.set(key, v);
  }

  supplyOf(chainId: number, share: Address): bigint {
    return this.supply.get(`${chainId}|${share}`) ?? 0n;
  }

  /** A yield asset's rate set on `chainId` at `at`. */
  yieldPrice(chainId: number, slug: string, at: number, rate: bigint): void {
    this.yieldRates.set(`${chainId}|${slug}`, rate);
    this.yieldPrices.set(`${chainId}|${slug}|${utcDay(at)}`, rate.toString());
  }

  yieldRate(chainId: number, slug: string): bigint {
    return this.yieldRates.get(`${chainId}|${slug}`) ?? 0n;
  }

  yieldHolding(chainId: number, share: Address, slug: string): bigint {
    return this.yieldHoldings.get(`${chainId}|${share}|${slug}`) ?? 0n;
  }

  /** The vault `share` now holds `delta` more (or less) of yield asset `slug` on `chainId`. */
  moveYield(chainId: number, share: Address, slug: string, at: number, delta: bigint): void {
    const key = `${chainId}|${share}|${slug}`;
    const v = (this.yieldHoldings.get(key) ?? 0n) + delta;
    if (v < 0n) throw new Error(`ground truth: negative yield holding for ${key}`);
    this.yieldHoldings.set(key, v);
    this.yieldHoldingDays.set(`${key}|${utcDay(at)}`, v.toString());
  }

  rate(chainId: number, share: Address, at: number, rate: bigint): void {
    this.closePrices.set(`${chainId}|${share}|${utcDay(at)}`, rate.toString());
  }

  fee(chainId: number, share: Address, at: number, kind: FeeKind, amount: bigint): void {
    if (amount > 0n) this.fees.push({ chainId, share, day: utcDay(at), kind, amount: amount.toString() });
  }

  role(r: GroundTruthJson['roles'][number]): void {
    this.roles.set(`${r.chainId}|${r.authority}|${r.user}|${r.role}`, r);
  }

  operator(o: GroundTruthJson['operators'][number]): void {
    this.operators.set(`${o.chainId}|${o.controller}|${o.operator}`, o);
  }

  isOperator(chainId: number, controller: Address, operator: Address): boolean {
    return this.operators.get(`${chainId}|${controller}|${operator}`)?.enabled ?? false;
  }

  /** Marks open atomic requests whose deadline is before `now` as expired. */
  expire(chainId: number, now: number): void {
    for (const r of this.atomicRequests)
      if (r.chainId === chainId && r.state === 'open' && r.deadline < now) r.state = 'expired';
  }

  toJSON(): GroundTruthJson {
    const balances: GroundTruthJson['balances'] = {};
    const holders = new Map<string, Set<string>>();
    for (const [key, v] of [...this.balances].sort(([a], [b]) => a.localeCompare(b))) {
      if (v === 0n) continue;
      const [chain, share, holder] = key.split('|');
      setPath(balances, [chain, share, holder], v.toString());
      if (!holders.has(share)) holders.set(share, new Set());
      holders.get(share)?.add(holder);
    }
    const supply: GroundTruthJson['supply'] = {};
    for (const [key, v] of this.supply) {
      const [chain, share] = key.split('|');
      setPath(supply, [chain, share], v.toString());
    }
    const closePrices: GroundTruthJson['closePrices'] = {};
    for (const [key, v] of [...this.closePrices].sort(([a], [b]) => a.localeCompare(b))) {
      const [chain, share, day] = key.split('|');
      setPath(closePrices, [chain, share, day], v);
    }
    const yieldPrices: GroundTruthJson['yieldPrices'] = {};
    for (const [key, v] of [...this.yieldPrices].sort(([a], [b]) => a.localeCompare(b)))
      setPath(yieldPrices, key.split('|'), v);
    const yieldHoldings: GroundTruthJson['yieldHoldings'] = {};
    for (const [key, v] of [...this.yieldHoldingDays].sort(([a], [b]) => a.localeCompare(b)))
      setPath(yieldHoldings, key.split('|'), v);
    const compositionApy = compositionApyTruth(
      this.chainIds[0],
      this.addresses.vaults.map((v) => v.share),
      yieldPrices,
      yieldHoldings,
      utcDay(this.to),
    );
    return {
      seed: this.seed,
      chainIds: this.chainIds,
      addresses: this.addresses,
      from: this.from,
      to: this.to,
      balances,
      supply,
      holders: Object.fromEntries([...holders].map(([s, h]) => [s, [...h].sort()])),
      closePrices,
      pauses: byChain(this.pauses),
      fees: byChain(this.fees),
      atomicRequests: byChain(this.atomicRequests),
      nestRedemptions: byChain(this.nestRedemptions),
      roles: byChain([...this.roles.values()]),
      operators: byChain([...this.operators.values()]),
      bridges: [...this.bridges].sort((a, b) => a.srcChainId - b.srcChainId),
      reorgs: byChain(this.reorgs),
      actions: Object.fromEntries(this.actions),
      yieldPrices,
      yieldHoldings,
      compositionApy,
      ...(this.solana ? { solana: this.solana.toJSON() } : {}),
    };
  }

  /** Writes the JSON atomically (a reader never sees a half-written file). */
  write(file: string): void {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.toJSON(), null, 1)}\n`);
    renameSync(tmp, file);
  }
}
