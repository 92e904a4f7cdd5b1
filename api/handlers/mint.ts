/** Handlers of the mint endpoints (filled in by their issue). */
import type { HandlerMap } from './types.ts';

export const mintHandlers: HandlerMap = {};
