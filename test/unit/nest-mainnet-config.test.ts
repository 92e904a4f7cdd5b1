/**
 * config/nest-mainnet.yaml: valid for the project's strict config schema, and
 * every address, chain and event signature equal to reference/contracts-and-flows.md, whose
 * markdown tables are parsed here (from ../shared/reference beside the repository when present, else from the
 * verbatim excerpt in test/fixtures/nest-reference-excerpt.md). No network.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import { topicsOf } from '../../ingest/evm/decode.ts';
import { MAPPED_EVENTS } from '../../ingest/evm/map.ts';
import { ROOT } from '../support/cli.ts';

const FILE = join(ROOT, 'config', 'nest-mainnet.yaml');
// NEST_REFERENCE (tests of this test): another path for the reference, e.g. a missing one to use the excerpt.
// shared/ stands beside the repository (in CI too).
const REFERENCE =
  process.env.NEST_REFERENCE ?? join(ROOT, '..', 'shared', 'reference', 'contracts-and-flows.md');
const EXCERPT = join(ROOT, 'test', 'fixtures', 'nest-reference-excerpt.md');
const doc = readFileSync(existsSync(REFERENCE) ? REFERENCE : EXCERPT, 'utf8');

const lower = (s: string) => s.toLowerCase();
const firstAddress = (cell: string) => lower(/0x[0-9a-fA-F]{40}/.exec(cell)?.[0] ?? '');
/** Rows of the markdown table whose header row starts with `header`, as cell arrays. */
function table(header: string): string[][] {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${header} |`));
  expect(start, `table "${header}" in the reference`).not.toBe(-1);
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim().replaceAll('**', '')),
    );
  }
  return rows;
}
/** The address in backquotes right after `label` in the reference text. */
const addressAfter = (label: string) =>
  lower(new RegExp(`${label}[^\`]*\`(0x[0-9a-fA-F]{40})\``).exec(doc)?.[1] ?? `missing ${label}`);

const config = loadConfig(FILE, {});
const vaultBySymbol = new Map(config.vaults.map((v) => [v.symbol, v]));

