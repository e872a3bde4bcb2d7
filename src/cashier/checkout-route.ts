import { Type } from '@sinclair/typebox';
import { signedRoute, type SignedRouteDef } from '../auth/signed-route.js';
import { FormattedString } from '../http/validation.js';
import { ExternalOrderId, OptionalUrl, Remark } from '../orders/schemas.js';
import type { CheckoutService } from './checkout.js';

export const CheckoutBody = Type.Object({
  externalOrderId: ExternalOrderId,
  notifyUrl: OptionalUrl,
  remark: Remark,
  returnUrl: OptionalUrl,
  userIdentity: Type.Optional(
    FormattedString('identifier', {
      minLength: 1,
      maxLength: 128,
      description:
        "the merchant's id for the payer: a CPF/CNPJ saved under it is reused and the input step skipped; unknown, the payer enters one and it is saved",
    }),
  ),
  dynamicAmountNotify: Type.Optional(
    Type.Union([Type.Literal(1), Type.Literal(2)], {
      description:
        '1 (default): a payment of another amount completes the order with the amount paid (markStatus 1); 2: it ' +
        'is refused and the order waits for the exact amount',
    }),
  ),
});

/** Endpoint 19: an aggregate cashier address, where the payer enters the amount and chooses the method. */
export function checkoutRoute(checkouts: CheckoutService): SignedRouteDef {
  return signedRoute({
    method: 'POST',
    path: '/api/v3/polymerize/createCollectingOrder',
    permission: 'polymerize',
    pausedBy: 'payments',
    tag: 'Aggregate cashier',
    summary:
      'Open an aggregate cashier: the payer enters the amount and pays by PIX, PIX dynamic, Boleto or USDT (TRON)',
    body: CheckoutBody,
    data: Type.String({ description: 'the aggregate cashier address' }),
    handle: async ({ body, caller }) => checkouts.create(caller, body),
  });
}
