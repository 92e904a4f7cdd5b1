/** Every endpoint handler, by endpoint key. */
import { activityHandlers } from './activity.ts';
import { buildtxHandlers } from './build-tx.ts';
import { feesHandlers } from './fees.ts';
import { historyHandlers } from './history.ts';
import { holdersHandlers } from './holders.ts';
import { mintHandlers } from './mint.ts';
import type { HandlerMap } from './types.ts';
import { vaultsHandlers } from './vaults.ts';

export const HANDLERS: HandlerMap = {
  ...vaultsHandlers,
  ...historyHandlers,
  ...holdersHandlers,
  ...activityHandlers,
  ...feesHandlers,
  ...mintHandlers,
  ...buildtxHandlers,
};
