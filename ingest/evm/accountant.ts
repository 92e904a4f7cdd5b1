/**
 * Accountant state reads of three families. The legacy `accountantState()` getter
 * returns the struct's fields flat, 12 words for Veda (with highwaterMark, platform and
 * performance fees) and 10 for Nucleus/Plume (with managementFee); the Nest hub
 * accountant's `getAccountantState()` returns its 14-field struct (fees and bounds in
 * 1e6 = 100%). The layout is told apart by the length of the
 * answer; which getter to call comes from the registry (`isHubAccountant`, or
 * `coreAccountant.isHub` naming the accountant). The ingester needs `feesOwedInBase`,
 * `exchangeRate` and `isPaused` (a legacy accountant pauses without an event when an
 * update is out of bounds), and of a hub the fields its management
 * fee is computed from (`hub`, see `accrual.ts`).
 */
import { decodeFunctionResult, encodeFunctionData, type Hex, parseAbi, size } from 'viem';
import type { VaultConfig } from '../../core/settings/registry.ts';
import { accountantStateNucleus, accountantStateVeda } from './abis.ts';
import type { ReadCall } from './chain.ts';

export interface AccountantState {
  layout: 'veda' | 'nucleus' | 'hub';
  feesOwedInBase: bigint;
  exchangeRate: bigint;
  isPaused: boolean;
  /** Hub only: the management fee, 1e6 = 100%. */
  managementFee?: number;
  /** Hub only: what its last update stored, which the next update's management fee starts from. */
  hub?: HubUpdateMark;
}

/** The fields of a hub's state its last `updateExchangeRate` wrote (the gross rate and supply it was given). */
export interface HubUpdateMark {
  lastGrossRate: bigint;
  totalSharesLastUpdate: bigint;
  lastUpdateTimestamp: bigint;
  managementFee: number;
}

/** NestHubAccountant's `getAccountantState()` (selector 0x42a20b76). */
export const hubAccountantAbi = parseAbi([
  'function getAccountantState() view returns ((address payoutAddress, uint128 feesOwedInBase, uint128 totalSharesLastUpdate, uint96 exchangeRate, uint32 allowedExchangeRateChangeUpper, uint32 allowedExchangeRateChangeLower, uint64 lastUpdateTimestamp, bool isPaused, uint32 minimumUpdateDelayInSeconds, uint32 managementFee, uint96 highWaterMark, uint96 lastGrossRate, uint96 clawbackReferenceRate, uint64 hwmLastUpdateTimestamp))',
]);

const CALL_DATA = encodeFunctionData({ abi: accountantStateVeda, functionName: 'accountantState' });
const HUB_CALL_DATA = encodeFunctionData({ abi: hubAccountantAbi, functionName: 'getAccountantState' });

/** Whether vault `v`'s accountant is a Nest hub accountant (read with `getAccountantState()`). */
export function isHubAccountant(v: VaultConfig): boolean {
  return (
    v.isHubAccountant ||
    (v.coreAccountant.isHub && v.coreAccountant.address.toLowerCase() === v.accountantAddress.toLowerCase())
  );
}

/** The state read of `accountant`: `getAccountantState()` for a hub accountant, else `accountantState()`. */
export function accountantStateCall(accountant: string, hub = false): ReadCall {
  return { target: accountant as Hex, data: hub ? HUB_CALL_DATA : CALL_DATA };
}

/** Decodes an `accountantState()` or `getAccountantState()` answer; undefined when it has no known layout. */
export function decodeAccountantState(data: Hex | undefined): AccountantState | undefined {
  if (!data || data === '0x') return undefined;
  if (size(data) === 14 * 32) {
    const r = decodeFunctionResult({ abi: hubAccountantAbi, functionName: 'getAccountantState', data });
    return {
      layout: 'hub',
      feesOwedInBase: r.feesOwedInBase,
      exchangeRate: r.exchangeRate,
      isPaused: r.isPaused,
      managementFee: r.managementFee,
      hub: {
        lastGrossRate: r.lastGrossRate,
        totalSharesLastUpdate: r.totalSharesLastUpdate,
        lastUpdateTimestamp: r.lastUpdateTimestamp,
        managementFee: r.managementFee,
      },
    };
  }
  if (size(data) === 12 * 32) {
    const r = decodeFunctionResult({ abi: accountantStateVeda, functionName: 'accountantState', data });
    return { layout: 'veda', feesOwedInBase: r[2], exchangeRate: r[4], isPaused: r[8] };
  }
  if (size(data) === 10 * 32) {
    const r = decodeFunctionResult({ abi: accountantStateNucleus, functionName: 'accountantState', data });
    return { layout: 'nucleus', feesOwedInBase: r[1], exchangeRate: r[3], isPaused: r[7] };
  }
  return undefined;
}
