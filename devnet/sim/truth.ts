/**
 * The simulator's ground truth: what it did, booked independently of the chain
 * (shares from its own arithmetic, not from balanceOf), so tests can compare the
 * chain, the ingested events and the API against it. Amounts are decimal strings
 * of raw integer units (shares and rates have 6 decimals); days are UTC `YYYY-MM-DD`.
 */
import { renameSync, writeFileSync } from 'node:fs';
import type { Address, Hex } from 'viem';
import type { DevnetAddresses } from '../deploy.ts';

export type FeeKind = 'accountantClaimed' | 'instantRedemption' | 'deposit' | 'redemption';

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
    };
  }

  /** Writes the JSON atomically (a reader never sees a half-written file). */
  write(file: string): void {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.toJSON(), null, 1)}\n`);
    renameSync(tmp, file);
  }
}
