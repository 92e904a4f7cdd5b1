/** Handlers of the activity endpoints (filled in by their issue). */
import type { HandlerMap } from './types.ts';

export const activityHandlers: HandlerMap = {};
