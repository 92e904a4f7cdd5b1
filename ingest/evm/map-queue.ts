/**
 * The atomic queue's events: redemption requests, cancels (an update to zero amount) and
 * fills (`redemptions`), and a request's `REDEEM_REQUEST` activity.
 */
import { NO_DEADLINE, type RoleMapper, unitPrice } from './map-context.ts';

export const mapQueue: RoleMapper = (s) => {
  const { a, vault } = s;
  switch (s.d.event) {
    case 'AtomicRequestUpdated': {
      const id = { requestId: `${a.user}:${a.offerToken}:${a.wantToken}`, user: a.user };
      const tokens = { offerToken: a.offerToken, wantToken: a.wantToken };
      const deadline = a.deadline > BigInt(NO_DEADLINE) ? NO_DEADLINE : Number(a.deadline);
      // A cancel is an update to zero: the queue keeps one request per (user, offer, want).
      const kind = a.amount === 0n ? 'CANCEL' : 'REQUEST';
      s.redemption({
        kind,
        ...id,
        ...tokens,
        amount: a.amount.toString(),
        minPrice: a.minPrice.toString(),
        deadline,
      });
      if (kind === 'REQUEST')
        s.activity(
          'REDEEM_REQUEST',
          a.user,
          a.amount,
          ((a.amount as bigint) * (a.minPrice as bigint)) / 10n ** BigInt(vault.decimals),
          a.wantToken,
        );
      break;
    }
    case 'AtomicRequestFulfilled':
      s.redemption({
        kind: 'FILL',
        requestId: `${a.user}:${a.offerToken}:${a.wantToken}`,
        user: a.user,
        offerToken: a.offerToken,
        wantToken: a.wantToken,
        amount: a.offerAmountSpent.toString(),
        minPrice: unitPrice(a.wantAmountReceived, a.offerAmountSpent, vault.decimals).toString(),
        deadline: 0,
      });
      break;
  }
  return false;
};
