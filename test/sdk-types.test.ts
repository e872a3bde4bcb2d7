/**
 * The SDK's types follow the server's schemas. The type assertions below are checked by
 * `npm run typecheck` (tsconfig.test.json includes test/): when a server schema changes and the
 * SDK's type does not follow, the build fails here. The tests at the end check what types cannot
 * see: that the SDK has a method for every signed route, and the members of a schema built inline.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Static, TSchema } from '@sinclair/typebox';
import {
  MERCHANT_ENDPOINTS,
  type ApiKey,
  type BalanceRecord,
  type BankListRequest,
  type BankName,
  type BrazilBankTransferRequest,
  type BrazilCollectionRecord,
  type BrazilCollectionRequest,
  type BrazilCollectionResult,
  type BrazilPixTransferRequest,
  type Approval,
  type Balance,
  type CallbackAttempt,
  type CallbackDelivery,
  type CallbackEvent,
  type CheckoutRequest,
  type CreateApiKeyRequest,
  type CreateMerchantRequest,
  type EditApiKeyRequest,
  type Fee,
  type FiatToTokenRecord,
  type FiatToTokenRequest,
  type FiatToTokenResult,
  type KenyaCollectionRequest,
  type KenyaCollectionResult,
  type KenyaTransferRecord,
  type KenyaTransferRequest,
  type Merchant,
  type OrderQuery,
  type OrderRecord,
  type Rate,
  type SetFeeRequest,
  type SetRateRequest,
  type TokenToFiatRecord,
  type TokenToFiatRequest,
  type TokenToFiatResult,
  type TransferResult,
  type VoucherRequest,
} from '@cashgate/sdk';
import type { bankListRoute } from '../src/banks/routes.js';
import { brazilRoutes } from '../src/brazil/routes.js';
import type {
  BankTransferBody,
  CollectionBody as BrazilCollectionBody,
  PixTransferBody,
} from '../src/brazil/routes.js';
import type { BrazilCollectionResult as BrazilCollectionResultSchema } from '../src/brazil/kinds.js';
import type { VoucherBody } from '../src/brazil/voucher.js';
import type {
  CallbackAttempt as CallbackAttemptSchema,
  CallbackEvent as CallbackEventSchema,
  Delivery,
} from '../src/callbacks/admin-routes.js';
import type { CheckoutBody } from '../src/cashier/checkout-route.js';
import type { RateView, SetRateBody } from '../src/exchange/admin-routes.js';
import type {
  FiatToTokenRecord as FiatToTokenRecordSchema,
  FiatToTokenResult as FiatToTokenResultSchema,
  TokenToFiatRecord as TokenToFiatRecordSchema,
  TokenToFiatResult as TokenToFiatResultSchema,
} from '../src/exchange/records.js';
import type { FiatToTokenBody, TokenToFiatBody } from '../src/exchange/routes.js';
import type { KenyaCollectionResult as KenyaCollectionResultSchema } from '../src/kenya/kinds.js';
import type { CollectionBody as KenyaCollectionBody, TransferBody as KenyaTransferBody } from '../src/kenya/routes.js';
import type { ApprovalView, BalanceView, FeeView, SetFeeBody } from '../src/ledger/admin-routes.js';
import type { BalanceRecord as BalanceRecordSchema } from '../src/ledger/balance-routes.js';
import type { ApiKeyView, MerchantView } from '../src/merchants/admin-routes.js';
import type { CreateApiKeyBody, CreateMerchantBody, EditApiKeyBody } from '../src/merchants/schemas.js';
import type { OrderRecordSchema } from '../src/orders/records.js';
import type { QueryBody, TransferResult as TransferResultSchema } from '../src/orders/schemas.js';
import type { SignedRouteDef } from '../src/auth/signed-route.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';

/** True when A and B are assignable to each other and have the same members (an optional one too). */
type Same<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? [keyof A] extends [keyof B]
      ? [keyof B] extends [keyof A]
        ? true
        : false
      : false
    : false
  : false;
