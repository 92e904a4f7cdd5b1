/**
 * A small hand-made scenario for the holders, activity and fees endpoints: three
 * vaults (one with a Solana mint, one with 18 decimals and its own role map, one
 * disabled), transfers on two EVM chains and Solana (chain 101), activity of every
 * kind, redemption requests (filled, cancelled, zeroed, open, expired with and without
 * the shares at the deadline), role grants and revokes (one unknown id), fees of every
 * kind on several days, and a reorg retraction in each family. It exports the events
 * themselves: tests derive every expected value from them.
 */
import type { RegistryRecord } from '../../schemas/records.ts';
import { activityOf, feesOf, type Push, redemptionsOf, rolesOf, type Transfer } from './activity-families.ts';
import { type ActivityScenario, NOW, type ScenarioVault } from './activity-model.ts';
import { DAY, EVM_ZERO, eventSequence, hex, SOLANA_ZERO, scenarioRegistry } from './events.ts';
import { seededRandom } from './rng.ts';

// The scenario's shape and clock live in activity-model.ts (read by the families and the truth too).
export { type ActivityScenario, NOW, NOW_MS, type ScenarioVault } from './activity-model.ts';

const solanaAccount = (i: number) => `SoHo${'Z'.repeat(36)}${'123456789'[i % 9]}${'ABCDEFGH'[i % 8]}`;

/** A registry record of the scenario (`info` given as an object). */
function registry(
  slug: string,
  i: number,
  fields: Omit<Partial<RegistryRecord>, 'info'> & { info: Record<string, unknown> },
): RegistryRecord {
  return scenarioRegistry(slug, i, { ...fields, info: JSON.stringify(fields.info) });
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
  const at = eventSequence(5000);
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

// Kept here for the suites importing it from the scenario (test/api/token-holders.test.ts).
export { units } from './activity-truth.ts';
