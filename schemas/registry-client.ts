import { VaultstreamError } from '../core/errors.ts';

/**
 * A minimal Confluent Schema Registry client: register a subject's schema to get
 * its id, and fetch a schema by id. Both are cached; ids never change meaning.
 */
export class SchemaRegistryClient {
  private readonly byId = new Map<number, Promise<string>>();
  private readonly bySubject = new Map<string, Promise<number>>();

  constructor(
    private readonly baseUrl: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  /** Registers (idempotently) `schema` under `subject` and returns its global id. */
  register(subject: string, schema: string): Promise<number> {
    const k = `${subject}\u0000${schema}`;
    let p = this.bySubject.get(k);
    if (!p) {
      p = this.call(`/subjects/${encodeURIComponent(subject)}/versions`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
        body: JSON.stringify({ schema }),
      }).then((b) => Number((b as { id: number }).id));
      p.catch(() => this.bySubject.delete(k));
      this.bySubject.set(k, p);
    }
    return p;
  }

  /** The schema text registered under `id`. */
  schemaById(id: number): Promise<string> {
    let p = this.byId.get(id);
    if (!p) {
      p = this.call(`/schemas/ids/${id}`, { method: 'GET' }).then((b) =>
        String((b as { schema: string }).schema),
      );
      p.catch(() => this.byId.delete(id));
      this.byId.set(id, p);
    }
    return p;
  }

  private async call(path: string, init: RequestInit): Promise<unknown> {
    let res: Response;
    try {
      res = await this.fetchImpl(new URL(path, this.baseUrl), {
        ...init,
        signal: AbortSignal.timeout(10_000),
      });
    } catch (cause) {
      throw new VaultstreamError('BUS_UNAVAILABLE', `schema registry ${this.baseUrl} unreachable`, { cause });
    }
    const body = await res.json().catch(() => ({}));
    if (res.status === 404)
      throw new VaultstreamError('SCHEMA_UNKNOWN', `schema registry: ${path} not found`);
    if (!res.ok)
      throw new VaultstreamError('BUS_UNAVAILABLE', `schema registry ${path}: HTTP ${res.status}`, {
        details: { body },
        retryable: res.status >= 500 || res.status === 429,
      });
    return body;
  }
}
