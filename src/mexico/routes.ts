/**
 * Where Mexico's rails call Cashgate: STP's abono and cambio-de-estado webhooks
 * (`/rails/stp/<token>/abono`, `/rails/stp/<token>/cambio-estado`) and Stripe's
 * (`/rails/stripe/<token>`); and the operator's view of SPEI transfers no waiting order took.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { formatMoney } from '../money.js';
import { sameToken } from '../rails/callback-routes.js';
import type { Store } from '../store/store.js';
import { maskAccount } from './kinds.js';
import type { OxxoLive } from './oxxo-live.js';
import { unmatchedAbonos, type SpeiAbonoRow } from './queries.js';
import type { SpeiLive } from './spei-live.js';

/** The webhooks of the live Mexican rails; each answers what its handler decides. */
export async function registerMexicoWebhooks(
  app: FastifyInstance,
  deps: {
    spei?: { connector: SpeiLive; token: string } | undefined;
    oxxo?: { connector: OxxoLive; token: string } | undefined;
    logger: Logger;
  },
): Promise<void> {
  await app.register(async (scope) => {
    // Bodies are kept as sent: Stripe's signature covers the exact bytes; STP's JSON is parsed here.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_request, text, done) =>
      done(null, typeof text === 'string' ? text : text.toString('utf8')),
    );
    const json = (text: unknown): unknown => {
      try {
        return typeof text === 'string' ? (JSON.parse(text) as unknown) : undefined;
      } catch {
        return undefined;
      }
    };
    const { spei, oxxo, logger } = deps;
    if (spei !== undefined) {
      scope.post<{ Params: { token: string } }>('/rails/stp/:token/abono', async (request, reply) => {
        if (!sameToken(request.params.token, spei.token)) return reply.code(404).send({ error: 'not found' });
        try {
          const answer = await spei.connector.abono(json(request.body));
          return await reply.code(answer.status).send(answer.body);
        } catch (error) {
          // Nothing was recorded: STP delivers the abono again.
          logger.error({ err: error }, 'an STP abono could not be decided now');
          return reply.code(500).send({ mensaje: 'intente más tarde' });
        }
      });
      scope.post<{ Params: { token: string } }>('/rails/stp/:token/cambio-estado', async (request, reply) => {
        if (!sameToken(request.params.token, spei.token)) return reply.code(404).send({ error: 'not found' });
        try {
          await spei.connector.cambioEstado(json(request.body));
        } catch (error) {
          logger.error({ err: error }, 'an STP cambio de estado could not be handled now: reconciliation asks');
        }
        return reply.code(200).send({ mensaje: 'recibido' });
      });
    }
    if (oxxo !== undefined) {
      scope.post<{ Params: { token: string } }>('/rails/stripe/:token', async (request, reply) => {
        if (!sameToken(request.params.token, oxxo.token)) return reply.code(404).send({ error: 'not found' });
        const signature = request.headers['stripe-signature'];
        const answer = await oxxo.connector.webhook(
          typeof request.body === 'string' ? request.body : '',
          Array.isArray(signature) ? signature[0] : signature,
        );
        return reply.code(answer.status).send(answer.body);
      });
    }
  });
}

const UnmatchedTransfer = Type.Object({
  id: Type.String({ description: 'STP’s id of the received order' }),
  claveRastreo: Type.String(),
  fechaOperacion: Type.String({ description: 'STP’s operating day, YYYYMMDD' }),
  clabe: Type.String({ description: 'the CLABE it was sent to' }),
  orderId: Type.Union([Type.String(), Type.Null()], { description: 'the order the CLABE belongs to, if any' }),
  amount: Type.String({ description: 'pesos, e.g. "150.00"' }),
  sendingBank: Type.String({ description: 'the sending bank’s 5-digit Banxico code' }),
  payerAccount: Type.Union([Type.String(), Type.Null()], { description: 'masked: its last four digits' }),
  disposition: Type.String({
    description:
      'refused (another amount under dynamicAmountNotify 2), unmatched (no waiting order: returned by STP), ' +
      'late (settled by STP before Cashgate answered: returned by Cashgate)',
  }),
  causa: Type.Union([Type.Integer(), Type.Null()], { description: 'the SPEI return cause Cashgate gave' }),
  stpEstado: Type.Union([Type.String(), Type.Null()], { description: 'the state STP last gave it (LQ, D, R…)' }),
  returnState: Type.Union([Type.String(), Type.Null()], {
    description:
      'Cashgate’s own return: to_send, sent, settled, failed (the operator must return it); null when STP returns it',
  }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.Integer({ description: 'Unix milliseconds' }),
});

function unmatchedView(row: SpeiAbonoRow) {
  return {
    id: row.id,
    claveRastreo: row.clave_rastreo,
    fechaOperacion: row.fecha_operacion,
    clabe: row.clabe,
    orderId: row.order_id,
    amount: formatMoney(BigInt(row.amount), 'MXN').replace(/,/g, ''),
    sendingBank: row.institucion_ordenante,
    payerAccount: row.payer_account === null ? null : maskAccount(row.payer_account),
    disposition: row.disposition,
    causa: row.causa,
    stpEstado: row.stp_estado,
    returnState: row.return_state,
    lastError: row.last_error,
    createdAt: row.created_at,
  };
}

/** Operator routes for SPEI (served with any rail: empty while SPEI is the sandbox's). */
export function registerMexicoAdminRoutes(scope: FastifyInstance, catalog: RouteCatalog, deps: { store: Store }): void {
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/spei/unmatched',
    tag: 'Admin: Mexico',
    summary: 'SPEI transfers no waiting order took, newest first (the latest 100)',
    description:
      'Each transfer to a CLABE of no waiting order (an ended order’s, an unknown one) or of another amount under ' +
      'dynamicAmountNotify 2 is answered devolver, and STP returns it. One STP settled before Cashgate answered ' +
      '(found by reconciliation) is held in system/MXN/spei_returns and returned by Cashgate itself (returnState). ' +
      'A failed return needs the operator. Empty while MEXICO_SPEI_RAIL=sandbox.',
    response: Type.Object({ transfers: Type.Array(UnmatchedTransfer) }),
    handle: async () => ({ transfers: (await unmatchedAbonos(deps.store.read, 100)).map(unmatchedView) }),
  });
}
