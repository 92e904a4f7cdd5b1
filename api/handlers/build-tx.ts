/** Handlers of the build-tx endpoints (filled in by their issue). */
import type { HandlerMap } from './types.ts';

export const buildtxHandlers: HandlerMap = {};
