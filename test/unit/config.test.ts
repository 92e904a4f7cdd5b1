import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyEnv, configSchema, loadConfig, parseConfig } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { ENV_KEYS, unknownKeys } from '../../core/settings/env.ts';
import { EMBEDDED_TRANSACTION_BLOCKS, liveTransactionBlocks } from '../../devnet/run.ts';

const vault = {
  slug: 'v1',
  name: 'V',
  symbol: 'V',
  decimals: 6,
  vaultAddress: `0x${'1'.repeat(40)}`,
  accountantAddress: `0x${'2'.repeat(40)}`,
  chainIds: [1],
};

describe('config', () => {
  it('fills defaults for the embedded mode', () => {
    const cfg = parseConfig({});
    expect(cfg.bus.kind).toBe('inprocess');
    expect(cfg.store.url).toBe('');
    expect(cfg.streams.maxBatchSize).toBe(50_000);
    expect(cfg.api.port).toBe(3000);
  });

  it('names every bad key in one error', () => {
    let err: unknown;
    try {
      parseConfig({
        bus: { partitions: 0 },
        api: { port: 'x' },
        vaults: [{ ...vault, vaultAddress: 'nope' }],
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VaultstreamError);
    const msg = (err as Error).message;
    expect(msg).toContain('bus.partitions');
    expect(msg).toContain('api.port');
    expect(msg).toContain('vaults.0.vaultAddress');
  });

  it('rejects unknown top-level keys and duplicate slugs', () => {
    expect(() => parseConfig({ dataDri: 'x' })).toThrow(/dataDri|Unrecognized/);
    expect(() => parseConfig({ vaults: [vault, vault] })).toThrow(/duplicate slug v1/);
  });

  it('applies named and generic environment overrides', () => {
    const raw = applyEnv(
      { api: { port: 1 } },
      { KAFKA_BROKERS: 'a:9092, b:9092', API_PORT: '8080', VAULTSTREAM__streams__maxWaitMs: '10' },
    );
    const cfg = parseConfig(raw);
    expect(cfg.bus.kind).toBe('kafka');
    expect(cfg.bus.brokers).toEqual(['a:9092', 'b:9092']);
    expect(cfg.api.port).toBe(8080);
    expect(cfg.streams.maxWaitMs).toBe(10);
  });

  it('rejects unknown keys at every depth, naming each', () => {
    let err: unknown;
    try {
      parseConfig({
        api: { prot: 3001, cache: { ttl: 5 } },
        chains: [{ chainId: 1, name: 'one', rpcUrl: 'http://x' }],
        vaults: [{ ...vault, chain: { mainet: { startBlock: 1, accountantType: 'x' } } }],
        devnet: { enable: true },
        solana: { rpcUrl: 'http://x' },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VaultstreamError);
    expect((err as VaultstreamError).code).toBe('CONFIG_INVALID');
    expect((err as Error).message).toBe(
      [
        'invalid configuration:',
        '  api.prot: unknown key',
        '  api.cache.ttl: unknown key',
        '  chains.0.rpcUrl: unknown key',
        '  vaults.0.chain.mainet: unknown key',
        '  devnet.enable: unknown key',
        '  solana.rpcUrl: unknown key',
      ].join('\n'),
    );
    // Free-form maps stay free: role names by id.
    expect(parseConfig({ vaults: [{ ...vault, roles: { '7': 'KEEPER' } }] }).vaults[0].roles).toEqual({
      '7': 'KEEPER',
    });
  });

  it('rejects VAULTSTREAM__ variables that name no setting, and accepts those that do', () => {
    expect(() => applyEnv({}, { VAULTSTREAM__api__prot: '3001' })).toThrow(
      'invalid environment:\n  VAULTSTREAM__api__prot: unknown setting api.prot',
    );
    expect(() => applyEnv({}, { VAULTSTREAM__apii__port: '1' })).toThrow(
      'VAULTSTREAM__apii__port: unknown setting apii',
    );
    const raw = applyEnv(
      {},
      {
        VAULTSTREAM__api__cache__ttlSeconds: '7',
        VAULTSTREAM__devnet__enabled: 'false',
        VAULTSTREAM__devnet__chainIds: '[1, 56]',
      },
    );
    expect(raw).toEqual({
      api: { cache: { ttlSeconds: 7 } },
      devnet: { enabled: false, chainIds: [1, 56] },
    });
  });

  it('every named environment variable sets a setting the schema declares', () => {
    // ENV_KEYS (core/settings/env.ts) lives apart from the sections it names: a renamed setting must fail here.
    const undeclared = Object.entries(ENV_KEYS).filter(([, { path }]) => {
      const value = path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), 'x');
      return unknownKeys(configSchema, value).length > 0;
    });
    expect(undeclared.map(([name]) => name)).toEqual([]);
    expect(Object.keys(ENV_KEYS).length).toBeGreaterThan(10);
    expect(unknownKeys(configSchema, { api: { prot: 'x' } })).toEqual(['api.prot']);
  });

  it('config/default.yaml is valid under the strict schema', () => {
    const cfg = loadConfig(join(import.meta.dirname, '..', '..', 'config', 'default.yaml'), {});
    expect(cfg.devnet.enabled).toBe(true);
  });

  it('devnet.liveTransactionBlocks: 2,000 inside vaultstream start, all kept under vaultstream devnet, unless set', () => {
    const unset = parseConfig({}).devnet;
    expect(unset.liveTransactionBlocks).toBeUndefined();
    expect(liveTransactionBlocks(unset, true)).toBe(EMBEDDED_TRANSACTION_BLOCKS);
    expect(EMBEDDED_TRANSACTION_BLOCKS).toBe(2_000);
    expect(liveTransactionBlocks(unset, false)).toBe(0);
    const set = applyEnv({}, { VAULTSTREAM__devnet__liveTransactionBlocks: '0' });
    expect(liveTransactionBlocks(parseConfig(set).devnet, true)).toBe(0);
    expect(liveTransactionBlocks(parseConfig({ devnet: { liveTransactionBlocks: 300 } }).devnet, false)).toBe(
      300,
    );
  });

  it('requires brokers for the kafka bus', () => {
    expect(() => parseConfig({ bus: { kind: 'kafka' } })).toThrow(/bus\.brokers/);
  });
});
