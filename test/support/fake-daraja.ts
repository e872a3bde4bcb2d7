/**
 * A local fake of Safaricom's Daraja API (M-Pesa) for Cashgate's tests: OAuth, M-Pesa Express (STK push and its
 * query), B2C payouts and Transaction Status, with the request validation, error bodies, asynchronous callbacks and
 * sample payloads of Daraja's published documentation (developer.safaricom.co.ke/apis). Tests script each phone's
 * outcome, inject gateway faults, and read back every request the fake received.
 */
import { readFileSync } from 'node:fs';
import { createPrivateKey, randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createServer as createNetServer } from 'node:net';

export const DARAJA_TEST = {
  consumerKey: 'cashgate-test-consumer-key',
  consumerSecret: 'cashgate-test-consumer-secret',
  stkShortcode: '174379',
  stkPasskey: 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919',
  b2cShortcode: '600997',
  initiatorName: 'testapi',
  initiatorPassword: 'Safaricom999!*!',
  /** The test certificate Cashgate encrypts the initiator password with (stands in for Safaricom's). */
  certificatePath: fileURLToPath(new URL('../fixtures/daraja/certificate.pem', import.meta.url)),
} as const;

/**
 * A second app on the same shortcodes (Daraja issues a consumer key and secret per app): a node given
 * it can be told apart from the others by the token requests it makes.
 */
export const DARAJA_SECOND_APP = {
  DARAJA_CONSUMER_KEY: 'cashgate-test-second-app-key',
  DARAJA_CONSUMER_SECRET: 'cashgate-test-second-app-secret',
} as const;

const APPS = new Set([
  `${DARAJA_TEST.consumerKey}:${DARAJA_TEST.consumerSecret}`,
  `${DARAJA_SECOND_APP.DARAJA_CONSUMER_KEY}:${DARAJA_SECOND_APP.DARAJA_CONSUMER_SECRET}`,
]);

const PRIVATE_KEY_PATH = fileURLToPath(new URL('../fixtures/daraja/private-key.pem', import.meta.url));

export type Endpoint = 'oauth' | 'stk' | 'stk-query' | 'b2c' | 'status';

export type Fault =
  'spike-arrest' | 'quota' | 'invalid-token' | 'server-error' | 'timeout' | 'refuse-connection-like-reset';

export interface StkScript {
  resultCode: number;
  resultDesc?: string;
  delayMs?: number;
  /** amount the payer actually paid (callback Amount), default the request's */
  paidAmount?: number;
  /** callback sent this many times (default 1); 0 = never sent (query still answers) */
  callbacks?: number;
  /** receipt, default random 10 uppercase alnum */
  receipt?: string;
}

export interface B2cScript {
  resultCode: number;
  resultDesc?: string;
  delayMs?: number;
  /** 'result' (default): Result to ResultURL; 'queue-timeout': a POST to QueueTimeOutURL instead; 'silent': nothing is sent */
  send?: 'result' | 'queue-timeout' | 'silent';
  /** result callback sent this many times (default 1) */
  callbacks?: number;
  receiverName?: string;
}

export interface RecordedRequest {
  endpoint: Endpoint;
  body: any;
  at: number;
  /** HTTP status answered; 0 when the answer was held (timeout) or the connection reset */
  status: number;
}

export interface Prompt {
  checkoutRequestId: string;
  merchantRequestId: string;
  body: any;
  state: 'pending' | 'done';
  resultCode?: number;
  /** Date.now() when its first callback was sent (benchmarks time the way from here to the merchant). */
  callbackSentAt?: number;
}

export interface Payout {
  originatorConversationId: string;
  conversationId: string;
  body: any;
  state: 'pending' | 'done';
  resultCode?: number;
  transactionId?: string;
}

export interface FakeDaraja {
  url: string;
  /** scripted outcome for prompts to this phone (PhoneNumber) — default {resultCode:0, delayMs:50} */
  scriptStk(phone: string, script: StkScript): void;
  /** scripted outcome for payouts to this phone (PartyB) — default {resultCode:0, delayMs:50} */
  scriptB2c(phone: string, script: B2cScript): void;
  /** the next `times` requests to `endpoint` (only those of the app `consumerKey`, when given) fail this way */
  failNext(endpoint: Endpoint, fault: Fault, times?: number, consumerKey?: string): void;
  /** every request received, in order: endpoint, parsed body (or query for oauth), time, HTTP status answered */
  readonly requests: RecordedRequest[];
  /** prompts accepted, with their CheckoutRequestID */
  readonly prompts: Prompt[];
  /** payouts accepted (by OriginatorConversationID) */
  readonly payouts: Payout[];
  /** tokens issued */
  readonly tokensIssued: number;
  /** invalidates every token issued so far (the next API call answers 404.001.03) */
  expireTokens(): void;
  /** token lifetime in seconds (default 3599) */
  tokenTtlSeconds: number;
  /** sends again (re-POSTs) the callback of a finished prompt as it was sent; returns the HTTP status answered (0: no answer) */
  resendStkCallback(checkoutRequestId: string): Promise<number>;
  /**
   * Sends again the message of a finished payout as it was sent (the Result, or the queue timeout notice); for a
   * 'silent' payout, the Result that was never sent. Returns the HTTP status answered (0: no answer).
   */
  resendB2cResult(originatorConversationId: string): Promise<number>;
  /** waits until no scheduled callback is pending */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** The STK push Password: base64(shortcode + passkey + timestamp). */
export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(shortcode + passkey + timestamp).toString('base64');
}

