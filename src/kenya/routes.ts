import { Type } from '@sinclair/typebox';
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
import { KenyanMobile } from './formats.js';
import { KENYA_CURRENCY, KenyaCollectionResult, kenyaDetails, type KenyaDetails, type KenyaKinds } from './kinds.js';

/** payType of a Kenya collection by channelType; transfers are bank payouts (202). */
const COLLECTION_PAY_TYPE = { BANK: 102, CHARGE: 107 } as const;
const TRANSFER_PAY_TYPE = 202;

const Amount = AmountField('whole shillings, as a string (or a number)');
const Url = OptionalUrl;
const Phone = KenyanMobile({ description: '2547XXXXXXXX or 2541XXXXXXXX' });

export const CollectionBody = Type.Object({
  amount: Amount,
  channelType: StringEnum(['BANK', 'CHARGE'], { description: 'payType 102 (BANK) or 107 (CHARGE)' }),
  externalOrderId: ExternalOrderId,
  phone: Phone,
  checkingPhone: KenyanMobile({ description: 'the phone that receives the STK PIN prompt' }),
  notifyUrl: Url,
  remark: Remark,
  returnUrl: Url,
});

export const TransferBody = Type.Object({
  channelType: StringEnum(['BANK']),
  currencyAmount: Amount,
  externalOrderId: ExternalOrderId,
  phone: Phone,
  bankName: Type.Optional(Type.String({ maxLength: 100, description: 'reserved; stored and echoed as accountCode' })),
  remark: Remark,
  notifyUrl: Url,
});

const account = (order: OrderRow) => ({
  accountType: 'MOBILE',
  accountName: kenyaDetails(order).receiverName ?? '',
  accountNo: kenyaDetails(order).phone,
});

/** Once M-Pesa reported a receipt, it is the channel order's id (the transaction the payer's SMS names). */
const receipt = (order: OrderRow) => {
  const mpesaReceipt = kenyaDetails(order).mpesaReceipt;
  return mpesaReceipt === undefined ? {} : { channelOrderId: mpesaReceipt };
};

/** Endpoints 6–9: Kenya collections and transfers, and their queries. */
export function kenyaRoutes(deps: {
  orders: OrderService;
  merchants: MerchantService;
  kinds: KenyaKinds;
}): SignedRouteDef[] {
  const { orders, kinds } = deps;
  return [
    signedRoute({
      method: 'POST',
      path: '/api/v3/ken/createCollectingOrder',
      permission: 'ken.collection',
      pausedBy: 'payments',
      tag: 'Kenya',
      summary: 'Create a collection: the payer confirms an M-Pesa STK prompt on the cashier page',
      body: CollectionBody,
      data: KenyaCollectionResult,
      handle: async ({ body, caller }) => {
        const amount = amountField('amount', body.amount, KENYA_CURRENCY);
        const { data } = await orders.create(kinds.collection, {
          id: newOrderId(kinds.collection),
          ...fromCreateRequest(caller, body),
          currency: KENYA_CURRENCY,
          channelType: body.channelType,
          payType: COLLECTION_PAY_TYPE[body.channelType],
          feeChannel: `ken.collection.${body.channelType}`,
          amount,
          details: { phone: body.phone, checkingPhone: body.checkingPhone } satisfies KenyaDetails,
          cashierExpiry: { lifetimeMs: caller.cashierLifetimeMs },
        });
        return data;
      },
    }),
    signedRoute({
      method: 'POST',
      path: '/api/v3/ken/createTransferOrder',
      permission: 'ken.transfer',
      pausedBy: 'payouts',
      tag: 'Kenya',
      summary: 'Create a transfer (payout to an M-Pesa phone); amount + fee are frozen from the KES balance',
      body: TransferBody,
      data: TransferResult,
      handle: async ({ body, caller }) => {
        const amount = amountField('currencyAmount', body.currencyAmount, KENYA_CURRENCY);
        const details: KenyaDetails = {
          phone: body.phone,
          ...(body.bankName !== undefined && { bankName: body.bankName }),
        };
        const { data } = await orders.create(kinds.transfer, {
          id: newOrderId(kinds.transfer),
          ...fromCreateRequest(caller, body),
          currency: KENYA_CURRENCY,
          channelType: body.channelType,
          payType: TRANSFER_PAY_TYPE,
          feeChannel: 'ken.transfer.BANK',
          amount,
          details,
        });
        return data;
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
      extra: receipt,
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
      extra: (order) => ({ orderFee: order.fee, ...receipt(order) }),
    }),
  ];
}
