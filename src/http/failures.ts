import { hasMessage, translator, type Translator } from '../i18n/messages.js';
import type { Language } from './language.js';

/** Response codes of the merchant API (DESIGN §1.5). */
export type ApiCode = '200' | '300' | '301' | '307' | '429' | '500';

export const HTTP_STATUS_OF_CODE: Record<ApiCode, number> = {
  '200': 200,
  '300': 400,
  '301': 403,
  '307': 401,
  '429': 429,
  '500': 500,
};

export type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';

/** Named formats a field can be required to follow; each has a localized description. */
export type FieldFormat =
  | 'url'
  | 'currencyCode'
  | 'ipOrCidr'
  | 'kenyanMobile'
  | 'cpf'
  | 'cnpj'
  | 'pixPhone'
  | 'pixEmail'
  | 'pixEvp'
  | 'bankAccount'
  | 'bankAgency'
  | 'bankName'
  | 'pairedWith'
  | 'tronAddress'
  | 'evmAddress'
  | 'tronTxId'
  | 'evmTxHash'
  | 'identifier';

/** The rule a field broke, structured so it can be said in every language. */
export type FieldRule =
  | { rule: 'required' }
  | { rule: 'type'; expected: readonly JsonType[] }
  | { rule: 'minItems'; min: number }
  | { rule: 'maxItems'; max: number }
  | { rule: 'invalid' }
  | { rule: 'maxLength'; max: number }
  | { rule: 'minLength'; min: number }
  | { rule: 'oneOf'; allowed: readonly string[] }
  | { rule: 'format'; format: FieldFormat }
  | { rule: 'minimum'; min: number }
  | { rule: 'maximum'; max: number }
  /** A money amount: plain decimal text or number, no exponent, at most `decimals` places, at least `minimum`. */
  | { rule: 'amount'; decimals: number; minimum: string; maximum: string; signed: boolean };

/**
 * What is wrong with a request refused before any route sees it: its path, its Host, or its HTTP
 * framing (the last ones found by Node's parser, answered from the connection).
 */
export type RequestProblem =
  | 'bad_url'
  | 'param_too_long'
  | 'host_missing'
  | 'expectation'
  | 'header_overflow'
  | 'invalid_method'
  | 'bad_framing'
  | 'timeout'
  | 'aborted'
  | 'control_in_path'
  | 'nul_character';

/** Every expected failure of the merchant API, as a typed value. */
export type ApiFailure =
  | { kind: 'header_missing'; header: string }
  | { kind: 'header_malformed'; header: string; expected: 'timestamp' | 'nonce' | 'sign' | 'access_key' }
  | { kind: 'unknown_access_key' }
  | { kind: 'signature_mismatch' }
  | { kind: 'timestamp_outside_window'; windowSeconds: number; serverTime: number }
  | { kind: 'nonce_reused' }
  | { kind: 'key_not_active'; activeAt: number }
  | { kind: 'key_disabled' }
  | { kind: 'key_deleted' }
  | { kind: 'ip_not_whitelisted'; ip: string }
  | { kind: 'permission_denied'; permission: string }
  | { kind: 'rate_limited'; limitPerMinute: number; retryAfterSeconds: number }
  | { kind: 'route_not_found'; method: string; path: string }
  | { kind: 'unsupported_media_type'; contentType: string }
  | { kind: 'body_not_json'; detail: string }
  | { kind: 'body_too_large'; limitBytes: number }
  | { kind: 'body_not_object' }
  | { kind: 'body_too_deep'; member: string; limit: number }
  | { kind: 'text_not_unicode'; member: string }
  | { kind: 'text_has_nul'; member: string }
  | { kind: 'charset_not_utf8'; charset: string }
  | { kind: 'malformed_request'; problem: RequestProblem }
  | { kind: 'unknown_fields'; fields: readonly string[] }
  | { kind: 'invalid_field'; field: string; rule: FieldRule }
  | { kind: 'order_not_found' }
  | { kind: 'voucher_unavailable'; orderStatus: string }
  | { kind: 'duplicate_external_order_id'; externalOrderId: string }
  | {
      kind: 'insufficient_balance';
      purpose: 'transfer' | 'exchange';
      currency: string;
      needed: string;
      available: string;
    }
  | { kind: 'rate_unavailable'; currency: string; token: string }
  | { kind: 'channel_not_live'; field: string; channelType: string }
  | {
      kind: 'exchange_amount_too_small';
      field: string;
      /** buys_nothing: fiat less the fee buys no token unit; fee_takes_all: the tokens' worth is all fee. */
      reason: 'buys_nothing' | 'fee_takes_all';
      tokens: string;
      token: string;
      amount: string;
      fee: string;
      currency: string;
      rate: string;
    }
  | { kind: 'chain_send_unavailable'; chainType: string; missing: string }
  | {
      kind: 'exchange_amount_too_large';
      field: string;
      tokens: string;
      token: string;
      ceiling: string;
      chainType: string;
    }
  /** The operator paused the merchant's payments (money in) or payouts (money out): no create of that direction. */
  | { kind: 'merchant_paused'; what: 'payments' | 'payouts'; since: number }
  | { kind: 'internal_error'; requestId: string };

