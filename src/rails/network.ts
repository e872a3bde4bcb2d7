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
