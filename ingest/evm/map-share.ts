/**
 * The share token's, the OFT adapter's and the teller's events: deposits and withdrawals
 * (`Enter`/`Exit` unless a more specific event of the transaction reports them, and not
 * the zero asset's bridge mint/burn), teller deposits (through a PredicateProxy too) and
 * bridge transfers (`MessageSent/MessageReceived`, the OFT events).
 */
import type { DecodedLog } from './decode.ts';
import { type Args, type MapContext, type RoleMapper, ZERO } from './map-context.ts';

export const mapShare: RoleMapper = (s, facts) => {
  const { a } = s;
  const { tellerDeposit, nestDeposit, nestExit } = facts;
  switch (s.d.event) {
    case 'Enter':
      if (a.asset !== ZERO && !tellerDeposit && !nestDeposit)
        s.activity('DEPOSIT', a.to, a.shares, a.amount, a.asset);
      else return true;
      break;
    case 'Exit':
      if (a.asset !== ZERO && !nestExit) s.activity('WITHDRAW', a.from, a.shares, a.amount, a.asset);
      else return true;
      break;
    case 'OFTSent':
    case 'OFTReceived':
      return mapOft(s, facts);
  }
  return false;
};

export const mapOft: RoleMapper = (s) => {
  const { a } = s;
  switch (s.d.event) {
    case 'OFTSent':
      s.activity('BRIDGE_OUT', a.fromAddress, a.amountSentLD, 0n, s.share);
      break;
    case 'OFTReceived':
      s.activity('BRIDGE_IN', a.toAddress, a.amountReceivedLD, 0n, s.share);
      break;
  }
  return false;
};

export const mapTeller: RoleMapper = (s, { tx }) => {
  const { a, share } = s;
  switch (s.d.event) {
    case 'Deposit':
      s.activity(
        'DEPOSIT',
        depositor(s.ctx, tx, share, a.receiver),
        a.shareAmount,
        a.depositAmount,
        a.depositAsset,
      );
      break;
    case 'MessageSent': {
      const burn = tx.find((x) => x.event === 'Exit' && x.log.address.toLowerCase() === share);
      s.activity('BRIDGE_OUT', (burn?.args as Args | undefined)?.from ?? a.to, a.shareAmount, 0n, share);
      break;
    }
    case 'MessageReceived':
      s.activity('BRIDGE_IN', a.to, a.shareAmount, 0n, share);
      break;
  }
  return false;
};

/** The real depositor: the proxy's share recipient when the teller's receiver is a PredicateProxy. */
function depositor(ctx: MapContext, tx: DecodedLog[], share: string, receiver: string): string {
  if (!ctx.contracts.predicateProxies.has(receiver)) return receiver;
  const onward = tx.find(
    (x) =>
      x.event === 'Transfer' && x.log.address.toLowerCase() === share && (x.args as Args).from === receiver,
  );
  return onward ? (onward.args as Args).to : receiver;
}
