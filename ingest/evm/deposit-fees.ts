/**
 * The fee each NestVault `Deposit` charged. The event gives only the gross assets;
 * the vault takes `flat + floor(gross * rate / 1e6)` of its `Deposit` fee setting
 * (`NestVault._charge`), the one in force at the deposit: the
 * setting history is followed through the `SetFee` events in chain order (a setting
 * changed between two deposits prices each rightly) and carried from range to range in
 * the checkpoint (`FeeSettingMark`). The setting may predate the start block, so a vault
 * with none known yet is read once, as `fees(1)` just before its first deposit. The same
 * `SetFee` events are stored as `fee_rates` (view `fee_rate_history`).
 */
import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { nestVaultViews } from './abis.ts';
import type { ChainReader } from './chain.ts';
import type { DecodedLog } from './decode.ts';

/** The `Fees` enum index of the deposit fee. */
const DEPOSIT_FEE = 1;
const RATE_SCALE = 1_000_000n;
const FEES_CALL = encodeFunctionData({ abi: nestVaultViews, functionName: 'fees', args: [DEPOSIT_FEE] });

interface FeeSetting {
  rate: number;
  flat: bigint;
}

/** The fee charged by `gross` under `fee`, rounded down as the contract does. */
export function depositFeeOf(fee: FeeSetting, gross: bigint): bigint {
  return fee.flat + (gross * BigInt(fee.rate)) / RATE_SCALE;
}

/**
 * The deposit-fee setting of a NestVault as last seen, with the block it was learnt at:
 * kept in the chain's checkpoint (the in-checkpoint rate history), so the deposits of
 * later ranges are priced by the setting in force without another read; a reorg drops
 * the marks of orphaned blocks (`ChainFollower.unwind`).
 */
export interface FeeSettingMark {
  block: number;
  rate: number;
  /** uint256 flat fee, decimal string (JSON-safe). */
  flat: string;
}

/**
 * The fee of every NestVault `Deposit` among `decoded` (chain order), by its decoded
 * log; a deposit is missing when its vault's setting could not be read. `known` holds the
 * settings learnt by earlier ranges (updated in place by this range's `SetFee(DEPOSIT)`
 * events and reads); a vault absent from it is read as `fees(1)` just before the range's
 * first deposit of the vault (the setting may predate the start block).
 */
export async function depositFees(
  reader: Pick<ChainReader, 'read'>,
  decoded: DecodedLog[],
  known: Record<string, FeeSettingMark> = {},
): Promise<Map<DecodedLog, bigint>> {
  const out = new Map<DecodedLog, bigint>();
  const byVault = new Map<string, DecodedLog[]>();
  for (const d of decoded) {
    if (d.role !== 'nestVault' || (d.event !== 'Deposit' && d.event !== 'SetFee')) continue;
    const v = d.log.address.toLowerCase();
    byVault.set(v, [...(byVault.get(v) ?? []), d]);
  }
  for (const [vault, logs] of byVault) {
    const mark = known[vault];
    let fee: FeeSetting | undefined = mark && { rate: mark.rate, flat: BigInt(mark.flat) };
    // Only needed when no setting is known and a deposit comes before the range's first SetFee(DEPOSIT).
    let readAt = -1;
    if (!fee) {
      const first = logs.find((d) => d.event === 'Deposit' || Number((d.args as Args).f) === DEPOSIT_FEE);
      if (first?.event === 'Deposit' && first.log.blockNumber > 0) {
        readAt = first.log.blockNumber - 1;
        fee = await readSetting(reader, vault, readAt);
        if (fee) known[vault] = { block: readAt, rate: fee.rate, flat: fee.flat.toString() };
      }
    }
    for (const d of logs) {
      const a = d.args as Args;
      if (d.event === 'SetFee') {
        // A read at the block before the first deposit already includes the earlier settings.
        if (Number(a.f) !== DEPOSIT_FEE || d.log.blockNumber <= readAt) continue;
        fee = { rate: Number(a.fee.rate), flat: a.fee.flat as bigint };
        known[vault] = { block: d.log.blockNumber, rate: fee.rate, flat: fee.flat.toString() };
      } else if (fee) out.set(d, depositFeeOf(fee, a.assets as bigint));
    }
  }
  return out;
}

type Args = Record<string, any>;

async function readSetting(
  reader: Pick<ChainReader, 'read'>,
  vault: string,
  block: number,
): Promise<FeeSetting | undefined> {
  const [data] = await reader.read([{ target: vault as Hex, data: FEES_CALL }], block);
  if (!data) return undefined;
  const r = decodeFunctionResult({ abi: nestVaultViews, functionName: 'fees', data });
  return { rate: r.rate, flat: r.flat };
}
