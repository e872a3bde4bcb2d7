export {
  stringToSign,
  signString,
  computeSign,
  signsEqual,
  verifyCallback,
  type SigningHeaders,
  type SignatureHeaders,
  type SignedParams,
} from './signing.js';
export { signedHeaders, type Credentials } from './headers.js';
export { CashgateClient, type ClientOptions, type Envelope } from './client.js';
