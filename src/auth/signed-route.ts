import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MerchantCaller } from './plugin.js';
import type { Permission } from './permissions.js';
import { Envelope, EnvelopeWithDesc, sendSuccess } from '../http/envelope.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { amountMembers, withNumbersAsSent } from '../http/raw-numbers.js';
import { validateInput } from '../http/validation.js';
import { refuseWhenPaused, type Pausable } from './paused.js';

type StaticOrUndefined<T extends TSchema | undefined> = T extends TSchema ? Static<T> : undefined;

/** A merchant API endpoint: one definition gives its auth, validation, serializer and OpenAPI entry. */
export interface SignedRouteDef<
  B extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  D extends TSchema = TSchema,
> {
  method: 'GET' | 'POST';
  path: string;
  permission: Permission;
  tag: string;
  summary: string;
  description?: string;
  body?: B;
  query?: Q;
  /** Schema of the envelope's `data` on success. */
  data: D;
  /** The envelope also carries `desc: null` (the spec's Brazil collection query). */
  desc?: boolean;
  /** `data` holds ExactNumber values, written digit for digit instead of by the schema's serializer. */
  exactNumbers?: boolean;
  /**
   * A create that takes money in (`payments`) or pays money out (`payouts`): refused (300) while the
   * operator has the merchant's payments or payouts paused. Queries and reads declare none.
   */
  pausedBy?: Pausable;
  handle(input: {
    body: StaticOrUndefined<B>;
    query: StaticOrUndefined<Q>;
    caller: MerchantCaller;
    request: FastifyRequest;
  }): Promise<Static<D>>;
}

/** Declares a signed route with full type inference. */
export function signedRoute<B extends TSchema | undefined, Q extends TSchema | undefined, D extends TSchema>(
  def: SignedRouteDef<B, Q, D>,
): SignedRouteDef<B, Q, D> {
  return def;
}

/** Mounts a signed route in a scope where the merchant auth hook runs, and lists it in the catalog. */
export function registerSignedRoute(scope: FastifyInstance, catalog: RouteCatalog, def: SignedRouteDef): void {
  const amounts = amountMembers(def.body);
  catalog.add(def, {
    security: 'signed',
    permission: def.permission,
    response: def.data,
    ...(def.desc === true && { desc: true }),
  });
  scope.route({
    method: def.method,
    url: def.path,
    config: { permission: def.permission },
    schema: { response: { 200: def.desc === true ? EnvelopeWithDesc(def.data) : Envelope(def.data) } },
    handler: async (request, reply) => {
      const caller = request.merchantCaller;
      if (caller === null) throw new Error('signed route reached without an authenticated caller');
      try {
        return await answer(request, reply, caller);
      } catch (error) {
        // A refused request's nonce is spent too: its replay is refused as a replay (307).
        await caller.nonce.settle();
        throw error;
      }
    },
  });
  async function answer(request: FastifyRequest, reply: FastifyReply, caller: MerchantCaller) {
    // A paused direction refuses before the body is read: nothing of the request is written.
    if (def.pausedBy !== undefined) refuseWhenPaused(caller, def.pausedBy);
    // GET routes take their parameters from the query; a route without a schema takes none.
    const query = request.method === 'GET' ? (request.query ?? {}) : undefined;
    if (def.query !== undefined || query !== undefined) {
      const error = validateInput(def.query ?? EMPTY_OBJECT, query ?? {});
      if (error !== undefined) throw error;
    }
    // Amounts are read as written: 1e3 or 10.0 sent as a number is checked as that text.
    const body = withNumbersAsSent(request.body, request.rawBody, amounts);
    if (def.body !== undefined) {
      const error = validateInput(def.body, body);
      if (error !== undefined) throw error;
    }
    const data = await def.handle({
      body,
      query: request.query,
      caller,
      request,
    });
    // Nobody is answered before the request's nonce is durable (a read-only request records it now).
    await caller.nonce.settle();
    return sendSuccess(reply, data, { desc: def.desc === true, exact: def.exactNumbers === true });
  }
}

const EMPTY_OBJECT = Type.Object({});
