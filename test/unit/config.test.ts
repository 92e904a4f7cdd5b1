import { describe, expect, it } from 'vitest';
import { applyEnv, parseConfig } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';

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

  it('requires brokers for the kafka bus', () => {
    expect(() => parseConfig({ bus: { kind: 'kafka' } })).toThrow(/bus\.brokers/);
  });
});
