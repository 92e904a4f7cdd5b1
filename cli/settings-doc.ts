/** Writes docs/configuration.md from the configuration's zod schema (core/settings/reference.ts). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configSchema } from '../core/config.ts';
import { settingsReference } from '../core/settings/reference.ts';

const out = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
writeFileSync(out, settingsReference(configSchema));
console.log(`wrote ${out}`);
