#!/usr/bin/env -S node --max-semi-space-size=64
// A 64 MB young generation: the consumers allocate short-lived rows by the million, and a
// larger nursery cut the pipeline benchmark's CPU by ~10% (fewer scavenges promoting live batches).
// Runs the TypeScript CLI through tsx's loader so the package needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
