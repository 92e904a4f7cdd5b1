/**
 * Handlers of the activity endpoints: GET /vaults/recent-transactions,
 * GET /vaults/{slug}/failed-redemptions and GET /vaults/{slug}/roles-assignments,
 * cached per data version through `kit.respond` with the provenance of the answer (the oldest
 * chain watermark and the blocks behind it). Time-relative defaults come from the injected clock.
 */
import {
  makeFailedRedemptionsQuery,
  parsePath,
  parseQuery,
  recentTransactionsQuery,
  rolesAssignmentsQuery,
  slugPath,
} from '../http/params.ts';
import { failedRedemptions } from '../read/activity-failed-redemptions.ts';
import { roleAssignments } from '../read/activity-roles.ts';
import { recentTransactions } from '../read/activity-transactions.ts';
import { chainsProvenance, vaultsProvenance } from '../read/activity-watermark.ts';
import { vaultBySlug } from '../read/registry.ts';
import { vaultsWatermarked } from '../read/vaults-watermarked.ts';
import type { HandlerMap } from './types.ts';

const nowSeconds = (clock: () => number) => Math.floor(clock() / 1000);

export const activityHandlers: HandlerMap = {
  // SQL: views/plain/transactions.sql (read as its table, activity_by_time FINAL;
  // api/read/activity-transactions.ts); the vaults and their
  // watermark from metrics_vault_head (migration 025; api/read/vaults-watermarked.ts).
  'GET /vaults/recent-transactions': async (ctx, { store, kit, clock }) => {
    const q = parseQuery(recentTransactionsQuery, ctx);
    await kit.respond(ctx, async () => {
      const { vaults, ...ofVaults } = await vaultsWatermarked(store, { statuses: q.statuses });
      const data = await recentTransactions(store, vaults, {
        limit: q.limit,
        chainId: q.chainId,
        now: nowSeconds(clock),
      });
      const provenance = q.chainId === undefined ? ofVaults : await chainsProvenance(store, [q.chainId]);
      return { body: { data }, ...provenance };
    });
  },

  // SQL: views/plain/redemption_requests.sql, transfers.sql
  // (api/read/activity-failed-redemptions.ts), chain_watermarks.sql.
  'GET /vaults/{slug}/failed-redemptions': async (ctx, { store, kit, clock }) => {
    const { slug } = parsePath(slugPath, ctx);
    const q = parseQuery(makeFailedRedemptionsQuery(clock), ctx);
    await kit.respond(ctx, async () => {
      const vault = await vaultBySlug(store, slug);
      const rows = await failedRedemptions(store, vault, { ...q, now: nowSeconds(clock) });
      return {
        body: { data: { vaultAddress: vault.vaultAddress, failedRedemptions: rows } },
        ...(await vaultsProvenance(store, [vault])),
      };
    });
  },

  // SQL: views/plain/role_updates.sql (api/read/activity-roles.ts), chain_watermarks.sql.
  'GET /vaults/{slug}/roles-assignments': async (ctx, { store, kit }) => {
    const { slug } = parsePath(slugPath, ctx);
    parseQuery(rolesAssignmentsQuery, ctx);
    await kit.respond(
      ctx,
      async () => {
        const vault = await vaultBySlug(store, slug);
        return {
          body: {
            data: {
              vaultAddress: vault.vaultAddress,
              roleAssignments: await roleAssignments(store, vault),
              pageInfo: { endCursor: null, hasNextPage: false },
            },
          },
          ...(await vaultsProvenance(store, [vault])),
        };
      },
      // The legacy limit/cursor change nothing: every variant shares one entry.
      { key: `GET /vaults/${slug}/roles-assignments` },
    );
  },
};