/** Compiles only for `true`. */
type Check<T extends true> = T;
type S<T extends TSchema> = Static<T>;
type RouteParts<R> = R extends SignedRouteDef<infer B, infer Q, infer D> ? { body: B; query: Q; data: D } : never;
type BankRoute = RouteParts<typeof bankListRoute>;

/** Each line fails to compile when the SDK type and the server schema part ways. */
export type SchemaChecks = [
  // Kenya
  Check<Same<KenyaCollectionRequest, S<typeof KenyaCollectionBody>>>,
  Check<Same<KenyaCollectionResult, S<typeof KenyaCollectionResultSchema>>>,
  Check<Same<KenyaTransferRequest, S<typeof KenyaTransferBody>>>,
  Check<Same<TransferResult, S<typeof TransferResultSchema>>>,
  Check<Same<OrderQuery, S<typeof QueryBody>>>,
  // One schema function makes both records; orderFee (a string, an integer in the Kenya transfer
  // query) is its argument, so its type is string | number there: the end-to-end test checks it.
  Check<Same<Omit<OrderRecord, 'orderFee'>, Omit<S<ReturnType<typeof OrderRecordSchema>>, 'orderFee'>>>,
  Check<Same<Omit<KenyaTransferRecord, 'orderFee'>, Omit<S<ReturnType<typeof OrderRecordSchema>>, 'orderFee'>>>,
  Check<
    Same<OrderRecord['orderFee'] | KenyaTransferRecord['orderFee'], S<ReturnType<typeof OrderRecordSchema>>['orderFee']>
  >,
  Check<Same<BalanceRecord, S<typeof BalanceRecordSchema>>>,
  // Brazil
  Check<Same<BrazilCollectionRequest, S<typeof BrazilCollectionBody>>>,
  Check<Same<BrazilCollectionResult, S<typeof BrazilCollectionResultSchema>>>,
  Check<Same<BrazilPixTransferRequest, S<typeof PixTransferBody>>>,
  Check<Same<BrazilBankTransferRequest, S<typeof BankTransferBody>>>,
  Check<Same<VoucherRequest, S<typeof VoucherBody>>>,
  Check<Same<BankListRequest, S<NonNullable<BankRoute['body']>>>>,
  Check<Same<BankName[], S<BankRoute['data']>>>,
  // Aggregate cashier
  Check<Same<CheckoutRequest, S<typeof CheckoutBody>>>,
  // Exchange (a create's tokenAmount is written digit for digit on the server, a number on the wire)
  Check<Same<FiatToTokenRequest, S<typeof FiatToTokenBody>>>,
  Check<Same<TokenToFiatRequest, S<typeof TokenToFiatBody>>>,
  Check<Same<Omit<FiatToTokenResult, 'tokenAmount'>, Omit<S<typeof FiatToTokenResultSchema>, 'tokenAmount'>>>,
  Check<Same<Omit<TokenToFiatResult, 'tokenAmount'>, Omit<S<typeof TokenToFiatResultSchema>, 'tokenAmount'>>>,
  Check<Same<keyof FiatToTokenResult, keyof S<typeof FiatToTokenResultSchema>>>,
  Check<Same<keyof TokenToFiatResult, keyof S<typeof TokenToFiatResultSchema>>>,
  Check<Same<FiatToTokenRecord, S<typeof FiatToTokenRecordSchema>>>,
  Check<Same<TokenToFiatRecord, S<typeof TokenToFiatRecordSchema>>>,
  // Admin API
  Check<Same<CreateMerchantRequest, S<typeof CreateMerchantBody>>>,
  Check<Same<Merchant, S<typeof MerchantView>>>,
  Check<Same<CreateApiKeyRequest, S<typeof CreateApiKeyBody>>>,
  Check<Same<EditApiKeyRequest, S<typeof EditApiKeyBody>>>,
  Check<Same<ApiKey, S<typeof ApiKeyView>>>,
  Check<Same<Balance, S<typeof BalanceView>>>,
  Check<Same<Fee, S<typeof FeeView>>>,
  Check<Same<Rate, S<typeof RateView>>>,
  Check<Same<SetFeeRequest, S<typeof SetFeeBody>>>,
  Check<Same<Approval, S<typeof ApprovalView>>>,
  Check<Same<SetRateRequest, S<typeof SetRateBody>>>,
  Check<Same<CallbackAttempt, S<typeof CallbackAttemptSchema>>>,
  Check<Same<Omit<CallbackEvent, 'payload'>, Omit<S<typeof CallbackEventSchema>, 'payload'>>>,
  Check<Same<keyof CallbackDelivery, keyof S<typeof Delivery>>>,
];

