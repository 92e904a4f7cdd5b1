/**
 * A deterministic event scenario and its ground truth, computed here with plain
 * bigint arithmetic, independently of the SQL: balances, holders, hourly and daily
 * holder counts, supply, daily close prices and fees. It exercises duplicates, a reorg retraction and bad lines.
 */
import { writeFileSync } from 'node:fs';
import { blockSequence, DAY, hex, scenarioRegistry, EVM_ZERO as ZERO } from './events.ts';
import { type DailyHolderCount, holderCountTruth, type TruthTransfer } from './holder-count-truth.ts';
import { seededRandom } from './rng.ts';

const rng = seededRandom;

export interface ScenarioOptions {
  seed?: number;
  vaults?: string[];
  chains?: number[];
  holders?: number;
  transfers?: number;
  days?: number;
  /** First day (UTC midnight, Unix seconds). */
  start?: number;
}

export interface Truth {
  /** `${vault}|${chainId}|${holder}` → raw balance (non-zero only). */
  balances: Map<string, bigint>;
  holders: Map<string, number>;
  supply: Map<string, bigint>;
  /** `${vault}|${chainId}|${YYYY-MM-DD}` → close rate raw. */
  closes: Map<string, bigint>;
  /** `${vault}|${YYYY-MM-DD}|${kind}` → usd_e18. */
  fees: Map<string, bigint>;
  roles: Map<string, boolean>;
  /**
   * The holder counts cover the hours and days before this UTC midnight (Unix seconds): the
   * day the chains' watermark blocks are in, so every day before it is settled.
   */
  holderCountsUntil: number;
  /** `${vault}|${chainId}|${YYYY-MM-DD HH:00:00}` → holders at the end of that hour. */
  hourlyHolders: Map<string, number>;
  /** `${vault}|${chainId}|${YYYY-MM-DD}` → start, end, min, max and number of the hourly samples. */
  dailyHolders: Map<string, DailyHolderCount>;
  /** `${vault}|${chainId}` → holders after the last transfer: every hour's sample from then on. */
  finalHolders: Map<string, number>;
}

export interface Scenario {
  lines: string[];
  truth: Truth;
  badLines: number[];
  transferEvents: number;
}

