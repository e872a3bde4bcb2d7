import { Type } from '@sinclair/typebox';
import { actorName } from '../access/actor.js';
import type { FastifyInstance } from 'fastify';
import { Reason, registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { StringEnum } from '../http/validation.js';
import { OperatorError } from '../admin/failures.js';
import { CASHIER_CURRENCIES, CASHIER_METHODS } from './cashier-methods.js';
import {
  CallbackAddressBody,
  CreateApiKeyBody,
  CreateMerchantBody,
  EditApiKeyBody,
  MerchantLanguage,
} from './schemas.js';
import { PAUSABLE } from './pause.js';
import type { MerchantService } from './service.js';

const PauseView = Type.Union(
  [
    Type.Object({
      since: Type.Integer({ description: 'Unix milliseconds' }),
      reason: Type.String({ description: "the operator's reason (never shown to the merchant)" }),
      by: Type.String({ description: 'the operator (e-mail) who paused, or root-token' }),
    }),
    Type.Null(),
  ],
  { description: 'null: not paused' },
);

const PauseBody = Type.Object({
  what: StringEnum([...PAUSABLE], {
    description:
      'payments: every create that takes money in (collections, aggregate cashiers, token-to-fiat exchanges); ' +
      'payouts: every create that pays money out (transfers, fiat-to-token exchanges)',
  }),
  reason: Reason,
});

export const MerchantView = Type.Object({
  merchantId: Type.String(),
  name: Type.String(),
  language: MerchantLanguage,
  callbackUrl: Type.Union([Type.String(), Type.Null()]),
  settlementDelayMs: Type.Integer({ description: 'collected money becomes available this long after payment' }),
  cashierLifetimeMs: Type.Integer({ description: "how long a payer has on a collection's cashier page" }),
  cashierMethods: Type.Array(StringEnum([...CASHIER_METHODS]), {
    description: 'the payment methods its aggregate cashiers offer',
  }),
  cashierCurrency: StringEnum([...CASHIER_CURRENCIES], {
    description:
      'the currency its aggregate cashiers take: BRL (PIX, PIX_DYNAMIC, BOLETO) or MXN (SPEI, OXXO); USDT_TRC20 is priced in it',
  }),
  createdAt: Type.Integer({ description: 'Unix milliseconds' }),
  paused: Type.Object(
    { payments: PauseView, payouts: PauseView },
    { description: "the operator's pauses of the merchant's payments (money in) and payouts (money out)" },
  ),
});

export const ApiKeyView = Type.Object({
  accessKey: Type.String(),
  label: Type.String(),
  permissions: Type.Array(Type.String()),
  ipWhitelist: Type.Array(Type.String()),
  debug: Type.Boolean(),
  status: StringEnum(['pending', 'active', 'disabled', 'deleted'], {
    description: 'pending (waiting for activeAt: a new, edited or re-enabled key), active, disabled or deleted',
  }),
  activeAt: Type.Integer({ description: 'Unix milliseconds from which the key (or its last edit) takes effect' }),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

const TAG = 'Admin: merchants and API keys';

/** Operator routes for merchants, their API keys and their unified callback address. */
export function registerMerchantAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  merchants: MerchantService,
): void {
  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants',
    tag: TAG,
    summary: 'Create a merchant',
    body: CreateMerchantBody,
    response: Type.Object({ merchantId: Type.String(), name: Type.String(), language: MerchantLanguage }),
    handle: async ({ body }) => {
      const merchant = await merchants.createMerchant(body);
      return { merchantId: merchant.merchantId, name: merchant.name, language: merchant.language };
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/merchants',
    tag: TAG,
    summary: 'List merchants',
    response: Type.Object({ merchants: Type.Array(MerchantView) }),
    handle: async () => ({ merchants: await merchants.listMerchants() }),
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/merchants/:merchantId',
    tag: TAG,
    summary: 'Show a merchant',
    response: MerchantView,
    handle: ({ params }) => merchants.getMerchant(params.merchantId ?? ''),
  });

  registerAdminRoute(scope, catalog, {
    method: 'PUT',
    path: '/admin/v1/merchants/:merchantId/callback',
    tag: TAG,
    summary: "Set (or clear with null) the merchant's unified callback address",
    body: CallbackAddressBody,
    response: MerchantView,
    handle: ({ params, body }) => merchants.setCallbackUrl(params.merchantId ?? '', body.url),
  });

  registerAdminRoute(scope, catalog, {
    method: 'PUT',
    path: '/admin/v1/merchants/:merchantId/cashier',
    tag: TAG,
    summary:
      'Set how long a payer has on a cashier page (default 30 minutes), the currency its aggregate cashiers take ' +
      '(BRL default, or MXN) and the methods they offer (default all of the currency)',
    description:
      'Any of the members. The lifetime applies to collections and aggregate cashiers created from now on; the ' +
      'methods to aggregate cashier pages shown from now on; the currency to aggregate cashiers opened from now on. ' +
      'BRL cashiers offer PIX, PIX_DYNAMIC, BOLETO and USDT_TRC20; MXN cashiers SPEI (payType 102), OXXO (payType 110) ' +
      'and USDT_TRC20 priced in pesos. Methods of another currency are refused; a currency given without methods ' +
      'offers every method of that currency.',
    body: Type.Object({
      currency: Type.Optional(StringEnum([...CASHIER_CURRENCIES])),
      lifetimeMs: Type.Optional(Type.Integer({ minimum: 60_000, maximum: 30 * 86_400_000 })),
      methods: Type.Optional(
        Type.Array(StringEnum([...CASHIER_METHODS]), { minItems: 1, maxItems: CASHIER_METHODS.length }),
      ),
    }),
    response: MerchantView,
    handle: ({ params, body }) => {
      if (body.lifetimeMs === undefined && body.methods === undefined && body.currency === undefined) {
        throw new OperatorError({
          kind: 'invalid_cashier_settings',
          detail: 'give lifetimeMs, methods, currency or any of them',
        });
      }
      return merchants.setCashierSettings(params.merchantId ?? '', body);
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants/:merchantId/pause',
    tag: TAG,
    summary: "Pause a merchant's payments (money in) or payouts (money out)",
    description:
      'From now on the merchant API refuses every create of that direction with code 300, saying that the operator ' +
      'paused them and since when (never the reason); queries, balances, callbacks and orders already created go on. ' +
      'Pausing what is paused already keeps the first pause (its time, reason and operator) and answers it.',
    body: PauseBody,
    response: MerchantView,
    handle: ({ params, body, actor }) =>
      merchants.pause(params.merchantId ?? '', body.what, body.reason, actorName(actor)),
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants/:merchantId/resume',
    tag: TAG,
    summary: "Resume a merchant's paused payments or payouts",
    description: 'Creates of that direction work again at once. Resuming what is not paused is a 409 (not_paused).',
    body: PauseBody,
    response: MerchantView,
    handle: ({ params, body }) => merchants.resume(params.merchantId ?? '', body.what),
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants/:merchantId/api-keys',
    tag: TAG,
    summary: 'Create an API key (the only time its secret is shown)',
    description: 'The key takes effect KEY_ACTIVATION_DELAY_MS after creation (activeAt).',
    body: CreateApiKeyBody,
    response: Type.Object({ accessKey: Type.String(), secretKey: Type.String(), activeAt: Type.Integer() }),
    handle: ({ params, body }) => merchants.createApiKey(params.merchantId ?? '', body),
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/merchants/:merchantId/api-keys',
    tag: TAG,
    summary: "List a merchant's API keys (never their secrets; deleted keys are left out)",
    response: Type.Object({ apiKeys: Type.Array(ApiKeyView) }),
    handle: async ({ params }) => ({
      apiKeys: await merchants.listOperatorKeys(params.merchantId ?? ''),
    }),
  });

  registerAdminRoute(scope, catalog, {
    method: 'PATCH',
    path: '/admin/v1/merchants/:merchantId/api-keys/:accessKey',
    tag: TAG,
    summary: 'Edit permissions, IP whitelist, debug flag or label; the edit takes effect after the activation delay',
    body: EditApiKeyBody,
    response: ApiKeyView,
    handle: async ({ params, body }) =>
      merchants.asOperatorKey(await merchants.editApiKey(params.merchantId ?? '', params.accessKey ?? '', body)),
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants/:merchantId/api-keys/:accessKey/disable',
    tag: TAG,
    summary: 'Disable an API key at once',
    response: ApiKeyView,
    handle: async ({ params }) =>
      merchants.asOperatorKey(await merchants.setApiKeyEnabled(params.merchantId ?? '', params.accessKey ?? '', false)),
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants/:merchantId/api-keys/:accessKey/enable',
    tag: TAG,
    summary: 'Enable a disabled API key; it takes effect after the activation delay',
    response: ApiKeyView,
    handle: async ({ params }) =>
      merchants.asOperatorKey(await merchants.setApiKeyEnabled(params.merchantId ?? '', params.accessKey ?? '', true)),
  });

  registerAdminRoute(scope, catalog, {
    method: 'DELETE',
    path: '/admin/v1/merchants/:merchantId/api-keys/:accessKey',
    tag: TAG,
    summary: 'Delete an API key for good',
    response: ApiKeyView,
    handle: async ({ params }) =>
      merchants.asOperatorKey(await merchants.deleteApiKey(params.merchantId ?? '', params.accessKey ?? '')),
  });
}
