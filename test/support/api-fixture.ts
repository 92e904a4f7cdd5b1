/**
 * The setup every endpoint suite repeats: one API harness per file over a scenario,
 * started before the tests with the scenario's clock and closed after, plus the small
 * helpers those suites derive expected values with.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import {
  NOW_MS as ACTIVITY_NOW_MS,
  type ActivityScenario,
  buildActivityScenario,
} from './activity-scenario.ts';
import { type ApiHarness, startApiHarness } from './api-harness.ts';
import { NOW as VAULT_NOW, vaultScenarioLines } from './vault-scenario.ts';

/** The harness of the running suite; its members are read once `beforeAll` has started it. */
export interface ApiFixture extends Pick<ApiHarness, 'request'> {
  readonly store: ApiHarness['store'];
  /** GET `path`, asserting a 200 (the body text is the failure message). */
  get(path: string): ReturnType<ApiHarness['request']>;
}

/** Registers the suite's hooks: replays `lines()` and serves them with the API clock at `nowMs`. */
export function useApiHarness(lines: () => string[], nowMs: number): ApiFixture {
  let api: ApiHarness | undefined;
  beforeAll(async () => {
    api = await startApiHarness(lines(), { clock: () => nowMs });
  });
  afterAll(async () => api?.close());
  const started = () => {
    if (!api) throw new Error('the API harness is used before beforeAll started it');
    return api;
  };
  return {
    get store() {
      return started().store;
    },
    request: (path, init) => started().request(path, init),
    async get(path) {
      const res = await started().request(path);
      expect(res.status, res.text).toBe(200);
      return res;
    },
  };
}

/** The API over the vault scenario (test/support/vault-scenario.ts), at its `NOW`. */
export function useVaultApi(): ApiFixture {
  return useApiHarness(vaultScenarioLines, VAULT_NOW * 1000);
}

/** The API over the activity scenario, the scenario itself, and its vaults by slug. */
export function useActivityApi(): {
  s: ActivityScenario;
  api: ApiFixture;
  vault: (slug: string) => ActivityScenario['vaults'][number];
} {
  // The scenario is seeded, so building it at collection time gives the same events.
  const s = buildActivityScenario();
  const api = useApiHarness(() => s.lines, ACTIVITY_NOW_MS);
  return { s, api, vault: (slug) => s.vaults.find((v) => v.record.slug === slug)! };
}

/** A decimal USD price ("1.0002") as an exact integer at 18 decimals. */
export function usdE18(price: string): bigint {
  const [int, frac = ''] = price.split('.');
  return BigInt(int + frac.padEnd(18, '0'));
}
