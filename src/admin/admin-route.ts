import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actorCan, actorName, type Actor } from '../access/actor.js';
import { AuditScope, recordAuditAlone, type RequestOrigin } from '../access/audit-log.js';
import { ADMIN_ROUTE_ACCESS, type Access } from '../access/permissions.js';
import { maskPersonalData } from '../access/redact.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { validateInput } from '../http/validation.js';
import { actorOf, adminAccessOf, sendAdminError } from './plugin.js';

/** Why an operator moves money or changes what merchants pay: required on those routes, kept in the audit log. */
export const Reason = Type.String({ minLength: 1, maxLength: 500, description: 'why (kept in the audit log)' });

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
    /** Who calls: an operator, or the root token. */
    actor: Actor;
  }): Promise<Static<R>>;
}

/** The permission and audit action of a route, from the one table (a route missing there is a programming error). */
export function routeAccess(method: string, path: string): Access {
  const access = ADMIN_ROUTE_ACCESS[`${method} ${path}`];
  if (access === undefined) {
    throw new Error(`admin route ${method} ${path} has no entry in ADMIN_ROUTE_ACCESS (src/access/permissions.ts)`);
  }
  return access;
}

export function requestOrigin(request: FastifyRequest): RequestOrigin {
  const userAgent = request.headers['user-agent'];
  return { requestId: request.id, ip: request.ip, userAgent: typeof userAgent === 'string' ? userAgent : undefined };
}

/**
 * Mounts an operator route and lists it in the catalog. Every call is checked against the permission
 * the route declares; a call that changes something (and any call through the root token) runs in an
 * audit scope, so its record is written in the unit of work of the change; what it answers is masked
 * for a caller who may not read personal data.
 */
export function registerAdminRoute<B extends TSchema | undefined, R extends TSchema>(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  def: AdminRouteDef<B, R>,
): void {
  const access = routeAccess(def.method, def.path);
  const { store, clock } = adminAccessOf(scope);
  catalog.add(def, { security: 'admin', permission: access.permission, response: def.response });
  scope.route({
    method: def.method,
    url: def.path,
    handler: async (request, reply) => {
      const actor = actorOf(request);
      if (!actorCan(actor, access.permission)) {
        const role = actor.type === 'operator' ? actor.role : actor.type;
        // A refusal is a staff action too: who tried what, for the SIEM.
        await recordAuditAlone(store, clock, {
          actor,
          action: 'access.denied',
          targetType: 'route',
          targetId: `${def.method} ${request.url}`,
          changes: { request: { permission: access.permission } },
          origin: requestOrigin(request),
        });
        return sendAdminError(
          reply,
          403,
          'forbidden',
          `${actorName(actor)} has role ${role}, which lacks permission ${access.permission} (needed by ${def.method} ${def.path})`,
          { role, permission: access.permission },
        );
      }
      for (const [schema, value] of [
        [def.body, request.body],
        [def.query, request.query],
      ] as const) {
        if (schema === undefined) continue;
        const error = validateInput(schema, value);
        if (error !== undefined) throw error;
      }
      const params = request.params as Record<string, string>;
      // Checked against def.body above; a route without a body schema reads none.
      const body = (def.body === undefined ? undefined : request.body) as StaticOrUndefined<B>;
      const work = () =>
        def.handle({ body, params, query: (request.query ?? {}) as Record<string, string | undefined>, reply, actor });
      const action = access.action ?? (actor.type === 'root-token' ? 'admin.read' : undefined);
      let result: Static<R>;
      if (action === undefined) {
        result = await work();
      } else {
        const reason = (body as { reason?: unknown } | undefined)?.reason;
        const target = access.target;
        const audit = new AuditScope(store, clock, {
          actor,
          action,
          ...(target !== undefined
            ? { targetType: target[0], targetId: params[target[1]] }
            : access.action === undefined && { targetType: 'route', targetId: `${def.method} ${request.url}` }),
          ...(typeof reason === 'string' && { reason }),
          ...(body !== undefined && access.action !== undefined && { changes: { request: body } }),
          origin: requestOrigin(request),
        });
        result = await audit.run(work);
      }
      const unmasked = access.reveals === true || actorCan(actor, 'personal_data.read');
      return reply.code(200).send(unmasked ? result : maskPersonalData(result));
    },
  });
}
