/** Handlers of the fees endpoints (filled in by their issue). */
import type { HandlerMap } from './types.ts';

export const feesHandlers: HandlerMap = {};
