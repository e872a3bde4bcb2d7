import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { MerchantCaller } from '../auth/plugin.js';
import { ApiError, type FieldFormat } from '../http/failures.js';
import { signedRoute, type SignedRouteDef } from '../http/signed-route.js';
import { FormattedString, StringEnum } from '../http/validation.js';
import { amountField } from '../ledger/amount-field.js';
import type { MerchantService } from '../merchants/service.js';
import type { OrderRow } from '../orders/queries.js';
import { MARK_STATUS_NONE, money, paymentCallbackPayload, payTypeText } from '../orders/records.js';
import {
  AmountField,
  ExternalOrderId,
  fromCreateRequest,
  OptionalUrl,
  orderQueryRoute,
  Remark,
  TransferResult,
  transferResult,
} from '../orders/schemas.js';
import type { OrderKindSpec, OrderService } from '../orders/service.js';
import { statusText } from '../orders/state-machine.js';
import { SANDBOX_RAILS } from '../rails/rails.js';
import { isValidDocument, normalizeDocument, type DocumentType } from './documents.js';
import { brazilDetails } from './details.js';
import { brazilCollectionCodes, type BrazilRails } from './collection-codes.js';
import { pixKeyProblem, type PixKeyType } from './pix-keys.js';

const CURRENCY = 'BRL' as const;

/** payType of a Brazil collection by channelType (the spec's aggregate cashier codes); transfers 201 PIX, 202 BANK. */
export const BRAZIL_COLLECTION_PAY_TYPE = { PIX: 101, PIX_DYNAMIC: 103, BOLETO: 109 } as const;
const PIX_TRANSFER_PAY_TYPE = 201;
const BANK_TRANSFER_PAY_TYPE = 202;

/** The largest amount each payment code can carry: a BR Code's tag 54 (13 characters), a boleto's 10-digit amount field. */
export const MAX_COLLECTION_CENTS = {
  PIX: 999_999_999_999n,
  PIX_DYNAMIC: 999_999_999_999n,
  BOLETO: 9_999_999_999n,
} as const;

const Amount = AmountField('reais, at most 2 decimal places, as a string (or a number)');
const Url = OptionalUrl;
const DocumentTypeField = StringEnum(['CPF', 'CNPJ']);

const CollectionBody = Type.Object({
  amount: Amount,
  channelType: StringEnum(['PIX', 'PIX_DYNAMIC', 'BOLETO']),
  externalOrderId: ExternalOrderId,
  userInfoType: Type.Optional(DocumentTypeField),
  userInfoNo: Type.Optional(Type.String({ maxLength: 18, description: 'the CPF or CNPJ of userInfoType' })),
  userInfoName: Type.Optional(Type.String({ maxLength: 255 })),
  notifyUrl: Url,
  remark: Remark,
  returnUrl: Url,
});

const CollectionResult = Type.Object({
  cashierCurrencyAmount: Type.String(),
  cashierExpireTime: Type.Integer(),
  cashierId: Type.String(),
  cashierUrl: Type.String(),
  currency: Type.String(),
  currencyOrderVo: Type.Object({
    amount: Type.String(),
    currency: Type.String(),
    externalOrderId: Type.String(),
    orderId: Type.String(),
    orderStatus: Type.String(),
    orderStatusCode: Type.Integer({ description: '1 pending payment, 2 payment successful' }),
    orderTime: Type.Integer(),
    payParam: Type.String({
      description: 'PIX and PIX_DYNAMIC: the BR Code (copy and paste); BOLETO: the 47-digit linha digitável',
    }),
    payType: Type.Integer(),
    tradeNote: Type.String(),
  }),
  isCreateOrder: Type.Boolean(),
  payType: Type.Integer({ description: '101 PIX, 103 PIX_DYNAMIC, 109 BOLETO' }),
  returnUrl: Type.String(),
  userInfoName: Type.String(),
  userInfoNo: Type.String(),
  userInfoType: Type.String(),
  payTypeCode: Type.String(),
});

const Person = {
  personIdType: DocumentTypeField,
  personId: Type.String({ minLength: 1, maxLength: 18 }),
  personName: Type.String({ minLength: 1, maxLength: 255 }),
};

