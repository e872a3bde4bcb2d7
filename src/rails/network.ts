import { errors as undiciErrors } from 'undici';

/**
 * Whether a failed call never reached the provider (refused connection, unknown host, failed TLS
 * handshake): then nothing was sent, so nothing can have started. Any other failure (a timeout, a
 * reset once sent) leaves the outcome unknown.
 */
export function isConnectError(error: unknown): boolean {
  if (error instanceof undiciErrors.ConnectTimeoutError) return true;
  const failure = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } };
  const raw = failure.code ?? failure.cause?.code;
  const code = typeof raw === 'string' ? raw : '';
  return (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN'
  );
}

/**
 * An OAuth access token kept until a minute before it expires, fetched once however many calls
 * wait for it (no stampede on the provider's token endpoint), and dropped when the provider
 * refuses it so the next call fetches a new one.
 */
export class TokenCache {
  #token: { value: string; refreshAt: number } | undefined;
  #fetching: Promise<string> | undefined;

  constructor(
    private readonly fetchToken: () => Promise<{ value: string; expiresInSeconds: number }>,
    private readonly now: () => number,
  ) {}

  async get(): Promise<string> {
    const token = this.#token;
    if (token !== undefined && token.refreshAt > this.now()) return token.value;
    this.#fetching ??= this.fetchToken()
      .then(({ value, expiresInSeconds }) => {
        this.#token = { value, refreshAt: this.now() + Math.max(0, expiresInSeconds - 60) * 1000 };
        return value;
      })
      .finally(() => (this.#fetching = undefined));
    return this.#fetching;
  }

  /** The provider refused the token: the next call fetches a new one. */
  drop(): void {
    this.#token = undefined;
  }
}