/** The Brazil collection record's own members: the server builds their schema inline, so they are compared at run time. */
const BRAZIL_COLLECTION_EXTRAS = {
  requestType: 'integer',
  businessId: 'string',
  userType: 'integer',
  operatorId: 'integer',
  expansionParam: 'string',
  payerDocumentSource: 'string',
} as const satisfies Record<Exclude<keyof BrazilCollectionRecord, keyof OrderRecord>, string>;

type Extras = keyof typeof BRAZIL_COLLECTION_EXTRAS;
export type ExtrasCheck = Check<Same<Extras, Exclude<keyof BrazilCollectionRecord, keyof OrderRecord>>>;

describe('SDK types and the server schemas', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ workers: false });
  });
  after(async () => {
    await gw.close();
  });

  it('has one client method for every signed route the server serves, and no other', async () => {
    const doc = (await (await fetch(new URL('/openapi.json', gw.url))).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    // Every /api/v3 route is a signed merchant route.
    const served = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/v3/'))
      .flatMap(([path, operations]) =>
        Object.keys(operations)
          .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
          .map((method) => `${method.toUpperCase()} ${path}`),
      )
      .sort();
    const sdk = Object.values(MERCHANT_ENDPOINTS)
      .map(([method, path]) => `${method} ${path}`)
      .sort();
    assert.ok(served.length >= 19, `the OpenAPI document lists the signed routes (${served.length})`);
    assert.deepEqual(sdk, served, 'MERCHANT_ENDPOINTS lists exactly the signed routes');
  });

  it('knows every member of the Brazil collection record, with its JSON type', () => {
    const route = brazilRoutes({ orders: {}, merchants: {}, kinds: {} } as never).find(
      (r) => r.path === '/api/v3/bra/query/collectingOrder',
    );
    assert.ok(route !== undefined, 'the Brazil collection query is a route');
    const item = (route.data as { items?: { properties?: Record<string, { type?: string }> } }).items;
    const properties = item?.properties ?? {};
    const extras = Object.fromEntries(
      Object.entries(properties)
        .filter(([name]) => !RECORD_MEMBERS.has(name))
        .map(([name, schema]) => [name, schema.type]),
    );
    assert.deepEqual(extras, BRAZIL_COLLECTION_EXTRAS, 'the members the Brazil query adds to the order record');
  });
});

/** The order record's members, checked against the SDK's OrderRecord at compile time. */
const RECORD_MEMBERS = new Set(
  Object.keys({
    orderId: 1,
    cashierId: 1,
    orderType: 1,
    orderResourceType: 1,
    userId: 1,
    orderStatus: 1,
    orderTime: 1,
    channelOrderId: 1,
    externalOrderId: 1,
    orderAmount: 1,
    orderActualAmount: 1,
    orderEntryAmount: 1,
    orderFee: 1,
    orderPayTime: 1,
    orderCompleteTime: 1,
    currencyType: 1,
    payType: 1,
    tradeNote: 1,
    notifyUrl: 1,
    markStatus: 1,
    errorMsg: 1,
    errorMsgEn: 1,
    accountType: 1,
    accountName: 1,
    accountNo: 1,
    orderTypeCode: 1,
    orderResourceTypeCode: 1,
    orderStatusCode: 1,
    payTypeCode: 1,
  } satisfies Record<keyof OrderRecord, 1>),
);
