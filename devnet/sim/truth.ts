/**
 * The simulator's ground truth: what it did, booked independently of the chain
 * (shares from its own arithmetic, not from balanceOf), so tests can compare the
 * chain, the ingested events and the API against it. Amounts are decimal strings
 * of raw integer units (shares and rates have 6 decimals); days are UTC `YYYY-MM-DD`.
 */
import { renameSync, writeFileSync } from 'node:fs';
import type { Address } from 'viem';
import type { DevnetAddresses } from '../deploy.ts';
import { compositionApyTruth } from './composition-apy.ts';
import type {
  AtomicRequestTruth,
  BridgeTruth,
  ContractViewsTruth,
  FeeKind,
  GroundTruthJson,
  NestControllerTruth,
  NestEventTruth,
  SolanaTruthJson,
} from './truth-json.ts';

/** A controller's ERC-7540 state in the simulator's book (raw share and asset units). */
export interface NestState {
  pending: bigint;
  claimableShares: bigint;
  claimableAssets: bigint;
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
  readonly nestEvents: NestEventTruth[] = [];
  private readonly nest = new Map<
    string,
    NestState & { chainId: number; nestVault: Address; controller: Address }
  >();
  /** Per chain, the contracts' views at every simulated day's last block, and at the head. */
  private readonly viewDays: ContractViewsTruth[] = [];
  private readonly viewHeads = new Map<number, ContractViewsTruth>();
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

  /** How many times `action` was done. */
  count(action: string): number {
    return this.actions.get(action) ?? 0;
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

  /** The booked ERC-7540 state of `controller` on `nestVault` (created empty): actions update it in place. */
  nestState(chainId: number, nestVault: Address, controller: Address): NestState {
    const key = `${chainId}|${nestVault}|${controller}`;
    let s = this.nest.get(key);
    if (!s) {
      s = { chainId, nestVault, controller, pending: 0n, claimableShares: 0n, claimableAssets: 0n };
      this.nest.set(key, s);
    }
    return s;
  }

  /** The controllers of `nestVault` on `chainId` with their booked state. */
  nestControllersOf(chainId: number, nestVault: Address): (NestState & { controller: Address })[] {
    return [...this.nest.values()].filter((s) => s.chainId === chainId && s.nestVault === nestVault);
  }

  /** The contracts' views read at a day's last block (`views.day` set) or at the head. */
  contractViews(views: ContractViewsTruth): void {
    if (views.day) this.viewDays.push(views);
    else this.viewHeads.set(views.chainId, views);
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
      nestEvents: byChain(this.nestEvents),
      nestControllers: byChain(
        [...this.nest.values()]
          .filter((s) => s.pending || s.claimableShares || s.claimableAssets)
          .map(
            (s): NestControllerTruth => ({
              chainId: s.chainId,
              nestVault: s.nestVault,
              controller: s.controller,
              pending: s.pending.toString(),
              claimableShares: s.claimableShares.toString(),
              claimableAssets: s.claimableAssets.toString(),
            }),
          ),
      ),
      contractViews: { days: byChain(this.viewDays), head: byChain([...this.viewHeads.values()]) },
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