export function buildScenario(opts: ScenarioOptions = {}): Scenario {
  const rand = rng(opts.seed ?? 7);
  const vaults = opts.vaults ?? ['nest-alpha', 'nest-treasuries'];
  const chains = opts.chains ?? [98866, 1];
  const nHolders = opts.holders ?? 40;
  const nTransfers = opts.transfers ?? 600;
  const days = opts.days ?? 40;
  const start = opts.start ?? Date.UTC(2026, 8, 1) / 1000;
  const lines: string[] = [];
  const truth: Truth = {
    balances: new Map(),
    holders: new Map(),
    supply: new Map(),
    closes: new Map(),
    fees: new Map(),
    roles: new Map(),
    holderCountsUntil: start + days * DAY,
    hourlyHolders: new Map(),
    dailyHolders: new Map(),
    finalHolders: new Map(),
  };
  const transfers: TruthTransfer[] = [];
  const holders = Array.from({ length: nHolders }, (_, i) => hex(0xa11ce000 + i, 20));
  const push = (family: string, record: unknown) => lines.push(JSON.stringify({ family, record }));
  const block = blockSequence(1000);
  const vaultAddr = (v: string) => hex(0x7a000 + vaults.indexOf(v), 20);
  const add = (k: string, d: bigint) => {
    const v = (truth.balances.get(k) ?? 0n) + d;
    if (v === 0n) truth.balances.delete(k);
    else truth.balances.set(k, v);
  };
  const day = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 10);
  const span = days * DAY;
  let transferEvents = 0;
  // Transfers, time-ordered: mints first for a holder with nothing, else transfer or burn.
  const times = Array.from({ length: nTransfers }, () => start + Math.floor(rand() * span)).sort(
    (a, b) => a - b,
  );
  times.forEach((ts, i) => {
    const vault = vaults[Math.floor(rand() * vaults.length)];
    const chainId = chains[Math.floor(rand() * chains.length)];
    const who = holders[Math.floor(rand() * holders.length)];
    const k = (h: string) => `${vault}|${chainId}|${h}`;
    const bal = truth.balances.get(k(who)) ?? 0n;
    let from = ZERO;
    let to = who;
    let amount = BigInt(Math.floor(rand() * 1e9) + 1) * 10n ** BigInt(Math.floor(rand() * 12));
    if (bal > 0n && rand() < 0.5) {
      from = who;
      to = rand() < 0.3 ? ZERO : holders[Math.floor(rand() * holders.length)];
      amount = rand() < 0.3 ? bal : (bal * BigInt(Math.floor(rand() * 90) + 1)) / 100n || bal;
      if (to === from) to = ZERO;
    }
    const b = block(chainId, ts);
    const rec = {
      ...b,
      txHash: hex(BigInt(b.blockNumber) * 7n + BigInt(i), 32),
      logIndex: i % 5,
      removed: false,
      vault,
      token: vaultAddr(vault),
      from,
      to,
      amount: amount.toString(),
    };
    push('transfers', rec);
    transferEvents++;
    transfers.push({ vault, chainId, from, to, amount, ts: b.blockTimestamp });
    if (from !== ZERO) add(k(from), -amount);
    if (to !== ZERO) add(k(to), amount);
    const sk = `${vault}|${chainId}`;
    truth.supply.set(
      sk,
      (truth.supply.get(sk) ?? 0n) + (from === ZERO ? amount : 0n) - (to === ZERO ? amount : 0n),
    );
    if (i % 50 === 7) {
      push('transfers', rec); // delivered twice
    }
    if (i % 97 === 13) {
      // A mint that a reorg retracts: published, then retracted; it must count nowhere.
      const rb = block(chainId, ts);
      const ghost = {
        ...rb,
        txHash: hex(0xdead0000 + i, 32),
        logIndex: 0,
        removed: false,
        vault,
        token: vaultAddr(vault),
        from: ZERO,
        to: holders[0],
        amount: '123456789',
      };
      push('transfers', ghost);
      push('transfers', { ...ghost, removed: true });
      transferEvents += 2;
    }
  });
  // Daily rates on the primary chain: up to 3 updates per day, the last one is the close.
  for (const vault of vaults) {
    let rate = 1_000_000n;
    for (let d = 0; d < days; d++) {
      const updates = 1 + Math.floor(rand() * 3);
      for (let u = 0; u < updates; u++) {
        rate += BigInt(Math.floor(rand() * 300));
        const ts = start + d * DAY + 3600 * (1 + u * 7);
        const b = block(chains[0], ts);
        push('rates', {
          ...b,
          txHash: hex(0xabc00000 + b.blockNumber, 32),
          logIndex: 1,
          removed: false,
          vault,
          accountant: hex(0xacc0 + vaults.indexOf(vault), 20),
          rate: rate.toString(),
          rateDecimals: 6,
          source: 'EVENT',
          isPaused: false,
        });
        truth.closes.set(`${vault}|${chains[0]}|${day(ts)}`, rate);
      }
      if (d % 5 === 2) {
        const amount = BigInt(Math.floor(rand() * 1e8));
        const b = block(chains[0], start + d * DAY + 7200);
        push('fees', {
          ...b,
          txHash: hex(0xfee00000 + b.blockNumber, 32),
          logIndex: 2,
          removed: false,
          vault,
          kind: 'MANAGEMENT',
          token: hex(0xc0ffee, 20),
          amount: amount.toString(),
          decimals: 6,
          usdPrice: '0.9998',
        });
        const key = `${vault}|${day(b.blockTimestamp)}|MANAGEMENT`;
        truth.fees.set(key, (truth.fees.get(key) ?? 0n) + (amount * 999800000000000000n) / 10n ** 6n);
      }
    }
    const role = block(chains[0], start + DAY);
    push('roles', {
      ...role,
      txHash: hex(0x901e0000 + role.blockNumber, 32),
      logIndex: 0,
      removed: false,
      vault,
      authority: hex(0xa0, 20),
      user: holders[1],
      role: 7,
      enabled: true,
    });
    truth.roles.set(`${vault}|${chains[0]}|${holders[1]}|7`, true);
  }
  for (const [k] of truth.balances) {
    const [vault] = k.split('|');
    if (truth.balances.get(k)! > 0n) truth.holders.set(vault, 0);
  }
  for (const vault of truth.holders.keys()) {
    const set = new Set(
      [...truth.balances]
        .filter(([k, v]) => k.startsWith(`${vault}|`) && v > 0n)
        .map(([k]) => k.split('|')[2]),
    );
    truth.holders.set(vault, set.size);
  }
  const counts = holderCountTruth(transfers, truth.holderCountsUntil, ZERO);
  truth.hourlyHolders = counts.hourly;
  truth.dailyHolders = counts.daily;
  truth.finalHolders = counts.final;
  // One record of every other family, so each raw table and view is exercised end to end.
  const v0 = vaults[0];
  const ab = block(chains[0], start + 2 * DAY);
  const chainPart = { ...ab, txHash: hex(0x5eed0000 + ab.blockNumber, 32), removed: false, vault: v0 };
  push('activity', {
    ...chainPart,
    logIndex: 3,
    kind: 'DEPOSIT',
    user: holders[2],
    shares: '1000000',
    sharesToken: vaultAddr(v0),
    assets: '1000500',
    assetsToken: hex(0xc0ffee, 20),
    assetsDecimals: 6,
  });
  push('redemptions', {
    ...chainPart,
    logIndex: 4,
    queue: hex(0x9e, 20),
    kind: 'REQUEST',
    requestId: `${holders[3]}:x`,
    user: holders[3],
    offerToken: vaultAddr(v0),
    wantToken: hex(0xc0ffee, 20),
    amount: '5000000',
    minPrice: '990000',
    wantDecimals: 6,
    deadline: start + 3 * DAY,
  });
  push('snapshots', {
    vault: v0,
    chainId: chains[0],
    blockNumber: ab.blockNumber,
    timestamp: ab.blockTimestamp,
    kind: 'COMPOSITION',
    token: 'tbill',
    amount: '0',
    decimals: 0,
    usdPrice: '1.0001',
    apy7d: '4.85',
    apy30d: '4.9',
    weight: '62.5',
    isPaused: false,
  });
  // Valid to the schema but not storable (USD price beyond Decimal(38, 18)): the consumer must
  // isolate it into the dead-letter table and store its batch neighbours.
  push('snapshots', {
    vault: v0,
    chainId: chains[0],
    blockNumber: ab.blockNumber,
    timestamp: ab.blockTimestamp,
    kind: 'ASSET_PRICE',
    token: 'poison',
    amount: '0',
    decimals: 0,
    usdPrice: '1000000000000000000000000000000.5',
    apy7d: '',
    apy30d: '',
    weight: '',
    isPaused: false,
  });
  push('source_errors', {
    vault: v0,
    chainId: chains[0],
    source: `rpc:${chains[0]}`,
    operation: 'eth_getLogs',
    message: 'request timed out\tafter 10 s\nretrying',
    code: 'TIMEOUT',
    timestamp: ab.blockTimestamp,
  });
  push('mint_steps', {
    signature: '5'.repeat(88),
    step: 'cctpAttestation',
    status: 'in_progress',
    observedAt: ab.blockTimestamp * 1000,
    fields: { nonce: '42', "it's": 'a\\b\tc' },
    error: '',
  });
  // Watermark blocks: every chain ingested past the last day.
  for (const c of chains)
    push('blocks', { ...block(c, start + span + 60), parentHash: hex(1, 32), removed: false });
  // Bad lines: not JSON, unknown family, a record that fails validation.
  const badLines: number[] = [];
  for (const bad of [
    '{"family": "transfers", "record": ',
    '{"family":"nope","record":{}}',
    JSON.stringify({ family: 'transfers', record: { chainId: 1, amount: '-5' } }),
  ]) {
    const at = Math.floor(rand() * lines.length);
    lines.splice(at, 0, bad);
  }
  lines.forEach((l, i) => {
    if (!l.startsWith('{"family":"') || l.includes('"nope"') || l.includes('"amount":"-5"'))
      badLines.push(i + 1);
  });
  return { lines, truth, badLines, transferEvents };
}

export function writeScenario(path: string, s: Scenario): void {
  writeFileSync(path, `${s.lines.join('\n')}\n`);
}

/** Registry lines for the scenario's vaults (published by `ingest` in production). */
export function registryLines(vaults: string[], chains: number[]): string[] {
  return vaults.map((slug, i) =>
    JSON.stringify({
      family: 'registry',
      record: scenarioRegistry(slug, i, { symbol: slug.toUpperCase().slice(0, 6), chainIds: chains }),
    }),
  );
}
