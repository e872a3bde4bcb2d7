import { Type } from '@sinclair/typebox';
import { signedRoute, type SignedRouteDef } from '../auth/signed-route.js';
import { StringEnum } from '../http/validation.js';
import { AmountField, ExternalOrderId, OptionalUrl, QueryBody, Remark } from '../orders/schemas.js';
import { CHAINS } from '../rails/chain/addresses.js';
import { TOKENS } from './amounts.js';
import { EXCHANGE_CURRENCIES } from './rates.js';
import {
  FiatToTokenRecord,
  FiatToTokenResult,
  fiatToTokenRecord,
  TokenToFiatRecord,
  TokenToFiatResult,
  tokenToFiatRecord,
} from './records.js';
import type { ExchangeService } from './service.js';

const TAG = 'Exchange';
const Address = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const FiatToTokenBody = Type.Object({
  addressTo: Address(
    'where the tokens go: a TRON address (T…, Base58Check) or an EVM address (0x…, EIP-55 when mixed case), per chainType',
  ),
  chainType: StringEnum(CHAINS),
  tokenType: StringEnum(TOKENS),
  currencyAmount: AmountField(
    'whole units of currencyType, at least 1; taken from the available balance, fee included',
  ),
  currencyType: StringEnum(EXCHANGE_CURRENCIES),
  externalOrderId: ExternalOrderId,
  remark: Remark,
});

export const TokenToFiatBody = Type.Object({
  tokenAmount: AmountField('tokens the payer sends, at most 6 decimals (USDT on TRON)'),
  chainType: StringEnum(['TRON']),
  addressFrom: Address('the TRON address the payer sends from; a deposit from any other address is refused'),
  currencyType: StringEnum(['BRL']),
  tokenType: StringEnum(TOKENS),
  externalOrderId: Type.Optional(ExternalOrderId),
  notifyUrl: OptionalUrl,
  remark: Remark,
});

/** Endpoints 2–5: the fiat ↔ USDT exchange. */
export function exchangeRoutes(exchange: ExchangeService): SignedRouteDef[] {
  return [
    signedRoute({
      method: 'POST',
      path: '/api/v3/exchange/fiat/to/wallet',
      permission: 'exchange',
      pausedBy: 'payouts',
      tag: TAG,
      summary: 'Buy USDT with the fiat balance: the rate is locked and currencyAmount is frozen now',
      body: FiatToTokenBody,
      data: FiatToTokenResult,
      exactNumbers: true,
      handle: async ({ body, caller }) => exchange.createFiatToToken(caller, body),
    }),
    signedRoute({
      method: 'POST',
      path: '/api/v3/exchange/query/exchange/orderinfo',
      permission: 'query',
      tag: TAG,
      summary: 'Query a fiat → token order (orderFee is a number here)',
      body: QueryBody,
      data: FiatToTokenRecord,
      handle: async ({ body, caller }) => fiatToTokenRecord(await exchange.query(caller, 'fiat_to_token', body)),
    }),
    signedRoute({
      method: 'POST',
      path: '/api/v3/exchange/wallet/to/fiat',
      permission: 'exchange',
      pausedBy: 'payments',
      tag: TAG,
      summary: 'Sell USDT on TRON for BRL: a fresh deposit address and a rate held until the quote expires',
      body: TokenToFiatBody,
      data: TokenToFiatResult,
      exactNumbers: true,
      handle: async ({ body, caller }) => exchange.createTokenToFiat(caller, body),
    }),
    signedRoute({
      method: 'POST',
      path: '/api/v3/exchange/query/wallet/exchange/orderinfo',
      permission: 'query',
      tag: TAG,
      summary: 'Query a token → fiat order (orderFee is a string here, and notifyUrl is included)',
      body: QueryBody,
      data: TokenToFiatRecord,
      handle: async ({ body, caller }) => tokenToFiatRecord(await exchange.query(caller, 'token_to_fiat', body)),
    }),
  ];
}
