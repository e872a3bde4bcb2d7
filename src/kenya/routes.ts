import { Type } from '@sinclair/typebox';
import type { MerchantCaller } from '../auth/plugin.js';
import { signedRoute, type SignedRouteDef } from '../http/signed-route.js';
import { FormattedString, StringEnum } from '../http/validation.js';
import { amountField } from '../ledger/amount-field.js';
import type { MerchantService } from '../merchants/service.js';
import type { OrderRow } from '../orders/queries.js';
import { money, MARK_STATUS_NONE, paymentCallbackPayload, payTypeText } from '../orders/records.js';
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

const CURRENCY = 'KES' as const;

/** payType of a Kenya collection by channelType; transfers are bank payouts (202). */
const COLLECTION_PAY_TYPE = { BANK: 102, CHARGE: 107 } as const;
const TRANSFER_PAY_TYPE = 202;

const Amount = AmountField('whole shillings, as a string (or a number)');
const Url = OptionalUrl;
const Phone = FormattedString('kenyanMobile', { description: '2547XXXXXXXX or 2541XXXXXXXX' });

const CollectionBody = Type.Object({
  amount: Amount,
  channelType: StringEnum(['BANK', 'CHARGE'], { description: 'payType 102 (BANK) or 107 (CHARGE)' }),
  externalOrderId: ExternalOrderId,
  phone: Phone,
  checkingPhone: FormattedString('kenyanMobile', { description: 'the phone that receives the STK PIN prompt' }),
  notifyUrl: Url,
  remark: Remark,
  returnUrl: Url,
});

const CollectionResult = Type.Object({
  cashierUrl: Type.String(),
  cashierExpireTime: Type.Integer(),
  currency: Type.String(),
  cashierCurrencyAmount: Type.String(),
  returnUrl: Type.String(),
  currencyOrderVo: Type.Object({ externalOrderId: Type.String(), tradeNote: Type.String(), orderId: Type.String() }),
});

const TransferBody = Type.Object({
  channelType: StringEnum(['BANK']),
  currencyAmount: Amount,
  externalOrderId: ExternalOrderId,
  phone: Phone,
  bankName: Type.Optional(Type.String({ maxLength: 100, description: 'reserved; stored and echoed as accountCode' })),
  remark: Remark,
  notifyUrl: Url,
});

interface KenyaDetails {
  phone: string;
  checkingPhone?: string;
  bankName?: string;
}

const detailsOf = (order: OrderRow) => JSON.parse(order.details) as KenyaDetails;

/** The Kenya transfer callback of the spec: strings unless the spec types them. */
function transferCallback(order: OrderRow): Record<string, unknown> {
  const details = detailsOf(order);
  return {
    currencyType: order.currency,
    accountCode: details.bankName ?? '',
    accountName: '',
    orderId: order.id,
    accountType: 'MOBILE',
    orderFee: money(order, order.fee),
    orderStatus: statusText('transfer', order.status),
    externalOrderId: order.external_order_id,
    payTypeName: payTypeText(order.pay_type),
    orderAmount: money(order, order.amount),
    orderPayTime: order.pay_time,
    orderTime: order.created_at,
    payType: order.pay_type,
    userInfoName: '',
    accountNo: details.phone,
    orderStatusCode: order.status,
    markStatus: String(MARK_STATUS_NONE),
  };
}

export const KENYA_ORDER_KINDS: OrderKindSpec[] = [
  {
    area: 'ken',
    kind: 'collection',
    callbackPayload: (order) => paymentCallbackPayload(order, ''),
    rail: () => SANDBOX_RAILS.mpesaStk,
  },
  { area: 'ken', kind: 'transfer', callbackPayload: transferCallback, rail: () => SANDBOX_RAILS.mpesaB2c },
];

const account = (order: OrderRow) => ({ accountType: 'MOBILE', accountName: '', accountNo: detailsOf(order).phone });

/** Endpoints 6–9: Kenya collections and transfers, and their queries. */
export function kenyaRoutes(deps: {
  orders: OrderService;
  merchants: MerchantService;
  publicBaseUrl: string;
}): SignedRouteDef[] {
  const { orders } = deps;
  const base = (caller: MerchantCaller) => ({
    merchantId: caller.merchantId,
    accessKey: caller.accessKey,
    area: 'ken' as const,
    currency: CURRENCY,
  });
  return [
    signedRoute({
      method: 'POST',
      path: '/api/v3/ken/createCollectingOrder',
      permission: 'ken.collection',
      tag: 'Kenya',
      summary: 'Create a collection: the payer confirms an M-Pesa STK prompt on the cashier page',
      body: CollectionBody,
      data: CollectionResult,
      handle: async ({ body, caller }) => {
        const amount = amountField('amount', body.amount, CURRENCY);
        const merchant = await deps.merchants.getMerchant(caller.merchantId);
        const { data } = await orders.create({
          ...base(caller),
          kind: 'collection',
          ...fromCreateRequest(body),
          channelType: body.channelType,
          payType: COLLECTION_PAY_TYPE[body.channelType],
          feeChannel: `ken.collection.${body.channelType}`,
          amount,
          details: { phone: body.phone, checkingPhone: body.checkingPhone },
          cashierExpiry: { lifetimeMs: merchant.cashierLifetimeMs },
          createResult: (order) => ({
            cashierUrl: `${deps.publicBaseUrl}/cashier/${order.cashier_id ?? ''}`,
            cashierExpireTime: order.cashier_expire_at ?? 0,
            currency: CURRENCY,
            cashierCurrencyAmount: money(order, order.amount) ?? '',
            returnUrl: order.return_url ?? '',
            currencyOrderVo: {
              externalOrderId: order.external_order_id,
              tradeNote: order.remark ?? '',
              orderId: order.id,
            },
          }),
        });
        return data as never;
      },
    }),
    signedRoute({
      method: 'POST',
      path: '/api/v3/ken/createTransferOrder',
      permission: 'ken.transfer',
      tag: 'Kenya',
      summary: 'Create a transfer (payout to an M-Pesa phone); amount + fee are frozen from the KES balance',
      body: TransferBody,
      data: TransferResult,
      handle: async ({ body, caller }) => {
        const amount = amountField('currencyAmount', body.currencyAmount, CURRENCY);
        const { data } = await orders.create({
          ...base(caller),
          kind: 'transfer',
          ...fromCreateRequest(body),
          channelType: body.channelType,
          payType: TRANSFER_PAY_TYPE,
          feeChannel: 'ken.transfer.BANK',
          amount,
          details: { phone: body.phone, ...(body.bankName !== undefined && { bankName: body.bankName }) },
          createResult: transferResult,
        });
        return data as never;
      },
    }),
    orderQueryRoute({
      path: '/api/v3/ken/query/collectingOrder',
      area: 'ken',
      kind: 'collection',
      tag: 'Kenya',
      summary: 'Query a Kenya collection',
      orders,
      account,
    }),
    orderQueryRoute({
      path: '/api/v3/ken/query/transferOrder',
      area: 'ken',
      kind: 'transfer',
      tag: 'Kenya',
      summary: 'Query a Kenya transfer (orderFee is an integer here, as the spec says)',
      orders,
      account,
      orderFee: 'integer',
      extra: (order) => ({ orderFee: order.fee }),
    }),
  ];
}
