import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { stringifyExact } from './exact-json.js';
import { describeFailure, type ApiError } from './failures.js';
import type { Language } from './language.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The envelope code sent, for the request log. */
    apiCode: string | null;
    /** The envelope's msgEn sent, for the request log of debug-mode keys. */
    apiMessage: string | null;
    /** A JSON body's text as received. */
    rawBody: string | undefined;
  }
}

export const JSON_UTF8 = 'application/json;charset=utf-8';

const EnvelopeMembers = {
  code: Type.String({ description: '"200" on success; 300, 301, 307, 429 or 500 on failure' }),
  success: Type.Boolean(),
  msg: Type.String({ description: "message in the merchant's language" }),
  msgEn: Type.String({ description: 'message in English: which field or header, which rule' }),
};

/** The members every /api/v3 envelope has besides `data` (the OpenAPI document's `Envelope`). */
export const EnvelopeBase = Type.Object(EnvelopeMembers);

/** The envelope of every /api/v3 response, with `data` typed per endpoint. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ ...EnvelopeMembers, data });
}

/** The envelope with the spec's `desc` member, always null (the Brazil collection query only). */
export function EnvelopeWithDesc<T extends TSchema>(data: T) {
  return Type.Object({ ...EnvelopeMembers, data, desc: Type.Null() });
}

export const FailureEnvelope = Envelope(Type.Null());

export function sendSuccess(
  reply: FastifyReply,
  data: unknown,
  options: { desc?: boolean; exact?: boolean } = {},
): FastifyReply {
  reply.request.apiCode = '200';
  reply.request.apiMessage = 'success';
  const envelope = {
    code: '200',
    success: true,
    msg: 'success',
    msgEn: 'success',
    data,
    ...(options.desc === true && { desc: null }),
  };
  // A JSON string payload is sent as it is, past the schema's serializer.
  return reply
    .code(200)
    .type(JSON_UTF8)
    .send(options.exact === true ? stringifyExact(envelope) : envelope);
}

export interface FailureContext {
  language: Language;
  /** Adds the error's debug detail, the request id and the log view address, for keys in debug mode. */
  debug: boolean;
  requestId: string;
  /** Where the merchant reads this request in the console's request log (keys in debug mode). */
  logViewUrl?: string | undefined;
}

/** The envelope of a failure in `language` (English beside it), with `suffix` after both texts, and its HTTP status. */
export function failureEnvelope(
  error: ApiError,
  language: Language,
  suffix = '',
): { status: number; body: { code: string; success: false; msg: string; msgEn: string; data: null } } {
  const english = describeFailure(error.failure, 'en');
  const localized = language === 'en' ? english : describeFailure(error.failure, language);
  return {
    status: english.status,
    body: {
      code: english.code,
      success: false,
      msg: localized.text + suffix,
      msgEn: english.text + suffix,
      data: null,
    },
  };
}

export function sendFailure(reply: FastifyReply, error: ApiError, context: FailureContext): FastifyReply {
  const debugSuffix = context.debug
    ? ` [debug: request ${context.requestId}${context.logViewUrl === undefined ? '' : `; log: ${context.logViewUrl}`}` +
      `${error.debugDetail === undefined ? '' : `; ${error.debugDetail}`}]`
    : '';
  if (error.failure.kind === 'rate_limited') {
    void reply.header('retry-after', String(error.failure.retryAfterSeconds));
  }
  const { status, body } = failureEnvelope(error, context.language, debugSuffix);
  reply.request.apiCode = body.code;
  reply.request.apiMessage = body.msgEn;
  return reply.code(status).type(JSON_UTF8).send(body);
}
