/** Handlers of the history endpoints (filled in by their issue). */
import type { HandlerMap } from './types.ts';

export const historyHandlers: HandlerMap = {};
