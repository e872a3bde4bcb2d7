import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RouteCatalog } from '../http/route-catalog.js';
import { validateInput } from '../http/validation.js';

type StaticOrUndefined<T extends TSchema | undefined> = T extends TSchema ? Static<T> : undefined;

export interface AdminRouteDef<B extends TSchema | undefined, R extends TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  tag: string;
  summary: string;
  description?: string;
  body?: B;
  /** The query string's parameters, checked like a body (each value a string). */
  query?: TSchema;
  response: R;
  handle(input: {
    body: StaticOrUndefined<B>;
    params: Record<string, string>;
    query: Record<string, string | undefined>;
    reply: FastifyReply;
  }): Promise<Static<R>>;
}

/** Mounts an operator route (bearer-protected by its scope) and lists it in the catalog. */
export function registerAdminRoute<B extends TSchema | undefined, R extends TSchema>(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  def: AdminRouteDef<B, R>,
): void {
  catalog.add(def, { security: 'admin', response: def.response });
  scope.route({
    method: def.method,
    url: def.path,
    handler: async (request, reply) => {
      for (const [schema, value] of [
        [def.body, request.body],
        [def.query, request.query],
      ] as const) {
        if (schema === undefined) continue;
        const error = validateInput(schema, value);
        if (error !== undefined) throw error;
      }
      const result = await def.handle({
        // Checked against def.body above; a route without a body schema reads none.
        body: (def.body === undefined ? undefined : request.body) as StaticOrUndefined<B>,
        params: request.params as Record<string, string>,
        query: (request.query ?? {}) as Record<string, string | undefined>,
        reply,
      });
      return reply.code(200).send(result);
    },
  });
}
