#!/usr/bin/env node
// The npm registry reachable here lacks other platforms' binary packages (biome CLIs,
// chDB's darwin/arm64 libraries), so `npm install` leaves them out of package-lock.json
// and `npm ci` then refuses the lock as out of sync. This adds lock entries for them,
// with their os/cpu/libc, exactly as a lock made with the full registry would have:
// npm ci skips them on this platform and installs them where they match.
import { readFileSync, writeFileSync } from 'node:fs';

const PLATFORM = {
  'android-arm64': { os: ['android'], cpu: ['arm64'] },
  'android-x64': { os: ['android'], cpu: ['x64'] },
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-arm64': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'linux-x64': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'win32-arm64': { os: ['win32'], cpu: ['arm64'] },
  'win32-x64': { os: ['win32'], cpu: ['x64'] },
};

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
let added = 0;
for (const meta of Object.values(lock.packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (lock.packages[key]) continue;
    const plat = Object.entries(PLATFORM).find(([suffix]) => dep.endsWith(`-${suffix}`));
    if (!plat) continue;
    lock.packages[key] = { version, ...(meta.dev ? { dev: true } : {}), optional: true, ...plat[1] };
    added++;
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lock: added ${added} platform entries`);
