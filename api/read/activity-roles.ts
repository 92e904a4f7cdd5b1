/**
 * GET /vaults/{slug}/roles-assignments: the latest `UserRoleUpdated` state per
 * (chain, user, role), named from the vault's role map (registry `roles`, id to name)
 * or the Nest numbering (RolesAuthority role ids); an id in
 * neither is `ROLE_<n>` (docs/architecture.md, Endpoint semantics).
 */
import type { Store } from '../../store/client.ts';
import type { RegistryVault } from './registry.ts';

/** Nest's role ids (`nest:script/Constants.sol`), the default role map. */
export const NEST_ROLES: Readonly<Record<number, string>> = {
  0: 'OWNER',
  1: 'STRATEGIST',
  2: 'MANAGER',
  3: 'TELLER',
  4: 'UPDATE_EXCHANGE_RATE',
  5: 'SOLVER',
  6: 'PAUSER',
  7: 'PREDICATE_PROXY',
  10: 'QUEUE',
  11: 'CAN_SOLVE',
  12: 'COMPOSER',
  13: 'RELAYER',
  14: 'KEEPER',
};

export interface RoleAssignment {
  vaultAddress: string;
  user: string;
  role: string;
  enabled: boolean;
  chainId: number;
}

/** The name of role `id` for vault `v`. */
export function roleName(v: RegistryVault, id: number): string {
  const map = v.info.roles;
  if (map) return map[String(id)] ?? `ROLE_${id}`;
  return NEST_ROLES[id] ?? `ROLE_${id}`;
}

/** Every assignment of `v`, by chain, user and role id. */
export async function roleAssignments(store: Store, v: RegistryVault): Promise<RoleAssignment[]> {
  const rows = await store.query<{ chain_id: number; user: string; role: number; enabled: number }>(
    `SELECT chain_id, user, role, argMax(enabled, (block_time, block_number, log_index)) AS enabled
     FROM ${store.database}.role_updates WHERE vault = {slug:String}
     GROUP BY chain_id, user, role ORDER BY chain_id, user, role`,
    { slug: v.slug },
  );
  return rows.map((r) => ({
    vaultAddress: v.vaultAddress,
    user: r.user,
    role: roleName(v, Number(r.role)),
    enabled: Number(r.enabled) === 1,
    chainId: Number(r.chain_id),
  }));
}
