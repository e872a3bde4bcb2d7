import { signedHeaders, type Credentials } from './headers.js';

/** Every /api/v3 response is this envelope. */
export interface Envelope<T = unknown> {
  code: string;
  success: boolean;
  msg: string;
  msgEn: string;
  data: T;
}

export interface ClientOptions extends Credentials {
  /** e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  fetch?: typeof fetch;
}

/** A minimal signed client for the Cashgate merchant API. */
export class CashgateClient {
  readonly #options: ClientOptions;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
  }

  /** POST a JSON body; the body's top-level members are signed. */
  async post<T = unknown>(path: string, body: Record<string, unknown> = {}): Promise<Envelope<T>> {
    const response = await this.#fetch(new URL(path, this.#options.baseUrl), {
      method: 'POST',
      headers: {
        ...signedHeaders(this.#options, body),
        'content-type': 'application/json;charset=utf-8',
      },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Envelope<T>;
  }

  /** GET with query parameters; the parameters are signed. */
  async get<T = unknown>(path: string, query: Record<string, string> = {}): Promise<Envelope<T>> {
    const url = new URL(path, this.#options.baseUrl);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    const response = await this.#fetch(url, {
      method: 'GET',
      headers: { ...signedHeaders(this.#options, query) },
    });
    return (await response.json()) as Envelope<T>;
  }
}
