import { Type } from '@sinclair/typebox';
import type { MerchantCaller } from '../auth/plugin.js';
import { BankAccount, BankAgency, BankName } from '../banks/formats.js';
import { ApiError, type FieldFormat } from '../http/failures.js';
import { signedRoute, type SignedRouteDef } from '../auth/signed-route.js';
import { StringEnum } from '../http/validation.js';
import { amountField } from '../ledger/amount-field.js';
import type { MerchantService } from '../merchants/service.js';
import type { OrderRow } from '../orders/queries.js';
import {
  AmountField,
  ExternalOrderId,
  fromCreateRequest,
  OptionalUrl,
  orderQueryRoute,
  Remark,
  TransferResult,
} from '../orders/schemas.js';
import { newOrderId, type OrderService } from '../orders/service.js';
import { brazilDetails, payerDocument, type BrazilDetails } from './details.js';
import { isValidDocument, normalizeDocument, type DocumentType } from './documents.js';
import {
  BRAZIL_COLLECTION_PAY_TYPE,
  BRAZIL_CURRENCY,
  BrazilCollectionResult,
  MAX_COLLECTION_CENTS,
  type BrazilKinds,
} from './kinds.js';
import { pixKeyProblem, type PixKeyType } from './pix-keys.js';

const PIX_TRANSFER_PAY_TYPE = 201;
const BANK_TRANSFER_PAY_TYPE = 202;

const Amount = AmountField('reais, at most 2 decimal places, as a string (or a number)');
const Url = OptionalUrl;
const DocumentTypeField = StringEnum(['CPF', 'CNPJ']);

