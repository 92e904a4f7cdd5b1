/**
 * A NestVault's (ERC-7540) events: deposits with their fee, redemption requests, updates
 * and fills, withdrawals and instant redemptions, claimed fees, fee settings (`SetFee`)
 * and operator approvals.
 *
 * The redemptions are recorded as each event changes its controller's state (Nest's
 * NestVaultRedeemLogic; one request per controller, requestId 0): `RedeemRequest` adds its
 * shares to what is pending, `RedeemFulfilled` moves shares from pending to claimable with the
 * assets credited (`actualAssets`, after the redemption fee), `RedeemUpdated` takes
 * `oldShares - newShares` off what is pending, and `Withdraw` (a claim by `redeem` or
 * `withdraw`, by the controller or its operator) takes the shares and assets it pays off what
 * is claimable. Summed per controller these are exactly `pendingRedeemRequest`,
 * `claimableRedeemRequest` and `maxWithdraw` (views/plain/erc7540_redemptions.sql).
 */
import type { FeeRateRecord, RedemptionRecord } from '../../schemas/records.ts';
import { NO_DEADLINE, type RoleMapper, type VaultScope, ZERO } from './map-context.ts';
import { operatorSet } from './map-permissions.ts';

export const SET_FEE_EVENT = 'SetFee(uint8,(uint32,uint256),(uint32,uint256))';
/** NestVault `Fees` enum: the kind of a `SetFee`'s `f`. */
export const NEST_FEE_KINDS: readonly FeeRateRecord['kind'][] = [
  'INSTANT_REDEMPTION',
  'DEPOSIT',
  'REDEMPTION',
];

export const mapNestVault: RoleMapper = (s, { has }) => {
  const { a, c, d, share } = s;
  switch (d.event) {
    case 'FeeClaimed':
      s.fee('CLAIMED', a.feeAsset ?? c.asset ?? ZERO, a.amount);
      break;
    case 'SetFee': {
      const kind = NEST_FEE_KINDS[Number(a.f)];
      if (kind)
        s.emit('fee_rates', {
          contract: c.address,
          event: SET_FEE_EVENT,
          kind,
          oldRate: Number(a.oldFee.rate),
          newRate: Number(a.fee.rate),
          rateScale: 1_000_000,
          oldFlat: a.oldFee.flat.toString(),
          newFlat: a.fee.flat.toString(),
        });
      break;
    }
    case 'OperatorSet':
      operatorSet(s);
      break;
    case 'Deposit':
      s.activity('DEPOSIT', a.receiver, a.shares, a.assets, c.asset || ZERO);
      s.fee('DEPOSIT', c.asset || ZERO, s.ctx.depositFee?.(d) ?? 0n);
      break;
    case 'RedeemRequest':
      s.activity('REDEEM_REQUEST', a.owner, a.shares, 0n, c.asset || ZERO);
      s.redemption(nestRedemption('REDEEM_REQUEST', a.controller, a.shares, 0n, share, c.asset || ZERO));
      break;
    case 'RedeemUpdated': {
      // updateRedeem only lowers what is pending; the difference goes back to `receiver`.
      const taken = (a.oldShares as bigint) - (a.newShares as bigint);
      if (taken > 0n)
        s.redemption(nestRedemption('REDEEM_DECREASED', a.controller, taken, 0n, share, c.asset || ZERO));
      break;
    }
    case 'RedeemFulfilled':
      s.redemption(
        nestRedemption('REDEEM_FULFILLED', a.controller, a.shares, a.actualAssets, share, c.asset || ZERO),
      );
      s.fee('REDEMPTION', c.asset || ZERO, (a.assets as bigint) - (a.actualAssets as bigint));
      break;
    case 'Withdraw':
      s.redemption(
        nestRedemption('REDEEM_CLAIMED', a.controller, a.shares, a.assets, share, c.asset || ZERO),
      );
      if (!has('nestVault', 'InstantRedeem'))
        s.activity('WITHDRAW', a.controller, a.shares, a.assets, c.asset || ZERO);
      break;
    case 'InstantRedeem':
      s.activity('INSTANT_REDEEM', a.receiver, a.shares, a.postFeeAmount, c.asset || ZERO);
      s.fee('INSTANT_REDEMPTION', c.asset || ZERO, (a.assets as bigint) - (a.postFeeAmount as bigint));
      break;
  }
  return false;
};

function nestRedemption(
  kind: RedemptionRecord['kind'],
  controller: string,
  shares: bigint,
  assets: bigint,
  share: string,
  want: string,
): Parameters<VaultScope['redemption']>[0] {
  // ERC-7540 requestId is always 0: a controller has one request per vault.
  return {
    kind,
    requestId: controller,
    user: controller,
    offerToken: share,
    wantToken: want,
    amount: shares.toString(),
    minPrice: '0',
    deadline: NO_DEADLINE,
    assets: assets.toString(),
  };
}
