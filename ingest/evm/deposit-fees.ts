/**
 * The fee each NestVault `Deposit` charged. The event gives only the gross assets;
 * the vault takes `flat + floor(gross * rate / 1e6)` of its `Deposit` fee setting
 * (`NestVault._charge`, reference section 6). The setting may predate the start block,
 * so it is read once per vault and range, as `fees(1)` just before the range's first
 * deposit of the vault, then followed through the range's `SetFee` events in chain
 * order (a setting changed between two deposits of one range prices each rightly).
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
 * The fee of every NestVault `Deposit` among `decoded` (chain order), by its decoded
 * log; a deposit is missing when its vault's setting could not be read.
 */
export async function depositFees(
  reader: Pick<ChainReader, 'read'>,
  decoded: DecodedLog[],
): Promise<Map<DecodedLog, bigint>> {
  const out = new Map<DecodedLog, bigint>();
  const byVault = new Map<string, DecodedLog[]>();
  for (const d of decoded) {
    if (d.role !== 'nestVault' || (d.event !== 'Deposit' && d.event !== 'SetFee')) continue;
    const v = d.log.address.toLowerCase();
    byVault.set(v, [...(byVault.get(v) ?? []), d]);
  }
  for (const [vault, logs] of byVault) {
    const first = logs.find((d) => d.event === 'Deposit');
    if (!first) continue;
    const block = first.log.blockNumber - 1;
    let fee = block < 0 ? undefined : await readSetting(reader, vault, block);
    for (const d of logs) {
      const a = d.args as Record<string, any>;
      if (d.event === 'SetFee') {
        // The read at the block before the first deposit already includes the earlier settings.
        if (Number(a.f) === DEPOSIT_FEE && d.log.blockNumber > block)
          fee = { rate: a.fee.rate, flat: a.fee.flat };
      } else if (fee) out.set(d, depositFeeOf(fee, a.assets as bigint));
    }
  }
  return out;
}

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
