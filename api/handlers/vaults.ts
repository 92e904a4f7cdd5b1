/** Handlers of the vaults endpoints (filled in by their issue). */
import type { HandlerMap } from './types.ts';

export const vaultsHandlers: HandlerMap = {};
