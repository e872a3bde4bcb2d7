export {
  stringToSign,
  signString,
  computeSign,
  signsEqual,
  type SigningHeaders,
  type SignatureHeaders,
  type SignedParams,
} from './signing.js';
export { signedHeaders, type Credentials } from './headers.js';
export {
  verifyCallback,
  headerValue,
  NonceMemory,
  CallbackVerificationError,
  type CallbackRefusal,
  type HeadersLike,
  type VerifyCallbackOptions,
} from './callbacks.js';
export { CashgateError, type CashgateErrorDetails, type TransportCode } from './errors.js';
export { type TransportOptions } from './transport.js';
export { CashgateClient, MERCHANT_ENDPOINTS, type CallOptions, type ClientOptions, type Ping } from './client.js';
export * from './admin.js';
export * from './types.js';
