/**
 * Who may act: the authority's role grants (`roles`) and operator approvals (`operators`)
 * of the chain's OperatorRegistry and of each NestVault.
 */
import type { RoleMapper, VaultScope } from './map-context.ts';

export const mapAuthority: RoleMapper = (s) => {
  const { a } = s;
  if (s.d.event === 'UserRoleUpdated')
    s.emit('roles', { authority: s.c.address, user: a.user, role: a.role, enabled: a.enabled });
  return false;
};

export const mapOperatorRegistry: RoleMapper = (s) => {
  if (s.d.event === 'OperatorSet') operatorSet(s);
  return false;
};

/** The `operators` record of an `OperatorSet` (of the registry or of a NestVault). */
export function operatorSet(s: VaultScope): void {
  const { a } = s;
  s.emit('operators', {
    contract: s.c.address,
    source: s.d.role === 'operatorRegistry' ? 'REGISTRY' : 'VAULT',
    controller: a.controller,
    operator: a.operator,
    approved: a.approved,
  });
}
