/**
 * Settings of the local devnet (`devnet` in the config file): anvil nodes, the
 * project's contracts and the activity simulator. Owned by the devnet role.
 */
import { z } from 'zod';

export const devnetSchema = z
  .object({
    /** Start anvil nodes, deploy the contracts and run the simulator in this process. */
    enabled: z.boolean().default(false),
  })
  .prefault({});