export type FailureKind = ApiFailure['kind'];
type FailureOf<K extends FailureKind> = Extract<ApiFailure, { kind: K }>;
/** A failure's message in one language, from its `api.failure` text (and the namespaces it names). */
type FailureText<K extends FailureKind> = (t: Translator<'api.failure'>, f: FailureOf<K>, lang: Language) => string;

const iso = (ms: number): string => new Date(ms).toISOString();
const list = (items: readonly string[]): string => items.join(', ');

/** Whether a text names a field format (each has its description, `api.format.<format>`). */
export function isFieldFormat(value: string): value is FieldFormat {
  return hasMessage('api.format', value);
}

/** How a broken field rule reads in each language. */
export function describeRule(rule: FieldRule, lang: Language): string {
  const t = translator('api.rule', lang);
  switch (rule.rule) {
    case 'required':
      return t('required');
    case 'type': {
      const type = translator('api.type', lang);
      return t('type', { types: rule.expected.map((name) => type(name)).join(type('or')) });
    }
    case 'minItems':
      return t('minItems', { min: rule.min });
    case 'maxItems':
      return t('maxItems', { max: rule.max });
    case 'invalid':
      return t('invalid');
    case 'maxLength':
      return t('maxLength', { max: rule.max });
    case 'minLength':
      return t('minLength', { min: rule.min });
    case 'oneOf':
      return t('oneOf', { allowed: list(rule.allowed) });
    case 'format':
      return t('format', { format: translator('api.format', lang)(rule.format) });
    case 'minimum':
      return t('minimum', { min: rule.min });
    case 'maximum':
      return t('maximum', { max: rule.max });
    case 'amount': {
      const places = rule.decimals === 0 ? t('amountWhole') : t('amountDecimal', { decimals: rule.decimals });
      return rule.signed
        ? t('amountSigned', { places, maximum: rule.maximum })
        : t('amountUnsigned', { places, minimum: rule.minimum, maximum: rule.maximum });
    }
  }
}

/**
 * The one map from failure to code and message. A new failure kind does not compile until it has
 * a code and a text (its message, `api.failure.<kind>`, in every language of the `api` surface).
 */
