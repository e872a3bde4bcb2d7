import { Type } from '@sinclair/typebox';

/*
 * The bodies of the callbacks Cashgate sends, for the OpenAPI document's `webhooks`. The payloads
 * are built in src/orders/records.ts (payment), src/kenya/kinds.ts and src/brazil/kinds.ts
 * (transfers) and src/callbacks/test-callbacks.ts (test); test/openapi.test.ts checks real
 * callbacks of each kind against these schemas, so a payload that changes without them fails.
 * Exchange callbacks carry the exchange order record, the schema of the exchange queries.
 */

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);
const closed = { additionalProperties: false } as const;

/** Kenya and Brazil collections, and orders of an aggregate cashier (USDT: payType 112, payTypeName WALLET). */
export const PaymentCallback = Type.Object(
  {
    currencyType: Type.String(),
    orderActualAmount: Type.Union([Type.String(), Type.Null()], { description: 'the amount paid; null if unpaid' }),
    orderId: Type.String(),
    orderFee: NullableString,
    orderStatus: Type.String({ description: 'the status by name, e.g. SUCCESS' }),
    payParam: Type.String({ description: 'M-Pesa receipt, PIX BR Code or boleto line, or the USDT deposit address' }),
    externalOrderId: Type.String(),
    tradeNote: Type.String(),
    payTypeName: Type.String(),
    orderAmount: NullableString,
    orderTime: Type.Integer({ description: 'Unix milliseconds' }),
    payType: Type.Integer(),
    orderStatusCode: Type.Integer({ description: '2 paid, 3 expired, 4 cancelled' }),
    markStatus: Type.Integer({ description: "1: paid with another amount than the order's" }),
    orderPayTime: NullableInteger,
    errorMsg: NullableString,
    errorMsgEn: NullableString,
  },
  { ...closed, description: 'Payment callback: a collection was paid (2), expired (3) or was cancelled (4)' },
);

/** Kenya transfers (M-Pesa payouts). */
export const KenyaTransferCallback = Type.Object(
  {
    currencyType: Type.String(),
    accountCode: Type.String(),
    accountName: Type.String(),
    orderId: Type.String(),
    accountType: Type.Literal('MOBILE'),
    orderFee: NullableString,
    orderStatus: Type.String(),
    externalOrderId: Type.String(),
    payTypeName: Type.String(),
    orderAmount: NullableString,
    orderPayTime: NullableInteger,
    orderTime: Type.Integer(),
    payType: Type.Integer(),
    userInfoName: Type.String(),
    accountNo: Type.String({ description: 'the receiving phone number' }),
    orderStatusCode: Type.Integer({ description: '8 succeeded, 4 rejected, 16 failed' }),
    markStatus: Type.String({ description: 'always "0" (a string here, as the specification has it)' }),
  },
  { ...closed, description: 'Kenya transfer callback: succeeded (8), rejected (4) or failed (16)' },
);

/** Brazil transfers (Pix and TED). */
export const BrazilTransferCallback = Type.Object(
  {
    currencyType: Type.String(),
    userInfoNo: Type.String(),
    orderId: Type.String(),
    userInfoType: Type.String(),
    accountType: Type.String(),
    orderFee: NullableString,
    orderStatus: Type.String(),
    externalOrderId: Type.String(),
    tradeNote: Type.String(),
    payTypeName: Type.String(),
    orderAmount: NullableString,
    orderTime: Type.Integer(),
    payType: Type.Integer(),
    userInfoName: Type.String(),
    accountNo: Type.String(),
    orderStatusCode: Type.Integer({ description: '8 succeeded, 4 rejected, 16 failed' }),
    markStatus: Type.Integer({ description: 'always 0' }),
    orderPayTime: NullableInteger,
    errorMsg: NullableString,
    errorMsgEn: NullableString,
  },
  { ...closed, description: 'Brazil transfer callback: succeeded (8), rejected (4) or failed (16)' },
);

/** A test callback an operator or the console sends. */
export const TestCallback = Type.Object(
  {
    notifyType: Type.Literal('test'),
    orderId: Type.String({ description: 'the test callback id (cbt_…), not an order' }),
    merchantId: Type.String(),
    orderTime: Type.Integer(),
    message: Type.String(),
  },
  { ...closed, description: 'Test callback: no amount or status, only to check the address and the sign' },
);