describe('config/nest-mainnet.yaml', () => {
  it('is valid for the config schema, with the devnet off and a public RPC URL per chain', () => {
    expect(config.devnet.enabled).toBe(false);
    for (const c of config.chains) {
      expect(c.rpcUrls.length, c.name).toBeGreaterThan(0);
      for (const u of c.rpcUrls) expect(u, c.name).toMatch(/^https:\/\//);
      expect(c.reorgWindow, c.name).toBeGreaterThanOrEqual(c.confirmations);
      expect(c.maxBlockRange, c.name).toBeGreaterThan(0);
    }
    // Every vault chain is configured; every configured chain serves a vault.
    const chainIds = new Set(config.chains.map((c) => c.chainId));
    for (const v of config.vaults)
      for (const id of v.chainIds) expect(chainIds.has(id), `${v.slug} ${id}`).toBe(true);
    for (const id of chainIds)
      expect(
        config.vaults.some((v) => v.chainIds.includes(id)),
        String(id),
      ).toBe(true);
  });

  it('RPC URLs come from the environment when set (VAULTSTREAM__chains__<i>__rpcUrls), the others keep their defaults', () => {
    const url = 'https://eth.example.org/v1/key';
    const over = loadConfig(FILE, { VAULTSTREAM__chains__1__rpcUrls: JSON.stringify([url]) });
    expect(over.chains[1].chainId).toBe(1);
    expect(over.chains[1].rpcUrls).toEqual([url]);
    expect(over.chains[0].rpcUrls).toEqual(config.chains[0].rpcUrls);
    expect(() => loadConfig(FILE, { VAULTSTREAM__chains__1__rpcUrl: '["x"]' })).toThrow(/unknown setting/);
  });

  it('has every vault of the reference table with its share, teller, accountant, authority and chains', () => {
    const rows = table('Symbol');
    expect(rows.length).toBe(11);
    for (const [symbol, name, share, teller, accountant, authority, chains] of rows) {
      const v = vaultBySymbol.get(symbol);
      expect(v, symbol).toBeDefined();
      if (!v) continue;
      expect(v.name).toBe(name);
      expect(lower(v.vaultAddress)).toBe(firstAddress(share));
      expect(lower(v.tellerContractAddress)).toBe(firstAddress(teller));
      // nOPAL lists the README's legacy accountant first, then the NestHubAccountant of the new config.
      expect(lower(v.accountantAddress)).toBe(firstAddress(accountant));
      expect(lower(v.authorityAddress)).toBe(firstAddress(authority));
      const evm = chains
        .split(',')
        .filter((c) => c !== 'sol')
        .map(Number);
      expect([...v.chainIds].sort((a, b) => a - b)).toEqual(evm.sort((a, b) => a - b));
    }
    expect(config.vaults.length).toBe(rows.length);
  });

  it('has the NestVault and composer of each vault, on Plume with Plume USDC', () => {
    const plumeUsdc = firstAddress(table('Chain').find((r) => r[0] === 'Plume')?.[5] ?? '');
    expect(plumeUsdc).toMatch(/^0x/);
    const rows = table('Vault');
    expect(rows.length).toBe(5);
    for (const [symbol, nestVault, composer] of rows) {
      const v = vaultBySymbol.get(symbol);
      expect(
        v?.coreVaults.map((c) => lower(c.coreVaultAddress)),
        symbol,
      ).toEqual([firstAddress(nestVault)]);
      expect(v?.coreVaults[0].chainAssets.map((a) => [a.chainId, lower(a.assetAddress)])).toEqual([
        [98866, plumeUsdc],
      ]);
      expect(v?.coreComposers.map((c) => lower(c.composerAddress))).toEqual([firstAddress(composer)]);
    }
    // Only those vaults have one.
    expect(config.vaults.filter((v) => v.coreVaults.length).length).toBe(rows.length);
  });

  it('has the chains of the reference, with the shared contracts where it lists them', () => {
    const chainRows = new Map(table('Chain').map((r) => [Number(r[1]), r[0]]));
    for (const c of config.chains) expect(chainRows.has(c.chainId), `${c.name} ${c.chainId}`).toBe(true);
    const registry = addressAfter('Deployed: OperatorRegistry');
    const redeem = addressAfter('and RedeemOperator');
    const oldQueue = addressAfter('"AtomicQueueUCP \\(old\\)"');
    const newQueue = addressAfter('"AtomicQueue \\(new\\)"');
    const proxy = addressAfter('\\(Nest: ');
    // The reference lists the registry in the common configs of 1, 8453, 43114 and 98866.
    const withRegistry = config.chains.filter((c) => c.operatorRegistry).map((c) => c.chainId);
    expect(withRegistry.sort((a, b) => a - b)).toEqual([1, 43114, 98866]);
    for (const c of config.chains) {
      if (c.operatorRegistry) expect(lower(c.operatorRegistry)).toBe(registry);
      if (c.redeemOperator) expect(lower(c.redeemOperator)).toBe(redeem);
      expect(c.predicateProxies.map(lower)).toEqual([proxy]);
      for (const q of c.atomicQueues) expect([oldQueue, newQueue]).toContain(lower(q));
    }
    // "AtomicQueueUCP (old) on plume/ethereum/plasma"; "AtomicQueue (new) on plume, ethereum, plasma, bnb and worldchain".
    const queues = (id: number) => config.chains.find((c) => c.chainId === id)?.atomicQueues.map(lower) ?? [];
    for (const id of [98866, 1, 9745]) expect(queues(id)).toEqual([oldQueue, newQueue]);
    for (const id of [56, 480]) expect(queues(id)).toEqual([newQueue]);
    for (const id of [42161, 43114]) expect(queues(id)).toEqual([]);
  });

  it('asks the nodes only for events whose signature and topic0 are in the reference appendix', () => {
    const appendix = new Set([...doc.matchAll(/^(0x[0-9a-f]{64}) {2}\S+$/gm)].map((m) => m[1]));
    expect(appendix.size).toBeGreaterThan(50);
    for (const topic of topicsOf(MAPPED_EVENTS)) expect(appendix.has(topic), topic).toBe(true);
    // And every watched contract of every chain is an address of the file (no devnet leftovers).
    const text = lower(readFileSync(FILE, 'utf8'));
    for (const c of config.chains)
      for (const a of chainContracts(config, c).addresses) expect(text).toContain(lower(a));
  });

  it('the excerpt fixture is a verbatim copy of the reference', () => {
    if (!existsSync(REFERENCE)) return;
    const ref = readFileSync(REFERENCE, 'utf8');
    for (const line of readFileSync(EXCERPT, 'utf8').split('\n'))
      if (line && !line.startsWith('<!--') && !line.startsWith('     used by')) expect(ref).toContain(line);
  });
});
