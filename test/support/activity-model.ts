/**
 * The shape and clock of the activity scenario (test/support/activity-scenario.ts builds it):
 * the lowest of the activity-* support files, so the families and the truth read it without
 * importing the scenario builder.
 */
import type {
  ActivityRecord,
  FeeRecord,
  RedemptionRecord,
  RegistryRecord,
  RoleRecord,
  TransferRecord,
} from '../../schemas/records.ts';

/** The API clock of the scenario (ms): 2026-10-20 12:00 UTC. */
export const NOW_MS = Date.UTC(2026, 9, 20, 12);
export const NOW = NOW_MS / 1000;

export interface ScenarioVault {
  record: RegistryRecord;
  /** Accountant rate (raw, `rateDecimals`) on `rateChain`. */
  rate: bigint;
  rateDecimals: number;
  rateChain: number;
}

export interface ActivityScenario {
  lines: string[];
  vaults: ScenarioVault[];
  /** Every published record, retractions (`removed: true`) included. */
  transfers: TransferRecord[];
  activity: ActivityRecord[];
  redemptions: RedemptionRecord[];
  roles: RoleRecord[];
  fees: FeeRecord[];
  evmHolders: string[];
  /** Holders of alpha's redemption requests, touched by nothing else. */
  redeemers: string[];
  solanaHolders: string[];
  queues: string[];
}
