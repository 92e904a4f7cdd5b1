/**
 * docs/configuration.md is generated from the zod schema: it must be current, every key must say
 * what it does, and every named environment variable must set a key the schema has.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../core/config.ts';
import { ENV_KEYS } from '../../core/settings/env.ts';
import { settingRows, settingsReference } from '../../core/settings/reference.ts';

const DOC = new URL('../../docs/configuration.md', import.meta.url);

describe('the settings reference', () => {
  it('docs/configuration.md is what the schema generates (else: npm run docs:settings)', () => {
    expect(readFileSync(DOC, 'utf8')).toBe(settingsReference(configSchema));
  });

  it('every key has a description (its own, or its section names it)', () => {
    const rows = settingRows(configSchema);
    expect(rows.length).toBeGreaterThan(100);
    expect(rows.filter((r) => r.description.trim() === '').map((r) => r.key)).toEqual([]);
  });

  it('every named environment variable sets a documented key', () => {
    const keys = new Set(settingRows(configSchema).map((r) => r.key));
    const orphans = Object.entries(ENV_KEYS)
      .filter(([, v]) => !keys.has(v.path.join('.')))
      .map(([name]) => name);
    expect(orphans).toEqual([]);
  });
});
