import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorCan, actorName, type Actor } from '../access/actor.js';
import { AuditScope, recordAuditAlone, type RequestOrigin } from '../access/audit-log.js';
import { ADMIN_ROUTE_ACCESS, type Access } from '../access/permissions.js';
import { maskPersonalData } from '../access/redact.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { validateInput } from '../http/validation.js';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import { actorOf, adminAccessOf, sendAdminError, type AdminAccess } from './plugin.js';

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

/** An admin route called in-process (the back office): the caller's actor, request origin and input. */
export interface AdminCallInput {
  params?: Record<string, string>;
  body?: unknown;
  query?: Record<string, string | undefined>;
}

/** The call was refused by the permission table (its `access.denied` record is written). */
export class AdminForbidden extends Error {
  constructor(
    readonly role: string,
    readonly permission: string,
    message: string,
  ) {
    super(message);
    this.name = 'AdminForbidden';
  }
}

/**
 * The one pipeline of every admin route, over HTTP or in-process: the permission the table gives
 * the route (a refusal is recorded as `access.denied` and thrown), the body and query checked against
 * their schemas, the handler run in an audit scope when the call changes something (or comes through
 * the root token), and the answer masked for a caller who may not read personal data.
 */
async function runAdminRoute<B extends TSchema | undefined, R extends TSchema>(
  def: AdminRouteDef<B, R>,
  access: Access,
  deps: { store: Store; clock: Clock },
  actor: Actor,
  input: { params: Record<string, string>; body: unknown; query: Record<string, string | undefined>; url: string },
  origin: RequestOrigin,
): Promise<unknown> {
  if (!actorCan(actor, access.permission)) {
    const role = actor.type === 'operator' ? actor.role : actor.type;
    // A refusal is a staff action too: who tried what, for the SIEM.
    await recordAuditAlone(deps.store, deps.clock, {
      actor,
      action: 'access.denied',
      targetType: 'route',
      targetId: `${def.method} ${input.url}`,
      changes: { request: { permission: access.permission } },
      origin,
    });
    throw new AdminForbidden(
      role,
      access.permission,
      `${actorName(actor)} has role ${role}, which lacks permission ${access.permission} (needed by ${def.method} ${def.path})`,
    );
  }
  for (const [schema, value] of [
    [def.body, input.body],
    [def.query, input.query],
  ] as const) {
    if (schema === undefined) continue;
    const error = validateInput(schema, value);
    if (error !== undefined) throw error;
  }
  const { params } = input;
  // Checked against def.body above; a route without a body schema reads none.
  const body = (def.body === undefined ? undefined : input.body) as StaticOrUndefined<B>;
  const work = () => def.handle({ body, params, query: input.query, actor });
  const action = access.action ?? (actor.type === 'root-token' ? 'admin.read' : undefined);
  let result: Static<R>;
  if (action === undefined) {
    result = await work();
  } else {
    const reason = (body as { reason?: unknown } | undefined)?.reason;
    const target = access.target;
    const audit = new AuditScope(deps.store, deps.clock, {
      actor,
      action,
      ...(target !== undefined
        ? { targetType: target[0], targetId: params[target[1]] }
        : access.action === undefined && { targetType: 'route', targetId: `${def.method} ${input.url}` }),
      ...(typeof reason === 'string' && { reason }),
      ...(body !== undefined && access.action !== undefined && { changes: { request: body } }),
      origin,
    });
    result = await audit.run(work);
  }
  const unmasked = access.reveals === true || actorCan(actor, 'personal_data.read');
  return unmasked ? result : maskPersonalData(result);
}

/** The admin routes of a scope, by `METHOD path` as registered, for in-process calls. */
const ROUTES = new WeakMap<AdminAccess, Map<string, AdminRouteDef<TSchema | undefined, TSchema>>>();

/**
 * Calls an admin route in-process as `actor`, through the same pipeline as over HTTP (permission,
 * audit, validation, masking): the back office's actions are the admin API's. Throws what the route
 * throws (ApiError, OperatorError), or AdminForbidden.
 */
export async function callAdminRoute(
  access: AdminAccess,
  key: keyof typeof ADMIN_ROUTE_ACCESS,
  actor: Actor,
  input: AdminCallInput,
  origin: RequestOrigin,
): Promise<unknown> {
  const def = ROUTES.get(access)?.get(key);
  if (def === undefined) throw new Error(`admin route ${key} is not registered`);
  const params = input.params ?? {};
  const url = def.path.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  return runAdminRoute(
    def,
    routeAccess(def.method, def.path),
    access,
    actor,
    { params, body: input.body ?? (def.body === undefined ? undefined : {}), query: input.query ?? {}, url },
    origin,
  );
}

/**
 * Mounts an operator route and lists it in the catalog. Every call goes through `runAdminRoute`.
 */
export function registerAdminRoute<B extends TSchema | undefined, R extends TSchema>(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  def: AdminRouteDef<B, R>,
): void {
  const access = routeAccess(def.method, def.path);
  const adminAccess = adminAccessOf(scope);
  catalog.add(def, { security: 'admin', permission: access.permission, response: def.response });
  const routes = ROUTES.get(adminAccess) ?? new Map<string, AdminRouteDef<TSchema | undefined, TSchema>>();
  routes.set(`${def.method} ${def.path}`, def);
  ROUTES.set(adminAccess, routes);
  scope.route({
    method: def.method,
    url: def.path,
    handler: async (request, reply) => {
      try {
        const result = await runAdminRoute(
          def,
          access,
          adminAccess,
          actorOf(request),
          {
            params: request.params as Record<string, string>,
            body: request.body,
            query: (request.query ?? {}) as Record<string, string | undefined>,
            url: request.url,
          },
          requestOrigin(request),
        );
        return await reply.code(200).send(result);
      } catch (error) {
        if (!(error instanceof AdminForbidden)) throw error;
        return sendAdminError(reply, 403, 'forbidden', error.message, {
          role: error.role,
          permission: error.permission,
        });
      }
    },
  });
}