export async function startFakeDaraja(options: { now?: () => number } = {}): Promise<FakeDaraja> {
  const fake = new FakeDarajaServer(options.now ?? Date.now, loadRsaKey(readFileSync(PRIVATE_KEY_PATH, 'utf8')));
  await fake.listen();
  return fake;
}

// ---------------------------------------------------------------------------------------------------------------
// Daraja's texts

const HELD_ANSWER_MS = 30_000;
const STATUS_RESULT_DELAY_MS = 30;
const CALLBACK_TIMEOUT_MS = 10_000;
const DEFAULT_STK_SCRIPT: StkScript = { resultCode: 0, delayMs: 50 };
const DEFAULT_B2C_SCRIPT: B2cScript = { resultCode: 0, delayMs: 50 };
const DEFAULT_RECEIVER_NAME = 'NICHOLAS JOHN SONGOK';
const SUCCESS_DESC = 'The service request is processed successfully.';
const INITIATOR_INVALID = 2001;
/** The fake's own assumption: the docs give no result code for a transaction Transaction Status cannot find. */
const STATUS_NOT_FOUND = { code: 2032, desc: 'The transaction could not be found.' };

const STK_RESULT_DESCRIPTIONS: Partial<Record<number, string>> = {
  0: SUCCESS_DESC,
  1: 'The balance is insufficient for the transaction.',
  2: 'Declined due to limit rule.',
  3: 'Declined due to limit rule: greater than the maximum transaction amount.',
  4: 'Declined due to limit rule: would exceed daily transfer limit.',
  8: 'Declined due to limit rule: would exceed the maximum balance.',
  17: 'Rule limited.',
  1019: 'Transaction has expired',
  1025: 'An error occurred while sending a push request.',
  1032: 'Request cancelled by user',
  1037: 'DS timeout user cannot be reached',
  2001: 'The initiator information is invalid.',
  2028: 'The request is not permitted according to product assignment.',
  8006: 'The security credential is locked.',
};

const B2C_RESULT_DESCRIPTIONS: Partial<Record<number, string>> = {
  0: SUCCESS_DESC,
  1: 'The balance is insufficient for the transaction.',
  2: 'Declined due to limit rule',
  3: 'Declined due to limit rule: greater than the maximum transaction amount.',
  4: 'Declined due to limit rule: would exceed daily transfer limit',
  8: 'Declined due to limit rule: would exceed the maximum balance.',
  11: 'The DebitParty is in an invalid state.',
  21: 'The initiator is not allowed to initiate this request',
  2001: 'The initiator information is invalid.',
  2006: 'Declined due to account rule: The account status does not allow this transaction.',
  2028: 'The request is not permitted according to product assignment.',
  2040: "Credit Party customer type (Unregistered or Registered Customer) can't be supported by the service.",
  8006: 'The security credential is locked',
};

function resultDescription(table: Partial<Record<number, string>>, code: number, scripted: string | undefined): string {
  return scripted ?? table[code] ?? `The service request failed (result code ${code}).`;
}

/** A gateway error, answered as {"requestId","errorCode","errorMessage"}. */
class DarajaError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    readonly errorMessage: string,
  ) {
    super(errorMessage);
  }
}

const invalid = (field: string) => new DarajaError(400, '400.002.02', `Bad Request - Invalid ${field}`);
const invalidToken = () => new DarajaError(404, '404.001.03', 'Invalid Access Token');
const invalidPayload = () => new DarajaError(400, '400.002.05', 'Invalid Request Payload');
const invalidAuthentication = () => new DarajaError(400, '400.008.01', 'Invalid Authentication passed');
const stkRefusal = (message: string) => new DarajaError(500, '500.001.1001', message);

const FAULT_ERRORS: Record<Exclude<Fault, 'timeout' | 'refuse-connection-like-reset'>, () => DarajaError> = {
  'spike-arrest': () => new DarajaError(500, '500.003.02', 'Error Occurred: Spike Arrest Violation'),
  quota: () => new DarajaError(500, '500.003.03', 'Error Occurred: Quota Violation'),
  'invalid-token': invalidToken,
  'server-error': () => new DarajaError(500, '500.003.1001', 'Internal Server Error'),
};

// ---------------------------------------------------------------------------------------------------------------
// JSON text written by hand: Daraja writes amounts as 1500.00 and dates and phones as bare numbers

/** A number written exactly as given. */
class JsonNumber {
  constructor(readonly text: string) {}
}

type Json = string | number | boolean | null | JsonNumber | Json[] | { [key: string]: Json | undefined };

function jsonText(value: Json): string {
  if (value instanceof JsonNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value).flatMap(([key, field]) =>
      field === undefined ? [] : [`${JSON.stringify(key)}:${jsonText(field)}`],
    );
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value);
}

const decimal = (amount: number) => new JsonNumber(amount.toFixed(2));
const bareDigits = (digits: string) => new JsonNumber(digits);

// ---------------------------------------------------------------------------------------------------------------
// Time in Africa/Nairobi (UTC+3, no daylight saving)

const NAIROBI_OFFSET_MS = 3 * 3600_000;
const TIMESTAMP_WINDOW_MS = 3600_000;

function nairobiFields(ms: number) {
  const date = new Date(ms + NAIROBI_OFFSET_MS);
  const two = (n: number) => String(n).padStart(2, '0');
  return {
    year: String(date.getUTCFullYear()),
    month: two(date.getUTCMonth() + 1),
    day: two(date.getUTCDate()),
    hour: two(date.getUTCHours()),
    minute: two(date.getUTCMinutes()),
    second: two(date.getUTCSeconds()),
  };
}

