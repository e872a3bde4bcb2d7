import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { formatMoney } from '../money.js';
import type { Store } from '../store/store.js';
import { boletoSuspense, type BoletoChargeRow } from './queries.js';

const TAG = 'Admin: Boleto';

const SuspenseBoleto = Type.Object({
  orderId: Type.String({ description: 'the order the boleto was issued for (it no longer took a payment)' }),
  issuer: Type.Union([Type.Literal('efi'), Type.Literal('inter')]),
  reference: Type.String({ description: 'Cashgate’s reference of the boleto at the issuer (Inter’s seuNumero)' }),
  chargeId: Type.Union([Type.String(), Type.Null()], { description: 'the issuer’s id of the charge' }),
  nossoNumero: Type.Union([Type.String(), Type.Null()]),
  amount: Type.String({ description: 'the boleto’s nominal amount, reais, e.g. "12.50"' }),
  paidAmount: Type.String({ description: 'what the issuer says it received, reais' }),
  paidAt: Type.String({ description: 'when, as the issuer wrote it' }),
  paidMethod: Type.String({ description: 'BOLETO (at a bank), PIX (its QR code) or UNKNOWN' }),
  issuerStatus: Type.Union([Type.String(), Type.Null()], { description: 'the issuer’s word for the charge' }),
  updatedAt: Type.Integer({ description: 'Unix milliseconds' }),
});

const reais = (centavos: number | null) => formatMoney(BigInt(centavos ?? 0), 'BRL').replace(/,/g, '');

function suspenseView(row: BoletoChargeRow) {
  return {
    orderId: row.order_id,
    issuer: row.issuer,
    reference: row.reference,
    chargeId: row.charge_id,
    nossoNumero: row.nosso_numero,
    amount: reais(row.amount),
    paidAmount: reais(row.paid_amount),
    paidAt: row.paid_at ?? '',
    paidMethod: row.paid_method ?? 'UNKNOWN',
    issuerStatus: row.issuer_status,
    updatedAt: row.updated_at,
  };
}

/** Operator routes for boletos at an issuer: those paid when their order no longer took a payment (served with any rail). */
export function registerBoletoAdminRoutes(scope: FastifyInstance, catalog: RouteCatalog, deps: { store: Store }): void {
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/boleto/suspense',
    tag: TAG,
    summary: 'Boletos paid when their order no longer took a payment, newest first (the latest 100)',
    description:
      'A boleto printed before its order expired and its charge was written off can still be paid at a branch. ' +
      'The issuer’s confirmed payment is kept in system/BRL/boleto_suspense (from rail_clearing), never lost: ' +
      'the operator settles it with the merchant or the payer (a balance adjustment, a refund outside Cashgate). ' +
      'Empty while boletos are the sandbox’s (BRAZIL_BOLETO_RAIL=sandbox).',
    response: Type.Object({ boletos: Type.Array(SuspenseBoleto) }),
    handle: async () => ({ boletos: (await boletoSuspense(deps.store.read, 100)).map(suspenseView) }),
  });
}
