/**
 * `accountantState()` of the two legacy accountant families. The getter returns
 * the struct's fields flat, 12 words for Veda (with highwaterMark, platform and
 * performance fees) and 10 for Nucleus/Plume (with managementFee), so the layout is
 * told apart by the length of the answer; the ingester needs `feesOwedInBase`,
 * `exchangeRate` and `isPaused` (paused without an event when an update is out of
 * bounds, reference section 3).
 */
import { decodeFunctionResult, encodeFunctionData, type Hex, size } from 'viem';
import { accountantStateNucleus, accountantStateVeda } from './abis.ts';
import type { ReadCall } from './chain.ts';

export interface AccountantState {
  layout: 'veda' | 'nucleus';
  feesOwedInBase: bigint;
  exchangeRate: bigint;
  isPaused: boolean;
}

const CALL_DATA = encodeFunctionData({ abi: accountantStateVeda, functionName: 'accountantState' });

/** The `accountantState()` read of `accountant`. */
export function accountantStateCall(accountant: string): ReadCall {
  return { target: accountant as Hex, data: CALL_DATA };
}

/** Decodes an `accountantState()` answer; undefined when it has neither layout. */
export function decodeAccountantState(data: Hex | undefined): AccountantState | undefined {
  if (!data) return undefined;
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
