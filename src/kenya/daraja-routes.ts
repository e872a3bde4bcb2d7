import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { registerRailCallbacks } from '../rails/callback-routes.js';
import type { DarajaKenya } from './daraja.js';

/**
 * Where Daraja calls back: `/rails/daraja/<token>/…`. Daraja is always answered 200
 * `{"ResultCode":0,…}` once the callback is recorded, whatever it said; each is confirmed with
 * Daraja's own query before an order changes.
 */
export function registerDarajaCallbacks(
  app: FastifyInstance,
  deps: { daraja: DarajaKenya; token: string; logger: Logger },
): Promise<void> {
  const { daraja } = deps;
  return registerRailCallbacks(app, {
    rail: 'daraja',
    token: deps.token,
    logger: deps.logger,
    answer: { ResultCode: 0, ResultDesc: 'Accepted' },
    handlers: {
      stk: (body) => daraja.stkCallback(body),
      'b2c/result': (body) => daraja.b2cResult(body, 'b2c-result'),
      'b2c/timeout': (body) => daraja.b2cResult(body, 'b2c-timeout'),
      'status/result': (body) => daraja.statusResult(body, 'status-result'),
      'status/timeout': (body) => daraja.statusResult(body, 'status-timeout'),
    },
  });
}
