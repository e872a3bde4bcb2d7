/** What went wrong, when no envelope says it: the host did not answer, too slowly, or not with JSON. */
export type TransportCode = 'network_error' | 'timeout' | 'aborted' | 'invalid_response';

export interface CashgateErrorDetails {
  /** The envelope's code (`300`, `301`, `307`, `429`, `500`), the admin API's error code, or a {@link TransportCode}. */
  code: string;
  /** English text: which field, which rule. */
  msgEn: string;
  /** The same text in the merchant's language (equal to msgEn for transport errors). */
  msg?: string | undefined;
  /** HTTP status of the answer; undefined when none came. */
  status?: number | undefined;
  /** The `X-Request-Id` the server gave the request: quote it to the operator. */
  requestId?: string | undefined;
  /** Seconds the server asked to wait (`Retry-After`). */
  retryAfter?: number | undefined;
  /** How many requests were sent, retries included. */
  attempts?: number | undefined;
  /** Method and URL of the request. */
  request?: string | undefined;
  cause?: unknown;
}

/** Every failure of a Cashgate call: an envelope with a code other than 200, an admin API error, or a transport failure. */
export class CashgateError extends Error {
  override readonly name = 'CashgateError';
  readonly code: string;
  readonly msgEn: string;
  readonly msg: string;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly attempts: number;
  readonly request: string | undefined;

  constructor(details: CashgateErrorDetails) {
    const where = details.request === undefined ? '' : ` (${details.request})`;
    const id = details.requestId === undefined ? '' : ` [request ${details.requestId}]`;
    super(`Cashgate ${details.code}: ${details.msgEn}${where}${id}`, { cause: details.cause });
    this.code = details.code;
    this.msgEn = details.msgEn;
    this.msg = details.msg ?? details.msgEn;
    this.status = details.status;
    this.requestId = details.requestId;
    this.retryAfter = details.retryAfter;
    this.attempts = details.attempts ?? 1;
    this.request = details.request;
  }

  /** True when no answer (or no readable answer) came: the request may or may not have been carried out. */
  get isTransport(): boolean {
    return (['network_error', 'timeout', 'aborted', 'invalid_response'] as const).some((code) => code === this.code);
  }
}
