/** Handlers of the holders endpoints (filled in by their issue). */
import type { HandlerMap } from './types.ts';

export const holdersHandlers: HandlerMap = {};