/** yyyyMMddHHmmss */
function nairobiStamp(ms: number): string {
  const t = nairobiFields(ms);
  return `${t.year}${t.month}${t.day}${t.hour}${t.minute}${t.second}`;
}

/** dd.MM.yyyy HH:mm:ss, as in B2C's TransactionCompletedDateTime */
function nairobiDottedTime(ms: number): string {
  const t = nairobiFields(ms);
  return `${t.day}.${t.month}.${t.year} ${t.hour}:${t.minute}:${t.second}`;
}

/** The instant a yyyyMMddHHmmss Nairobi timestamp names, or undefined when it names no real time. */
function parseNairobiStamp(stamp: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(stamp);
  if (match === null) return undefined;
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = match.slice(1).map(Number);
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) - NAIROBI_OFFSET_MS;
  return nairobiStamp(ms) === stamp ? ms : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Identifiers

const DIGITS = '0123456789';
const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomText(alphabet: string, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += alphabet.charAt(randomInt(alphabet.length));
  return text;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const accessToken = () => randomText(ALNUM, 28);
/** Like "1c5b-4ba8-815c-ac45c57a3db01495926" (error requestId, Transaction Status OriginatorConversationID). */
const gatewayId = () => `${hex(2)}-${hex(2)}-${hex(2)}-${hex(6)}${randomText(DIGITS, 7)}`;
const merchantRequestId = () => `${randomInt(10_000, 100_000)}-${randomInt(10_000_000, 100_000_000)}-1`;
/** M-Pesa receipts and transaction IDs, like NLJ7RT61SV: 10 uppercase alphanumerics. */
const mpesaReceipt = () => randomText('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 1) + randomText(UPPER_ALNUM, 9);

function checkoutRequestId(now: number): string {
  const t = nairobiFields(now);
  return `ws_CO_${t.day}${t.month}${t.year}${t.hour}${t.minute}${t.second}${randomText(DIGITS, 10)}`;
}

function conversationId(now: number): string {
  return `AG_${nairobiStamp(now).slice(0, 8)}_${hex(10)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// SecurityCredential: RSA PKCS#1 v1.5 decryption (Node 20 refuses RSA_PKCS1_PADDING in privateDecrypt)

interface RsaKey {
  n: bigint;
  d: bigint;
  bytes: number;
}

const bigintOf = (bytes: Buffer) => BigInt(`0x${bytes.toString('hex') || '0'}`);

function loadRsaKey(pem: string): RsaKey {
  const jwk = createPrivateKey(pem).export({ format: 'jwk' });
  if (jwk.n === undefined || jwk.d === undefined) throw new Error('the Daraja test key is not an RSA private key');
  const modulus = Buffer.from(jwk.n, 'base64url');
  return { n: bigintOf(modulus), d: bigintOf(Buffer.from(jwk.d, 'base64url')), bytes: modulus.length };
}

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let square = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * square) % modulus;
    square = (square * square) % modulus;
  }
  return result;
}

/** The message inside 00 02 <at least 8 nonzero bytes> 00 <message>, or undefined when the block is not that. */
function decryptPkcs1(key: RsaKey, ciphertext: Buffer): Buffer | undefined {
  if (ciphertext.length !== key.bytes) return undefined;
  const c = bigintOf(ciphertext);
  if (c >= key.n) return undefined;
  const block = Buffer.from(
    modPow(c, key.d, key.n)
      .toString(16)
      .padStart(key.bytes * 2, '0'),
    'hex',
  );
  if (block[0] !== 0 || block[1] !== 2) return undefined;
  const separator = block.indexOf(0, 2);
  return separator >= 10 ? block.subarray(separator + 1) : undefined;
}

function credentialIsValid(key: RsaKey, initiator: string, credential: string): boolean {
  if (initiator !== DARAJA_TEST.initiatorName) return false;
  return decryptPkcs1(key, Buffer.from(credential, 'base64'))?.toString('utf8') === DARAJA_TEST.initiatorPassword;
}

// ---------------------------------------------------------------------------------------------------------------
// Request fields

type Body = Record<string, unknown>;

const MSISDN = /^254(7|1)\d{8}$/;
const SHORTCODE = /^\d{5,7}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A field given as a string, or as a number (Daraja's "Numeric" fields come either way). */
function textOf(body: Body, field: string): string | undefined {
  const value = body[field];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function matching(body: Body, field: string, pattern: RegExp): string {
  const value = textOf(body, field);
  if (value === undefined || !pattern.test(value)) throw invalid(field);
  return value;
}

function sized(body: Body, field: string, min: number, max: number): string {
  const value = textOf(body, field);
  if (value === undefined || value.length < min || value.length > max) throw invalid(field);
  return value;
}

function optionalSized(body: Body, field: string, min: number, max: number): string | undefined {
  return body[field] === undefined ? undefined : sized(body, field, min, max);
}

function oneOf(body: Body, field: string, values: readonly string[]): string {
  const value = textOf(body, field);
  if (value === undefined || !values.includes(value)) throw invalid(field);
  return value;
}

function equalTo(body: Body, field: string, pattern: RegExp, expected: string): string {
  const value = matching(body, field, pattern);
  if (value !== expected) throw invalid(field);
  return value;
}

function httpUrl(body: Body, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || !URL.canParse(value)) throw invalid(field);
  if (!['http:', 'https:'].includes(new URL(value).protocol)) throw invalid(field);
  return value;
}

/** A whole number of shillings, at least 1, as a number or a numeric string. */
function wholeAmount(body: Body, field: string): number {
  const value = body[field];
  const amount = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1) throw invalid(field);
  return amount;
}

function securityCredential(body: Body, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value === '' || !BASE64.test(value)) throw invalid(field);
  return value;
}

/** Timestamp: yyyyMMddHHmmss in Nairobi time, within an hour of now. */
function timestamp(body: Body, now: number): string {
  const value = textOf(body, 'Timestamp');
  const at = value === undefined ? undefined : parseNairobiStamp(value);
  if (value === undefined || at === undefined || Math.abs(at - now) > TIMESTAMP_WINDOW_MS) throw invalid('Timestamp');
  return value;
}

/** The shortcode must be Daraja's test merchant and the Password its base64(shortcode + passkey + Timestamp). */
function checkStkCredentials(body: Body, shortcode: string, stamp: string): void {
  if (shortcode !== DARAJA_TEST.stkShortcode) throw stkRefusal('Merchant does not exist');
  if (body.Password !== stkPassword(shortcode, DARAJA_TEST.stkPasskey, stamp)) throw stkRefusal('Wrong credentials');
}

interface StkPushRequest {
  amount: number;
  phone: string;
  callbackUrl: string;
}

function parseStkPush(body: Body, now: number): StkPushRequest {
  const shortcode = matching(body, 'BusinessShortCode', SHORTCODE);
  const stamp = timestamp(body, now);
  oneOf(body, 'TransactionType', ['CustomerPayBillOnline', 'CustomerBuyGoodsOnline']);
  const amount = wholeAmount(body, 'Amount');
  matching(body, 'PartyA', MSISDN);
  matching(body, 'PartyB', SHORTCODE);
  const phone = matching(body, 'PhoneNumber', MSISDN);
  const callbackUrl = httpUrl(body, 'CallBackURL');
  sized(body, 'AccountReference', 1, 12);
  optionalSized(body, 'TransactionDesc', 0, 13);
  checkStkCredentials(body, shortcode, stamp);
  return { amount, phone, callbackUrl };
}

function parseStkQuery(body: Body, now: number): string {
  const shortcode = matching(body, 'BusinessShortCode', SHORTCODE);
  const stamp = timestamp(body, now);
  const checkoutId = sized(body, 'CheckoutRequestID', 1, 100);
  checkStkCredentials(body, shortcode, stamp);
  return checkoutId;
}

interface B2cRequest {
  originatorConversationId: string;
  initiator: string;
  credential: string;
  amount: number;
  partyB: string;
  resultUrl: string;
  queueTimeoutUrl: string;
}

function parseB2c(body: Body): B2cRequest {
  const originatorConversationId = sized(body, 'OriginatorConversationID', 1, 100);
  const initiator = sized(body, 'InitiatorName', 1, 100);
  const credential = securityCredential(body, 'SecurityCredential');
  oneOf(body, 'CommandID', ['SalaryPayment', 'BusinessPayment', 'PromotionPayment']);
  const amount = wholeAmount(body, 'Amount');
  equalTo(body, 'PartyA', SHORTCODE, DARAJA_TEST.b2cShortcode);
  const partyB = matching(body, 'PartyB', MSISDN);
  sized(body, 'Remarks', 2, 100);
  const queueTimeoutUrl = httpUrl(body, 'QueueTimeOutURL');
  const resultUrl = httpUrl(body, 'ResultURL');
  optionalSized(body, 'Occassion', 1, 100);
  return { originatorConversationId, initiator, credential, amount, partyB, resultUrl, queueTimeoutUrl };
}

interface StatusRequest {
  initiator: string;
  credential: string;
  resultUrl: string;
  transactionId: string | undefined;
  originalConversationId: string | undefined;
}

function parseStatusQuery(body: Body): StatusRequest {
  const initiator = sized(body, 'Initiator', 1, 100);
  const credential = securityCredential(body, 'SecurityCredential');
  oneOf(body, 'CommandID', ['TransactionStatusQuery']);
  matching(body, 'PartyA', /^(\d{5,9}|254\d{9})$/);
  oneOf(body, 'IdentifierType', ['4']);
  const resultUrl = httpUrl(body, 'ResultURL');
  httpUrl(body, 'QueueTimeOutURL');
  sized(body, 'Remarks', 1, 100);
  optionalSized(body, 'Occasion', 0, 100);
  const transactionId = optionalSized(body, 'TransactionID', 1, 100);
  const synonym = body.OriginalConversationID === undefined ? 'OriginatorConversationID' : 'OriginalConversationID';
  const originalConversationId = optionalSized(body, synonym, 1, 100);
  if (transactionId === undefined && originalConversationId === undefined) throw invalid('TransactionID');
  return { initiator, credential, resultUrl, transactionId, originalConversationId };
}

function parseJsonBody(raw: string): Body {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalidPayload();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidPayload();
  return value as Body;
}

// ---------------------------------------------------------------------------------------------------------------
// Routes and replies

interface Reply {
  status: number;
  body: Json;
}

const ROUTES: Record<string, { endpoint: Endpoint; method: 'GET' | 'POST' }> = {
  '/oauth/v1/generate': { endpoint: 'oauth', method: 'GET' },
  '/mpesa/stkpush/v1/processrequest': { endpoint: 'stk', method: 'POST' },
  '/mpesa/stkpushquery/v1/query': { endpoint: 'stk-query', method: 'POST' },
  '/mpesa/b2c/v3/paymentrequest': { endpoint: 'b2c', method: 'POST' },
  '/mpesa/b2c/v1/paymentrequest': { endpoint: 'b2c', method: 'POST' },
  '/mpesa/transactionstatus/v1/query': { endpoint: 'status', method: 'POST' },
};

function errorReply(error: DarajaError): Reply {
  return {
    status: error.status,
    body: { requestId: gatewayId(), errorCode: error.errorCode, errorMessage: error.errorMessage },
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** The body as tests read it back: parsed JSON, or the raw text when it is not JSON. */
function recordedBody(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function basicCredentials(header: string | undefined): string | undefined {
  const encoded = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '')?.[1];
  return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
}

// ---------------------------------------------------------------------------------------------------------------
// Prompts and payouts

interface PromptRecord {
  entry: Prompt;
  phone: string;
  amount: number;
  callbackUrl: string;
  script: StkScript;
  /** the callback's JSON text, written when the prompt finished */
  callback?: string;
}

interface PayoutRecord {
  entry: Payout;
  partyB: string;
  amount: number;
  script: B2cScript;
  authentic: boolean;
  resultUrl: string;
  queueTimeoutUrl: string;
  transactionId: string;
  acceptedAt: number;
  finishedAt?: number;
  /** what was sent when the payout finished (for a silent payout: the Result it would have sent) */
  message?: { url: string; text: string };
}

function stkCallbackText(prompt: PromptRecord, finishedAt: number): string {
  const code = prompt.script.resultCode;
  const metadata = {
    Item: [
      { Name: 'Amount', Value: decimal(prompt.script.paidAmount ?? prompt.amount) },
      { Name: 'MpesaReceiptNumber', Value: prompt.script.receipt ?? mpesaReceipt() },
      { Name: 'Balance' },
      { Name: 'TransactionDate', Value: bareDigits(nairobiStamp(finishedAt)) },
      { Name: 'PhoneNumber', Value: bareDigits(prompt.phone) },
    ],
  };
  const stkCallback = {
    MerchantRequestID: prompt.entry.merchantRequestId,
    CheckoutRequestID: prompt.entry.checkoutRequestId,
    ResultCode: code,
    ResultDesc: resultDescription(STK_RESULT_DESCRIPTIONS, code, prompt.script.resultDesc),
    CallbackMetadata: code === 0 ? metadata : undefined,
  };
  return jsonText({ Body: { stkCallback } });
}

function payoutResultCode(payout: PayoutRecord): number {
  return payout.authentic ? payout.script.resultCode : INITIATOR_INVALID;
}

function b2cResultText(payout: PayoutRecord, finishedAt: number): string {
  const code = payoutResultCode(payout);
  const parameters = [
    { Key: 'TransactionAmount', Value: payout.amount },
    { Key: 'TransactionReceipt', Value: payout.transactionId },
    {
      Key: 'ReceiverPartyPublicName',
      Value: `${payout.partyB} - ${payout.script.receiverName ?? DEFAULT_RECEIVER_NAME}`,
    },
    { Key: 'TransactionCompletedDateTime', Value: nairobiDottedTime(finishedAt) },
    { Key: 'B2CUtilityAccountAvailableFunds', Value: new JsonNumber('8959269.60') },
    { Key: 'B2CWorkingAccountAvailableFunds', Value: new JsonNumber('1199371.00') },
    { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
    { Key: 'B2CChargesPaidAccountAvailableFunds', Value: new JsonNumber('-1980.00') },
  ];
  const result = {
    ResultType: 0,
    ResultCode: code,
    ResultDesc: resultDescription(
      B2C_RESULT_DESCRIPTIONS,
      code,
      payout.authentic ? payout.script.resultDesc : undefined,
    ),
    OriginatorConversationID: payout.entry.originatorConversationId,
    ConversationID: payout.entry.conversationId,
    TransactionID: payout.transactionId,
    ResultParameters: code === 0 ? { ResultParameter: parameters } : undefined,
    ReferenceData: {
      ReferenceItem: {
        Key: 'QueueTimeoutURL',
        Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit',
      },
    },
  };
  return jsonText({ Result: result });
}

function queueTimeoutText(payout: PayoutRecord): string {
  return jsonText({
    Result: {
      ResultType: 1,
      ResultCode: 'SVC0403',
      ResultDesc: 'Request timed out in the queue',
      OriginatorConversationID: payout.entry.originatorConversationId,
      ConversationID: payout.entry.conversationId,
      TransactionID: '',
    },
  });
}

/** What Transaction Status reports of a payout: its parties, times, amount and state. */
function statusParameters(payout: PayoutRecord): Json[] {
  const finished = payout.finishedAt;
  const state = finished === undefined ? 'Pending' : payoutResultCode(payout) === 0 ? 'Completed' : 'Failed';
  return [
    { Key: 'DebitPartyName', Value: `${DARAJA_TEST.b2cShortcode} - Safaricom Test` },
    { Key: 'CreditPartyName', Value: `${payout.partyB} - ${payout.script.receiverName ?? DEFAULT_RECEIVER_NAME}` },
    { Key: 'OriginatorConversationID', Value: payout.entry.originatorConversationId },
    { Key: 'InitiatedTime', Value: nairobiStamp(payout.acceptedAt) },
    { Key: 'DebitAccountType', Value: 'Utility Account' },
    { Key: 'DebitPartyCharges', Value: 'Fee For B2C Payment|KES|22.40' },
    { Key: 'TransactionReason' },
    { Key: 'ReasonType', Value: 'Business Payment to Customer via API' },
    { Key: 'TransactionStatus', Value: state },
    { Key: 'FinalisedTime', Value: finished === undefined ? undefined : nairobiStamp(finished) },
    { Key: 'Amount', Value: String(payout.amount) },
    { Key: 'ConversationID', Value: payout.entry.conversationId },
    { Key: 'ReceiptNo', Value: payout.transactionId },
  ];
}

interface StatusOutcome {
  code: number;
  desc: string;
  payout?: PayoutRecord;
}

function statusResultText(query: { conversationId: string; originatorConversationId: string }, outcome: StatusOutcome) {
  const payout = outcome.payout;
  return jsonText({
    Result: {
      ConversationID: query.conversationId,
      OriginatorConversationID: query.originatorConversationId,
      ResultCode: outcome.code,
      ResultDesc: outcome.desc,
      ResultType: 0,
      // Without a payout, the query's own M-Pesa transaction ID (as in the docs' sample).
      TransactionID: payout?.transactionId ?? mpesaReceipt(),
      ResultParameters: payout === undefined ? undefined : { ResultParameter: statusParameters(payout) },
      ReferenceData: { ReferenceItem: { Key: 'Occasion' } },
    },
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The server

class FakeDarajaServer implements FakeDaraja {
  url = '';
  tokenTtlSeconds = 3599;
  readonly requests: RecordedRequest[] = [];
  readonly prompts: Prompt[] = [];
  readonly payouts: Payout[] = [];
  private issued = 0;
  /** token → when it expires */
  private readonly tokens = new Map<string, number>();
  private readonly stkScripts = new Map<string, StkScript>();
  private readonly b2cScripts = new Map<string, B2cScript>();
  private readonly faults = new Map<Endpoint, { fault: Fault; consumerKey: string | undefined }[]>();
  private readonly promptRecords = new Map<string, PromptRecord>();
  private readonly payoutRecords = new Map<string, PayoutRecord>();
  /** scheduled callbacks: timer → settles its pending task */
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly pending = new Set<Promise<void>>();
  /** answers held by the 'timeout' fault */
  private readonly held = new Map<ServerResponse, NodeJS.Timeout>();
  private readonly aborter = new AbortController();
  private readonly server: Server;

  constructor(
    private readonly now: () => number,
    private readonly rsaKey: RsaKey,
  ) {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  get tokensIssued(): number {
    return this.issued;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  scriptStk(phone: string, script: StkScript): void {
    this.stkScripts.set(phone, { ...script });
  }

  scriptB2c(phone: string, script: B2cScript): void {
    this.b2cScripts.set(phone, { ...script });
  }

  failNext(endpoint: Endpoint, fault: Fault, times = 1, consumerKey?: string): void {
    const queue = this.faults.get(endpoint) ?? [];
    for (let i = 0; i < times; i++) queue.push({ fault, consumerKey });
    this.faults.set(endpoint, queue);
  }

  expireTokens(): void {
    this.tokens.clear();
  }

  async resendStkCallback(checkoutRequestId: string): Promise<number> {
    const prompt = this.promptRecords.get(checkoutRequestId);
    if (prompt?.callback === undefined) throw new Error(`no finished prompt ${checkoutRequestId}`);
    return this.post(prompt.callbackUrl, prompt.callback);
  }

  async resendB2cResult(originatorConversationId: string): Promise<number> {
    const message = this.payoutRecords.get(originatorConversationId)?.message;
    if (message === undefined) throw new Error(`no finished payout ${originatorConversationId}`);
    return this.post(message.url, message.text);
  }

  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async close(): Promise<void> {
    for (const [timer, settle] of this.timers) {
      clearTimeout(timer);
      settle();
    }
    this.timers.clear();
    this.aborter.abort();
    for (const [response, timer] of this.held) {
      clearTimeout(timer);
      response.destroy();
    }
    this.held.clear();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  // --- HTTP

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const target = new URL(request.url ?? '/', 'http://daraja.local');
    const raw = await readBody(request);
    const route = ROUTES[target.pathname];
    if (route === undefined) {
      this.send(response, errorReply(new DarajaError(404, '404.001.01', 'Resource not found')));
      return;
    }
    const body = route.endpoint === 'oauth' ? Object.fromEntries(target.searchParams) : recordedBody(raw);
    const record: RecordedRequest = { endpoint: route.endpoint, body, at: this.now(), status: 0 };
    this.requests.push(record);
    const fault = this.takeFault(route.endpoint, request.headers.authorization);
    if (fault === 'refuse-connection-like-reset') {
      request.socket.destroy();
      return;
    }
    const reply =
      fault === undefined || fault === 'timeout'
        ? this.process(route, request, target.searchParams, raw)
        : errorReply(FAULT_ERRORS[fault]());
    if (fault === 'timeout') {
      this.hold(response, reply);
      return;
    }
    record.status = reply.status;
    this.send(response, reply);
  }

  /** The first fault waiting for `endpoint` that applies to a request made with `authorization`. */
  private takeFault(endpoint: Endpoint, authorization: string | undefined): Fault | undefined {
    const queue = this.faults.get(endpoint) ?? [];
    const app = basicCredentials(authorization)?.split(':')[0];
    const at = queue.findIndex((f) => f.consumerKey === undefined || f.consumerKey === app);
    return at < 0 ? undefined : queue.splice(at, 1)[0]?.fault;
  }

  private process(
    route: (typeof ROUTES)[string],
    request: IncomingMessage,
    query: URLSearchParams,
    raw: string,
  ): Reply {
    try {
      if (request.method !== route.method) throw new DarajaError(405, '405.001', 'Method Not Allowed');
      if (route.endpoint === 'oauth') return this.generateToken(request.headers.authorization, query);
      this.authorize(request.headers.authorization);
      const body = parseJsonBody(raw);
      switch (route.endpoint) {
        case 'stk':
          return this.stkPush(body);
        case 'stk-query':
          return this.stkQuery(body);
        case 'b2c':
          return this.b2cPayment(body);
        case 'status':
          return this.transactionStatus(body);
      }
    } catch (error) {
      if (error instanceof DarajaError) return errorReply(error);
      return errorReply(new DarajaError(500, '500.003.1001', 'Internal Server Error'));
    }
  }

  private send(response: ServerResponse, reply: Reply): void {
    if (response.destroyed) return;
    response.writeHead(reply.status, { 'content-type': 'application/json' });
    response.end(jsonText(reply.body));
  }

  /** The request reached Daraja and was processed; its answer is lost for 30 s (or until close). */
  private hold(response: ServerResponse, reply: Reply): void {
    const timer = setTimeout(() => {
      this.held.delete(response);
      this.send(response, reply);
    }, HELD_ANSWER_MS);
    this.held.set(response, timer);
  }

  // --- OAuth

  private generateToken(authorization: string | undefined, query: URLSearchParams): Reply {
    if (!APPS.has(basicCredentials(authorization) ?? '')) throw invalidAuthentication();
    if (query.get('grant_type') !== 'client_credentials') {
      throw new DarajaError(400, '400.008.02', 'Invalid grant type passed');
    }
    const token = accessToken();
    this.tokens.set(token, this.now() + this.tokenTtlSeconds * 1000);
    this.issued++;
    return { status: 200, body: { access_token: token, expires_in: String(this.tokenTtlSeconds) } };
  }

  private authorize(authorization: string | undefined): void {
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    if (expiresAt === undefined || this.now() >= expiresAt) throw invalidToken();
  }

  // --- M-Pesa Express

  private stkPush(body: Body): Reply {
    const request = parseStkPush(body, this.now());
    const busy = [...this.promptRecords.values()].some((p) => p.phone === request.phone && p.entry.state === 'pending');
    if (busy) {
      throw stkRefusal('Unable to lock subscriber, a transaction is already in process for the current subscriber');
    }
    const prompt = this.createPrompt(request, body);
    return {
      status: 200,
      body: {
        MerchantRequestID: prompt.entry.merchantRequestId,
        CheckoutRequestID: prompt.entry.checkoutRequestId,
        ResponseCode: '0',
        ResponseDescription: 'Success. Request accepted for processing',
        CustomerMessage: 'Success. Request accepted for processing',
      },
    };
  }

  private createPrompt(request: StkPushRequest, body: Body): PromptRecord {
    const entry: Prompt = {
      checkoutRequestId: checkoutRequestId(this.now()),
      merchantRequestId: merchantRequestId(),
      body,
      state: 'pending',
    };
    const script = { ...(this.stkScripts.get(request.phone) ?? DEFAULT_STK_SCRIPT) };
    const prompt: PromptRecord = { entry, script, ...request };
    this.prompts.push(entry);
    this.promptRecords.set(entry.checkoutRequestId, prompt);
    this.schedule(script.delayMs ?? 0, () => this.finishPrompt(prompt));
    return prompt;
  }

  private async finishPrompt(prompt: PromptRecord): Promise<void> {
    prompt.callback = stkCallbackText(prompt, this.now());
    prompt.entry.state = 'done';
    prompt.entry.resultCode = prompt.script.resultCode;
    prompt.entry.callbackSentAt = Date.now();
    for (let i = 0; i < (prompt.script.callbacks ?? 1); i++) await this.post(prompt.callbackUrl, prompt.callback);
  }

  private stkQuery(body: Body): Reply {
    const checkoutId = parseStkQuery(body, this.now());
    const prompt = this.promptRecords.get(checkoutId);
    if (prompt === undefined) throw invalid('CheckoutRequestID');
    if (prompt.entry.state === 'pending') throw stkRefusal('The transaction is being processed');
    const code = prompt.script.resultCode;
    return {
      status: 200,
      body: {
        ResponseCode: '0',
        // Daraja's own spelling ("successsfully") in its live answers.
        ResponseDescription: 'The service request has been accepted successsfully',
        MerchantRequestID: prompt.entry.merchantRequestId,
        CheckoutRequestID: prompt.entry.checkoutRequestId,
        ResultCode: String(code),
        ResultDesc: resultDescription(STK_RESULT_DESCRIPTIONS, code, prompt.script.resultDesc),
      },
    };
  }

  // --- B2C

  private b2cPayment(body: Body): Reply {
    const request = parseB2c(body);
    if (this.payoutRecords.has(request.originatorConversationId)) {
      throw new DarajaError(500, '500.002.1001', 'Duplicate OriginatorConversationID.');
    }
    const payout = this.createPayout(request, body);
    return {
      status: 200,
      body: {
        ConversationID: payout.entry.conversationId,
        OriginatorConversationID: payout.entry.originatorConversationId,
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      },
    };
  }

  private createPayout(request: B2cRequest, body: Body): PayoutRecord {
    const entry: Payout = {
      originatorConversationId: request.originatorConversationId,
      conversationId: conversationId(this.now()),
      body,
      state: 'pending',
    };
    const script = { ...(this.b2cScripts.get(request.partyB) ?? DEFAULT_B2C_SCRIPT) };
    const payout: PayoutRecord = {
      entry,
      script,
      partyB: request.partyB,
      amount: request.amount,
      // A wrong initiator or credential is accepted here; its Result says 2001, as Daraja's does.
      authentic: credentialIsValid(this.rsaKey, request.initiator, request.credential),
      resultUrl: request.resultUrl,
      queueTimeoutUrl: request.queueTimeoutUrl,
      transactionId: mpesaReceipt(),
      acceptedAt: this.now(),
    };
    this.payouts.push(entry);
    this.payoutRecords.set(entry.originatorConversationId, payout);
    this.schedule(script.delayMs ?? 0, () => this.finishPayout(payout));
    return payout;
  }

  private async finishPayout(payout: PayoutRecord): Promise<void> {
    const finishedAt = this.now();
    payout.finishedAt = finishedAt;
    payout.entry.state = 'done';
    payout.entry.resultCode = payoutResultCode(payout);
    payout.entry.transactionId = payout.transactionId;
    const send = payout.script.send ?? 'result';
    payout.message =
      send === 'queue-timeout'
        ? { url: payout.queueTimeoutUrl, text: queueTimeoutText(payout) }
        : { url: payout.resultUrl, text: b2cResultText(payout, finishedAt) };
    const times = send === 'silent' ? 0 : send === 'queue-timeout' ? 1 : (payout.script.callbacks ?? 1);
    for (let i = 0; i < times; i++) await this.post(payout.message.url, payout.message.text);
  }

  // --- Transaction Status

  private transactionStatus(body: Body): Reply {
    const request = parseStatusQuery(body);
    const query = { conversationId: conversationId(this.now()), originatorConversationId: gatewayId() };
    this.schedule(STATUS_RESULT_DELAY_MS, () =>
      this.post(request.resultUrl, statusResultText(query, this.status(request))),
    );
    return {
      status: 200,
      body: {
        OriginatorConversationID: query.originatorConversationId,
        ConversationID: query.conversationId,
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      },
    };
  }

  private status(request: StatusRequest): StatusOutcome {
    if (!credentialIsValid(this.rsaKey, request.initiator, request.credential)) {
      return { code: INITIATOR_INVALID, desc: B2C_RESULT_DESCRIPTIONS[INITIATOR_INVALID] ?? '' };
    }
    const payout = this.findPayout(request);
    return payout === undefined ? STATUS_NOT_FOUND : { code: 0, desc: SUCCESS_DESC, payout };
  }

  private findPayout(request: StatusRequest): PayoutRecord | undefined {
    const byConversation =
      request.originalConversationId === undefined ? undefined : this.payoutRecords.get(request.originalConversationId);
    return byConversation ?? [...this.payoutRecords.values()].find((p) => p.transactionId === request.transactionId);
  }

  // --- Callbacks

  /** Runs `task` after `delayMs`; idle() waits for it, close() cancels it. */
  private schedule(delayMs: number, task: () => Promise<unknown>): void {
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        task().then(
          () => resolve(),
          () => resolve(),
        );
      }, delayMs);
      this.timers.set(timer, resolve);
    });
    this.pending.add(done);
    void done.then(() => this.pending.delete(done));
  }

  /** POSTs a callback as application/json; Daraja does not retry, so a failure only answers 0. */
  private async post(url: string, text: string): Promise<number> {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
        signal: AbortSignal.any([this.aborter.signal, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  }
}

/** A port nothing listens on now, so PUBLIC_BASE_URL can name it before the server starts. */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** The environment of a gateway on this fake Daraja, listening on `port` where Daraja calls it back. */
export function darajaGatewayEnv(daraja: Pick<FakeDaraja, 'url'>, port: number): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    KENYA_RAIL: 'daraja',
    DARAJA_BASE_URL: daraja.url,
    DARAJA_CONSUMER_KEY: DARAJA_TEST.consumerKey,
    DARAJA_CONSUMER_SECRET: DARAJA_TEST.consumerSecret,
    DARAJA_STK_SHORTCODE: DARAJA_TEST.stkShortcode,
    DARAJA_STK_PASSKEY: DARAJA_TEST.stkPasskey,
    DARAJA_B2C_SHORTCODE: DARAJA_TEST.b2cShortcode,
    DARAJA_INITIATOR_NAME: DARAJA_TEST.initiatorName,
    DARAJA_INITIATOR_PASSWORD: DARAJA_TEST.initiatorPassword,
    DARAJA_CERTIFICATE: DARAJA_TEST.certificatePath,
  };
}

/**
 * A gateway process's environment for Daraja behind `daraja` on a free port, with the default leases,
 * Daraja's answers awaited 30 s and results 60 s (crash and recovery tests and benches).
 */
export async function darajaNodeEnv(
  daraja: Pick<FakeDaraja, 'url'>,
  shared: Record<string, string>,
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  return {
    ...shared,
    ...darajaGatewayEnv(daraja, await freePort()),
    DARAJA_TIMEOUT_MS: '30000',
    DARAJA_RESULT_TIMEOUT_MS: '60000',
    CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    ...extra,
  };
}