const PixTransferBody = Type.Object({
  currencyAmount: Amount,
  channelType: StringEnum(['PIX']),
  externalOrderId: ExternalOrderId,
  ...Person,
  accountType: StringEnum(['CPF', 'CNPJ', 'PHONE', 'EMAIL', 'EVP']),
  accountId: Type.String({ minLength: 1, maxLength: 77, description: 'the Pix key, valid for accountType' }),
  remark: Remark,
  notifyUrl: Url,
});

const BankTransferBody = Type.Object({
  currencyAmount: Amount,
  channelType: StringEnum(['BANK']),
  externalOrderId: ExternalOrderId,
  ...Person,
  accountType: StringEnum(['CC', 'CP'], { description: 'CC checking, CP savings' }),
  accountId: FormattedString('bankAccount'),
  bankName: FormattedString('bankName'),
  agency: FormattedString('bankAgency'),
  remark: Remark,
  notifyUrl: Url,
});

/** requestType, userType, operatorId and expansionParam of the Brazil collection query: orders made through the API by the merchant. */
export const BRAZIL_QUERY_EXTRAS = { requestType: 1, userType: 1, operatorId: 0 } as const;

const detailsOf = brazilDetails;

const invalid = (field: string, format: FieldFormat) =>
  new ApiError({ kind: 'invalid_field', field, rule: { rule: 'format', format } });

function checkDocument(field: string, type: DocumentType, value: string): string {
  const normalized = normalizeDocument(type, value);
  if (!isValidDocument(type, normalized)) throw invalid(field, type === 'CPF' ? 'cpf' : 'cnpj');
  return normalized;
}

const PIX_KEY_FORMAT: Record<PixKeyType, FieldFormat> = {
  CPF: 'cpf',
  CNPJ: 'cnpj',
  PHONE: 'pixPhone',
  EMAIL: 'pixEmail',
  EVP: 'pixEvp',
};

/** The Brazil transfer callback of the spec. */
function transferCallback(order: OrderRow): Record<string, unknown> {
  const d = detailsOf(order);
  return {
    currencyType: order.currency,
    userInfoNo: d.personId ?? '',
    orderId: order.id,
    userInfoType: d.personIdType ?? '',
    accountType: d.accountType ?? '',
    orderFee: money(order, order.fee),
    orderStatus: statusText('transfer', order.status),
    externalOrderId: order.external_order_id,
    tradeNote: order.remark ?? '',
    payTypeName: payTypeText(order.pay_type),
    orderAmount: money(order, order.amount),
    orderTime: order.created_at,
    payType: order.pay_type,
    userInfoName: d.personName ?? '',
    accountNo: d.accountId ?? '',
    orderStatusCode: order.status,
    markStatus: MARK_STATUS_NONE,
    orderPayTime: order.pay_time,
    errorMsg: order.error_msg,
    errorMsgEn: order.error_msg_en,
  };
}

/** ISPB of the sandbox's settlement participant in end-to-end ids (Banco do Brasil's ISPB is all zeros). */
const SANDBOX_ISPB = '00000000';

/**
 * What the rail settles on success: the Pix end-to-end id (E + ISPB + yyyyMMddHHmm + 11 characters)
 * and an authentication code for the voucher.
 */
export function successDetails(order: OrderRow, now: number): Record<string, unknown> {
  const stamp = new Date(now).toISOString().replace(/[-:T]/g, '').slice(0, 12);
  const random = randomBytes(16).toString('hex').toUpperCase();
  return {
    endToEndId: `E${SANDBOX_ISPB}${stamp}${random.slice(0, 11)}`,
    authenticationCode: random.slice(11, 31),
    settledAt: now,
    voucherToken: randomBytes(24).toString('base64url'),
  };
}

export const BRAZIL_ORDER_KINDS: OrderKindSpec[] = [
  {
    area: 'bra',
    kind: 'collection',
    callbackPayload: (order) => paymentCallbackPayload(order, detailsOf(order).payParam ?? ''),
    successDetails,
    rail: (order) => (order.channel_type === 'BOLETO' ? SANDBOX_RAILS.boleto : SANDBOX_RAILS.pix),
  },
  {
    area: 'bra',
    kind: 'transfer',
    callbackPayload: transferCallback,
    successDetails,
    rail: (order) => (order.channel_type === 'BANK' ? SANDBOX_RAILS.bankPayout : SANDBOX_RAILS.pixPayout),
  },
];