export const CollectionBody = Type.Object({
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

const Person = {
  personIdType: DocumentTypeField,
  personId: Type.String({ minLength: 1, maxLength: 18 }),
  personName: Type.String({ minLength: 1, maxLength: 255 }),
};

export const PixTransferBody = Type.Object({
  currencyAmount: Amount,
  channelType: StringEnum(['PIX']),
  externalOrderId: ExternalOrderId,
  ...Person,
  accountType: StringEnum(['CPF', 'CNPJ', 'PHONE', 'EMAIL', 'EVP']),
  accountId: Type.String({ minLength: 1, maxLength: 77, description: 'the Pix key, valid for accountType' }),
  remark: Remark,
  notifyUrl: Url,
});

export const BankTransferBody = Type.Object({
  currencyAmount: Amount,
  channelType: StringEnum(['BANK']),
  externalOrderId: ExternalOrderId,
  ...Person,
  accountType: StringEnum(['CC', 'CP'], { description: 'CC checking, CP savings' }),
  accountId: BankAccount(),
  bankName: BankName(),
  agency: BankAgency(),
  remark: Remark,
  notifyUrl: Url,
});

/** requestType, userType, operatorId and expansionParam of the Brazil collection query: orders made through the API by the merchant. */
export const BRAZIL_QUERY_EXTRAS = { requestType: 1, userType: 1, operatorId: 0 } as const;

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

function account(order: OrderRow) {
  const d = brazilDetails(order);
  return order.kind === 'transfer'
    ? { accountType: d.accountType ?? '', accountName: d.personName ?? '', accountNo: d.accountId ?? '' }
    : payerAccount(d);
}

/** A collection's payer as the query shows it: a document Cashgate generated is not the payer's, so it is left out. */
function payerAccount(d: ReturnType<typeof brazilDetails>) {
  const payer = payerDocument(d);
  return { accountType: payer?.type ?? '', accountName: d.userInfoName ?? '', accountNo: payer?.number ?? '' };
}

/** Endpoints 11–15: Brazil collections (PIX, PIX dynamic, Boleto), PIX and bank transfers, and their queries. */
export function brazilRoutes(deps: {
  orders: OrderService;
  merchants: MerchantService;
  kinds: BrazilKinds;
}): SignedRouteDef[] {
  const { orders, kinds } = deps;

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
    channel: { channelType: 'PIX' | 'BANK'; payType: number; details: BrazilDetails },
  ) => {
    const personId = checkDocument('personId', body.personIdType, body.personId);
    const amount = amountField('currencyAmount', body.currencyAmount, BRAZIL_CURRENCY);
    const details: BrazilDetails = {
      personIdType: body.personIdType,
      personId,
      personName: body.personName,
      ...channel.details,
    };
    const { data } = await orders.create(kinds.transfer, {
      id: newOrderId(kinds.transfer),
      ...fromCreateRequest(caller, body),
      currency: BRAZIL_CURRENCY,
      channelType: channel.channelType,
      payType: channel.payType,
      feeChannel: `bra.transfer.${channel.channelType}`,
      amount,
      details,
    });
    return data;
  };

  const pixTransfer = (path: string): SignedRouteDef =>
    signedRoute({
      method: 'POST',
      path,
      permission: 'bra.transfer',
      pausedBy: 'payouts',
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
      pausedBy: 'payments',
      tag: 'Brazil',
      summary: 'Create a collection: a PIX BR Code (static or dynamic) or a Boleto, with a cashier page',
      body: CollectionBody,
      data: BrazilCollectionResult,
      handle: async ({ body, caller }) => {
        if (body.channelType === 'BOLETO' && !kinds.boletoLive)
          throw new ApiError({ kind: 'channel_not_live', field: 'channelType', channelType: 'BOLETO' });
        if ((body.userInfoType === undefined) !== (body.userInfoNo === undefined)) {
          throw invalid(body.userInfoType === undefined ? 'userInfoType' : 'userInfoNo', 'pairedWith');
        }
        const userInfoNo =
          body.userInfoType === undefined || body.userInfoNo === undefined
            ? undefined
            : checkDocument('userInfoNo', body.userInfoType, body.userInfoNo);
        // A boleto issuer registers amounts within its own limits (Efí from R$ 5.00, Inter from R$ 2.50).
        const limits = body.channelType === 'BOLETO' ? kinds.boletoLimits : undefined;
        const maximum = MAX_COLLECTION_CENTS[body.channelType];
        const amount = amountField('amount', body.amount, BRAZIL_CURRENCY, {
          ...(limits !== undefined && { minimum: limits.min }),
          maximum: limits === undefined || limits.max > maximum ? maximum : limits.max,
        });
        const id = newOrderId(kinds.collection);
        const code = kinds.collectionCode(id, body.channelType, amount, caller.cashierLifetimeMs);
        const details: BrazilDetails = {
          ...(body.userInfoType !== undefined && { userInfoType: body.userInfoType }),
          ...(userInfoNo !== undefined && { userInfoNo }),
          ...(body.userInfoName !== undefined && { userInfoName: body.userInfoName }),
          ...code.details,
        };
        const { data } = await orders.create(kinds.collection, {
          id,
          ...fromCreateRequest(caller, body),
          currency: BRAZIL_CURRENCY,
          channelType: body.channelType,
          payType: BRAZIL_COLLECTION_PAY_TYPE[body.channelType],
          feeChannel: `bra.collection.${body.channelType}`,
          amount,
          details,
          railRef: code.railRef,
          cashierExpiry: code.cashierExpiry,
        });
        return data;
      },
    }),
    pixTransfer('/api/v3/bra/createTransferOrder'),
    pixTransfer('/api/v3/bra/pix/createTransferOrder'),
    signedRoute({
      method: 'POST',
      path: '/api/v3/bra/bank/createTransferOrder',
      permission: 'bra.transfer',
      pausedBy: 'payouts',
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
            "where accountNo (the payer's CPF/CNPJ) came from: merchant (the create request), saved, entered (by " +
            'the payer on an aggregate cashier), generated (by Cashgate for an aggregate cashier without ' +
            "userIdentity: it is not the payer's, so accountNo and accountType are then empty), or empty",
        }),
      }),
      extra: (order) => {
        const d = brazilDetails(order);
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
