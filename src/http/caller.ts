import type { Language } from './language.js';

declare module 'fastify' {
  interface FastifyRequest {
    merchantCaller: MerchantCaller | null;
    callerHints: CallerHints;
  }
}

/** Who is calling, once a signed request has passed every check. */
export interface MerchantCaller {
  merchantId: string;
  accessKey: string;
  language: Language;
  debug: boolean;
}

/** The access key of a debug-mode caller: its requests are recorded in the request log. */
export interface DebugKey {
  accessKey: string;
  merchantId: string;
  signedString: string | undefined;
  verified: boolean;
}

/** What the error handler needs to word a failure before authentication has finished. */
export interface CallerHints {
  language: Language | undefined;
  debug: boolean;
  /** Known once the access key is: the request is recorded in the request log when the key is in debug mode. */
  debugKey?: DebugKey;
}