function account(order: OrderRow) {
  const d = detailsOf(order);
  return order.kind === 'transfer'
    ? { accountType: d.accountType ?? '', accountName: d.personName ?? '', accountNo: d.accountId ?? '' }
    : { accountType: d.userInfoType ?? '', accountName: d.userInfoName ?? '', accountNo: d.userInfoNo ?? '' };
}

/** Endpoints 11–15: Brazil collections (PIX, PIX dynamic, Boleto), PIX and bank transfers, and their queries. */
export function brazilRoutes(deps: {
  orders: OrderService;
  merchants: MerchantService;
  publicBaseUrl: string;
  rails: BrazilRails;
  now: () => number;
}): SignedRouteDef[] {
  const { orders, rails } = deps;
  const base = (caller: MerchantCaller) => ({
    merchantId: caller.merchantId,
    accessKey: caller.accessKey,
    area: 'bra' as const,
    currency: CURRENCY,
  });

  const createTransfer = async (
    caller: MerchantCaller,
    body: {
      currencyAmount: string | number;
      externalOrderId: string;
      personIdType: DocumentType;
      personId: string;
      personName: string;
      remark?: string | undefined;
      notifyUrl?: string | undefined;
    },
    channel: { channelType: 'PIX' | 'BANK'; payType: number; details: Record<string, unknown> },
  ) => {
    const personId = checkDocument('personId', body.personIdType, body.personId);
    const amount = amountField('currencyAmount', body.currencyAmount, CURRENCY);
    const { data } = await orders.create({
      ...base(caller),
      kind: 'transfer',
      ...fromCreateRequest(body),
      channelType: channel.channelType,
      payType: channel.payType,
      feeChannel: `bra.transfer.${channel.channelType}`,
      amount,
      details: { personIdType: body.personIdType, personId, personName: body.personName, ...channel.details },
      createResult: transferResult,
    });
    return data as never;
  };

  const pixTransfer = (path: string): SignedRouteDef =>
    signedRoute({
      method: 'POST',
      path,
      permission: 'bra.transfer',
      tag: 'Brazil',
      summary: 'Create a PIX transfer to a Pix key; amount + fee are frozen from the BRL balance',
      body: PixTransferBody,
      data: TransferResult,
      handle: async ({ body, caller }) => {
        const problem = pixKeyProblem(body.accountType, body.accountId);
        if (problem !== undefined) throw invalid('accountId', PIX_KEY_FORMAT[body.accountType]);
        return createTransfer(caller, body, {
          channelType: 'PIX',
          payType: PIX_TRANSFER_PAY_TYPE,
          details: { accountType: body.accountType, accountId: body.accountId },
        });
      },
    });

  return [
    signedRoute({
      method: 'POST',
      path: '/api/v3/bra/createCollectingOrder',
      permission: 'bra.collection',
      tag: 'Brazil',
      summary: 'Create a collection: a PIX BR Code (static or dynamic) or a Boleto, with a cashier page',
      body: CollectionBody,
      data: CollectionResult,
      handle: async ({ body, caller }) => {
        if ((body.userInfoType === undefined) !== (body.userInfoNo === undefined)) {
          throw invalid(body.userInfoType === undefined ? 'userInfoType' : 'userInfoNo', 'pairedWith');
        }
        const userInfoNo =
          body.userInfoType === undefined || body.userInfoNo === undefined
            ? undefined
            : checkDocument('userInfoNo', body.userInfoType, body.userInfoNo);
        const amount = amountField('amount', body.amount, CURRENCY, {
          maximum: MAX_COLLECTION_CENTS[body.channelType],
        });
        const merchant = await deps.merchants.getMerchant(caller.merchantId);
        const codes = brazilCollectionCodes({
          channelType: body.channelType,
          amount,
          now: deps.now(),
          rails,
          publicBaseUrl: deps.publicBaseUrl,
        });
        const { data } = await orders.create({
          ...base(caller),
          kind: 'collection',
          ...fromCreateRequest(body),
          channelType: body.channelType,
          payType: BRAZIL_COLLECTION_PAY_TYPE[body.channelType],
          feeChannel: `bra.collection.${body.channelType}`,
          amount,
          details: {
            ...(body.userInfoType !== undefined && { userInfoType: body.userInfoType }),
            ...(userInfoNo !== undefined && { userInfoNo }),
            ...(body.userInfoName !== undefined && { userInfoName: body.userInfoName }),
          },
          ...codes.orderHooks(merchant.cashierLifetimeMs),
          createResult: (order) => {
            const d = detailsOf(order);
            return {
              cashierCurrencyAmount: money(order, order.amount) ?? '',
              cashierExpireTime: order.cashier_expire_at ?? 0,
              cashierId: order.cashier_id ?? '',
              cashierUrl: `${deps.publicBaseUrl}/cashier/${order.cashier_id ?? ''}`,
              currency: CURRENCY,
              currencyOrderVo: {
                amount: money(order, order.amount) ?? '',
                currency: CURRENCY,
                externalOrderId: order.external_order_id,
                orderId: order.id,
                orderStatus: statusText('collection', order.status),
                orderStatusCode: order.status,
                orderTime: order.created_at,
                payParam: d.payParam ?? '',
                payType: order.pay_type,
                tradeNote: order.remark ?? '',
              },
              isCreateOrder: true,
              payType: order.pay_type,
              returnUrl: order.return_url ?? '',
              userInfoName: d.userInfoName ?? '',
              userInfoNo: d.userInfoNo ?? '',
              userInfoType: d.userInfoType ?? '',
              payTypeCode: payTypeText(order.pay_type),
            };
          },
        });
        return data as never;
      },
    }),
    pixTransfer('/api/v3/bra/createTransferOrder'),
    pixTransfer('/api/v3/bra/pix/createTransferOrder'),
    signedRoute({
      method: 'POST',
      path: '/api/v3/bra/bank/createTransferOrder',
      permission: 'bra.transfer',
      tag: 'Brazil',
      summary: 'Create a bank transfer (TED) to a branch and account; amount + fee are frozen from the BRL balance',
      body: BankTransferBody,
      data: TransferResult,
      handle: ({ body, caller }) =>
        createTransfer(caller, body, {
          channelType: 'BANK',
          payType: BANK_TRANSFER_PAY_TYPE,
          details: {
            accountType: body.accountType,
            accountId: body.accountId,
            bankName: body.bankName,
            agency: body.agency,
          },
        }),
    }),
    orderQueryRoute({
      path: '/api/v3/bra/query/collectingOrder',
      area: ['bra', 'cashier'],
      kind: 'collection',
      tag: 'Brazil',
      summary: 'Query a Brazil collection, or an order made on an aggregate cashier (they are paid in reais)',
      orders,
      account,
      desc: true,
      extraSchema: Type.Object({
        requestType: Type.Integer({ description: '1: created through the merchant API' }),
        businessId: Type.String({ description: 'the merchant id' }),
        userType: Type.Integer({ description: '1: a merchant' }),
        operatorId: Type.Integer({ description: '0: no console operator involved' }),
        expansionParam: Type.String({
          description:
            "the payment parameter (BR Code, linha digitável, or an aggregate cashier USDT order's deposit address)",
        }),
        payerDocumentSource: Type.String({
          description:
            "where accountNo (the payer's CPF/CNPJ) came from: merchant (the create request), saved, entered (by the payer on an aggregate cashier), generated (by Cashgate: no userIdentity), or empty",
        }),
      }),
      extra: (order) => {
        const d = detailsOf(order);
        return {
          ...BRAZIL_QUERY_EXTRAS,
          businessId: order.merchant_id,
          expansionParam: d.payParam ?? d.addressTo ?? '',
          payerDocumentSource: d.documentSource ?? (d.userInfoNo === undefined ? '' : 'merchant'),
        };
      },
    }),
    orderQueryRoute({
      path: '/api/v3/bra/query/transferOrder',
      area: 'bra',
      kind: 'transfer',
      tag: 'Brazil',
      summary: 'Query a Brazil transfer',
      orders,
      account,
    }),
  ];
}
