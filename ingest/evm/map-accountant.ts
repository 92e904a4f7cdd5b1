/**
 * The accountant's events: exchange-rate updates (`rates`, with the pause state after the
 * block), claimed fees (`fees`) and the fee-rate settings (`fee_rates`).
 */
import { toEventSelector } from 'viem';
import type { FeeRateRecord } from '../../schemas/records.ts';
import { type RoleMapper, ZERO } from './map-context.ts';

/** The accountant fee-rate events by topic0: canonical signature, fee kind and rate denominator. */
export const ACCOUNTANT_FEE_EVENTS: ReadonlyMap<
  string,
  { event: string; kind: FeeRateRecord['kind']; scale: 10_000 | 1_000_000 }
> = new Map(
  (
    [
      ['PlatformFeeUpdated(uint16,uint16)', 'PLATFORM', 10_000],
      ['PerformanceFeeUpdated(uint16,uint16)', 'PERFORMANCE', 10_000],
      ['ManagementFeeUpdated(uint16,uint16)', 'MANAGEMENT', 10_000],
      ['ManagementFeeUpdated(uint32,uint32)', 'MANAGEMENT', 1_000_000],
      ['PerformanceFeeUpdated(uint32,uint32)', 'PERFORMANCE', 1_000_000],
    ] as const
  ).map(([event, kind, scale]) => [toEventSelector(event), { event, kind, scale }]),
);

export const mapAccountant: RoleMapper = (s) => {
  const { a, c, d } = s;
  switch (d.event) {
    case 'ExchangeRateUpdated':
      s.emit('rates', {
        accountant: c.address,
        rate: a.newRate.toString(),
        rateDecimals: s.vault.baseAsset.decimals,
        source: 'EVENT',
        isPaused: s.ctx.pausedAfter(c.address, d.log.blockNumber),
      });
      break;
    case 'FeesClaimed':
      s.fee('CLAIMED', a.feeAsset ?? c.asset ?? ZERO, a.amount);
      break;
    case 'PlatformFeeUpdated':
    case 'PerformanceFeeUpdated':
    case 'ManagementFeeUpdated': {
      const shape = ACCOUNTANT_FEE_EVENTS.get(d.log.topics[0].toLowerCase());
      if (shape)
        s.emit('fee_rates', {
          contract: c.address,
          event: shape.event,
          kind: shape.kind,
          oldRate: Number(a.oldFee),
          newRate: Number(a.newFee),
          rateScale: shape.scale,
          oldFlat: '0',
          newFlat: '0',
        });
      break;
    }
  }
  return false;
};
