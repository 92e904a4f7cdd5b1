/**
 * docker-compose.yml and the ClickHouse users it mounts, read the way compose reads them
 * (variable interpolation: `${VAR}`, `${VAR:-default}`, `${VAR:?error}`): the passwords
 * have no silent defaults, and both users admit connections only from the compose network.
 * (The stack itself runs in test/containers/compose-stack.test.ts where Docker exists.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../support/cli.ts';

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
const usersXml = readFileSync(join(ROOT, 'deploy/clickhouse/users.d/vaultstream.xml'), 'utf8');

/** Compose's interpolation of one string; a `${VAR:?message}` with VAR unset or empty throws the message. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (_m, name, op, arg) => {
    const v = env[name];
    const unset = op?.startsWith(':') ? !v : v === undefined;
    if (op?.endsWith('?') && unset) throw new Error(`required variable ${name} is missing a value: ${arg}`);
    if (op?.endsWith('-') && unset) return arg;
    return v ?? '';
  });
}

/** Every string in the file, interpolated; the errors compose would print, in order. */
function resolveAll(env: Record<string, string>): { errors: string[]; value: unknown } {
  const errors: string[] = [];
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      try {
        return interpolate(v, env);
      } catch (e) {
        errors.push((e as Error).message);
        return undefined;
      }
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { errors, value: walk(compose) };
}

describe('docker-compose.yml', () => {
  it('refuses to start without the ClickHouse and Grafana passwords (no silent dev defaults)', () => {
    const { errors } = resolveAll({});
    expect([...new Set(errors)].sort()).toEqual([
      'required variable CLICKHOUSE_ANALYST_PASSWORD is missing a value: set CLICKHOUSE_ANALYST_PASSWORD (the read-only ClickHouse user analyst), e.g. in .env',
      'required variable CLICKHOUSE_WRITER_PASSWORD is missing a value: set CLICKHOUSE_WRITER_PASSWORD (the ClickHouse user vaultstream), e.g. in .env',
      "required variable GRAFANA_ADMIN_PASSWORD is missing a value: set GRAFANA_ADMIN_PASSWORD (Grafana's admin user), e.g. in .env",
    ]);
    expect(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')).not.toMatch(/vaultstream-dev|analyst-dev/);
  });

  it('passes the given passwords to ClickHouse, every vaultstream role and Grafana', () => {
    const { errors, value } = resolveAll({
      CLICKHOUSE_WRITER_PASSWORD: 'w1',
      CLICKHOUSE_ANALYST_PASSWORD: 'a1',
      GRAFANA_ADMIN_PASSWORD: 'g1',
    });
    expect(errors).toEqual([]);
    const services = (value as { services: Record<string, { environment?: Record<string, string> }> })
      .services;
    expect(services.clickhouse.environment).toMatchObject({
      CLICKHOUSE_WRITER_PASSWORD: 'w1',
      CLICKHOUSE_ANALYST_PASSWORD: 'a1',
    });
    for (const role of ['migrate', 'ingest', 'streams', 'api'])
      expect(services[role].environment?.CLICKHOUSE_PASSWORD, role).toBe('w1');
    // Grafana reads the views as the analyst; its own admin has the password given.
    expect(services.grafana.environment).toMatchObject({
      GF_SECURITY_ADMIN_PASSWORD: 'g1',
      CLICKHOUSE_USER: 'analyst',
      CLICKHOUSE_PASSWORD: 'a1',
    });
  });

  it('ClickHouse admits its users only from the compose network', () => {
    const { value } = resolveAll({ CLICKHOUSE_WRITER_PASSWORD: 'w', CLICKHOUSE_ANALYST_PASSWORD: 'a' });
    const v = value as {
      networks: { default: { ipam: { config: { subnet: string }[] } } };
      services: Record<string, { environment?: Record<string, string>; networks?: unknown }>;
    };
    const subnet = v.networks.default.ipam.config[0].subnet;
    expect(subnet).toBe('172.28.0.0/16');
    expect(v.services.clickhouse.environment?.CLICKHOUSE_ALLOWED_NETWORK).toBe(subnet);
    // Every service is on the default network (none names another).
    for (const [name, s] of Object.entries(v.services)) expect(s.networks, name).toBeUndefined();
    // Another subnet moves both together.
    const moved = resolveAll({
      CLICKHOUSE_WRITER_PASSWORD: 'w',
      CLICKHOUSE_ANALYST_PASSWORD: 'a',
      VAULTSTREAM_SUBNET: '10.99.0.0/24',
    }).value as typeof v;
    expect(moved.networks.default.ipam.config[0].subnet).toBe('10.99.0.0/24');
    expect(moved.services.clickhouse.environment?.CLICKHOUSE_ALLOWED_NETWORK).toBe('10.99.0.0/24');
  });
});

describe('deploy/clickhouse/users.d/vaultstream.xml', () => {
  const body = usersXml.replace(/<!--[\s\S]*?-->/g, '');
  const users = body.match(/<users>([\s\S]*)<\/users>/)?.[1] ?? '';
  const entries = [...users.matchAll(/<(\w+)>\s*<password[\s\S]*?<\/\1>/g)];

  it('declares vaultstream and analyst, each admitted only from CLICKHOUSE_ALLOWED_NETWORK', () => {
    expect(entries.map((m) => m[1])).toEqual(['vaultstream', 'analyst']);
    for (const [user] of entries) {
      const networks = user.match(/<networks>([\s\S]*?)<\/networks>/)?.[1].trim();
      expect(networks).toBe('<ip from_env="CLICKHOUSE_ALLOWED_NETWORK"/>');
    }
    expect(body).not.toMatch(/::\/0|0\.0\.0\.0\/0|<host_regexp>/);
  });
});
