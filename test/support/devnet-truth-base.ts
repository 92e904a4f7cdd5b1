/**
 * The ground truth file (`GroundTruthJson`, devnet/sim/truth.ts) read back, its vaults,
 * days and amounts in the API's units: the ground floor of test/support/devnet-truth.ts
 * and its companions (devnet-truth-rates.ts, devnet-truth-fees.ts, devnet-truth-expect.ts).
 */
import { readFileSync } from 'node:fs';
import { defaultVaultSpec } from '../../devnet/deploy.ts';
import { utcDay } from '../../devnet/sim/truth.ts';
import type { GroundTruthJson } from '../../devnet/sim/truth-json.ts';

/** Shares, rates and the USDC stand-in all have 6 decimals on the devnet (devnet/README.md). */
export const DECIMALS = 6;
/** Seconds in a day. */
export const DAY = 86_400;

export function readTruth(file: string): GroundTruthJson {
  return JSON.parse(readFileSync(file, 'utf8')) as GroundTruthJson;
}

/** A raw integer amount as a JSON number of whole tokens, as the API converts at output. */
export function units(raw: bigint, decimals = DECIMALS): number {
  const neg = raw < 0n;
  const abs = neg ? -raw : raw;
  const base = 10n ** BigInt(decimals);
  const frac = (abs % base).toString().padStart(decimals, '0');
  const n = Number(`${abs / base}.${frac}`);
  return neg ? -n : n;
}

export const lc = (s: string) => s.toLowerCase();

export interface TruthVault {
  index: number;
  /** Registry slug: the symbol in lower case (devnet/run.ts). */
  slug: string;
  /** Share address, lower case (the API's form). */
  share: string;
  /** The share address as the truth spells it (its keys). */
  shareKey: string;
  startingRate: bigint;
}

export function truthVaults(truth: GroundTruthJson): TruthVault[] {
  return truth.addresses.vaults.map((v, index) => {
    const spec = defaultVaultSpec(index);
    return {
      index,
      slug: spec.symbol.toLowerCase(),
      share: lc(v.share),
      shareKey: v.share,
      startingRate: spec.startingRate,
    };
  });
}

/**
 * The deployment day: the simulator's first transactions (the vault setup) follow the
 * deployment on the genesis day, before any rate update, so from then on the
 * accountant holds the spec's starting rate.
 */
export const deploymentDay = (truth: GroundTruthJson) => utcDay(truth.from);

/** `day` (UTC `YYYY-MM-DD`) moved by `n` days. */
export const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY * 1000).toISOString().slice(0, 10);

/** A stable order over plain records: by their JSON text. */
export function byKey(a: object, b: object): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export { utcDay };

/** Every UTC day from `from` to `to`, both included. */
export function daysFrom(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) out.push(d);
  return out;
}
