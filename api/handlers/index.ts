/** Every endpoint handler, by endpoint key. */
import { activityHandlers } from './activity.ts';
import { buildtxHandlers } from './build-tx.ts';
import { feesHandlers } from './fees.ts';
import { historyHandlers } from './history.ts';
import { holdersHandlers } from './holders.ts';
import { mintHandlers } from './mint.ts';
import { untilBuilt } from './not-built.ts';
import type { HandlerMap } from './types.ts';
import { vaultsHandlers } from './vaults.ts';

/** Until the process is first ready, the endpoints whose data is not built answer 503 (not-built.ts). */
export const HANDLERS: HandlerMap = untilBuilt({
  ...vaultsHandlers,
  ...historyHandlers,
  ...holdersHandlers,
  ...activityHandlers,
  ...feesHandlers,
  ...mintHandlers,
  ...buildtxHandlers,
});