const FAILURES: { [K in FailureKind]: { code: ApiCode; text: FailureText<K> } } = {
  header_missing: { code: '307', text: (t, f) => t('header_missing', { header: f.header }) },
  header_malformed: {
    code: '307',
    text: (t, f, lang) => t('header_malformed', { header: f.header, rule: translator('api.header', lang)(f.expected) }),
  },
  unknown_access_key: { code: '307', text: (t) => t('unknown_access_key') },
  signature_mismatch: { code: '307', text: (t) => t('signature_mismatch') },
  timestamp_outside_window: {
    code: '307',
    text: (t, f) => t('timestamp_outside_window', { windowSeconds: f.windowSeconds, serverTime: f.serverTime }),
  },
  nonce_reused: { code: '307', text: (t) => t('nonce_reused') },
  key_not_active: { code: '301', text: (t, f) => t('key_not_active', { activeAt: iso(f.activeAt) }) },
  key_disabled: { code: '301', text: (t) => t('key_disabled') },
  key_deleted: { code: '301', text: (t) => t('key_deleted') },
  ip_not_whitelisted: { code: '301', text: (t, f) => t('ip_not_whitelisted', { ip: f.ip }) },
  permission_denied: { code: '301', text: (t, f) => t('permission_denied', { permission: f.permission }) },
  rate_limited: {
    code: '429',
    text: (t, f) => t('rate_limited', { limitPerMinute: f.limitPerMinute, retryAfterSeconds: f.retryAfterSeconds }),
  },
  order_not_found: { code: '300', text: (t) => t('order_not_found') },
  voucher_unavailable: { code: '300', text: (t, f) => t('voucher_unavailable', { orderStatus: f.orderStatus }) },
  duplicate_external_order_id: {
    code: '300',
    text: (t, f) => t('duplicate_external_order_id', { externalOrderId: f.externalOrderId }),
  },
  insufficient_balance: {
    code: '300',
    text: (t, f) =>
      t('insufficient_balance', {
        purpose: f.purpose,
        needed: f.needed,
        available: f.available,
        currency: f.currency,
      }),
  },
  rate_unavailable: { code: '300', text: (t, f) => t('rate_unavailable', { currency: f.currency, token: f.token }) },
  channel_not_live: {
    code: '300',
    text: (t, f) => t('channel_not_live', { field: f.field, channelType: f.channelType }),
  },
  chain_send_unavailable: {
    code: '300',
    text: (t, f) => t('chain_send_unavailable', { chainType: f.chainType, missing: f.missing }),
  },
  exchange_amount_too_large: {
    code: '300',
    text: (t, f) => t('exchange_amount_too_large', f),
  },
  exchange_amount_too_small: {
    code: '300',
    text: (t, f) => t('exchange_amount_too_small', f),
  },
  route_not_found: { code: '300', text: (t, f) => t('route_not_found', { method: f.method, path: f.path }) },
  unsupported_media_type: {
    code: '300',
    text: (t, f) => t('unsupported_media_type', { contentType: f.contentType }),
  },
  body_not_json: { code: '300', text: (t, f) => t('body_not_json', { detail: f.detail }) },
  body_too_large: { code: '300', text: (t, f) => t('body_too_large', { limitBytes: f.limitBytes }) },
  body_not_object: { code: '300', text: (t) => t('body_not_object') },
  body_too_deep: {
    code: '300',
    // The body itself is named as in every language's text: (body).
    text: (t, f) => t('body_too_deep', { member: f.member || '(body)', limit: f.limit }),
  },
  text_not_unicode: { code: '300', text: (t, f) => t('text_not_unicode', { member: f.member }) },
  text_has_nul: { code: '300', text: (t, f) => t('text_has_nul', { member: f.member }) },
  charset_not_utf8: { code: '300', text: (t, f) => t('charset_not_utf8', { charset: f.charset }) },
  // The problem's own text (`api.request.<problem>`) is the whole message.
  malformed_request: { code: '300', text: (_t, f, lang) => translator('api.request', lang)(f.problem) },
  unknown_fields: {
    code: '300',
    text: (t, f) => t('unknown_fields', { count: f.fields.length, fields: list(f.fields) }),
  },
  invalid_field: {
    code: '300',
    text: (t, f, lang) => t('invalid_field', { field: f.field, rule: describeRule(f.rule, lang) }),
  },
  merchant_paused: { code: '300', text: (t, f) => t('merchant_paused', { what: f.what, since: iso(f.since) }) },
  internal_error: { code: '500', text: (t, f) => t('internal_error', { requestId: f.requestId }) },
};

/** Code, HTTP status and message of a failure in the given language. */
export function describeFailure(failure: ApiFailure, lang: Language): { code: ApiCode; status: number; text: string } {
  const entry = FAILURES[failure.kind] as { code: ApiCode; text: FailureText<FailureKind> };
  const text = entry.text(translator('api.failure', lang), failure, lang);
  return { code: entry.code, status: HTTP_STATUS_OF_CODE[entry.code], text };
}

/** Thrown (or returned by a validator) to end a request with an expected failure. */
export class ApiError extends Error {
  /** Extra English detail for keys in debug mode (never a secret). */
  debugDetail: string | undefined;

  constructor(readonly failure: ApiFailure) {
    super(describeFailure(failure, 'en').text);
    this.name = 'ApiError';
  }
}
