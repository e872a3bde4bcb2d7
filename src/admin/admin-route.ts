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
  response: R;
  handle(input: {
    body: StaticOrUndefined<B>;
    params: Record<string, string>;
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
      if (def.body !== undefined) {
        const error = validateInput(def.body, request.body);
        if (error !== undefined) throw error;
      }
      const result = await def.handle({
        // Checked against def.body above; a route without a body schema reads none.
        body: (def.body === undefined ? undefined : request.body) as StaticOrUndefined<B>,
        params: request.params as Record<string, string>,
        reply,
      });
      return reply.code(200).send(result);
    },
  });
}
