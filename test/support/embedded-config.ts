/**
 * The config of a service run in a test's own process: the default config file on a new
 * temporary data directory, the API and SQL interface on ephemeral ports, no devnet, and `env`'s
 * overrides (`VAULTSTREAM__<key>__<subkey>`). The caller removes `dir`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '../../core/config.ts';

export function embeddedConfig(
  prefix: string,
  env: Record<string, string> = {},
): { cfg: Config; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const cfg = loadConfig(join(import.meta.dirname, '..', '..', 'config', 'default.yaml'), {
    VAULTSTREAM_DATA_DIR: join(dir, 'data'),
    API_PORT: '0',
    VAULTSTREAM__sql__http__port: '0',
    VAULTSTREAM__devnet__enabled: 'false',
    ...env,
  });
  return { cfg, dir };
}
