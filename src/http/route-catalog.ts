import type { TSchema } from '@sinclair/typebox';

/** How a route is protected, for the OpenAPI document. */
export type RouteSecurity = 'signed' | 'admin' | 'public';

/** What the OpenAPI document knows of a route: the same schemas that validate it. */
export interface RouteDoc {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Fastify path syntax (`/admin/v1/merchants/:merchantId`). */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  security: RouteSecurity;
  /** Permission a signed route needs. */
  permission?: string;
  body?: TSchema;
  query?: TSchema;
  /** Schema of a successful response: for signed routes, the envelope's `data`. */
  response: TSchema;
  /** Signed routes whose envelope also carries `desc: null`. */
  desc?: boolean;
  /** The success answer's media type when it is not JSON (e.g. Prometheus text). */
  mediaType?: string;
}

/** What every route definition (signed or admin) says about itself. */
export interface DescribedRoute {
  method: RouteDoc['method'];
  path: string;
  tag: string;
  summary: string;
  description?: string | undefined;
  body?: TSchema | undefined;
  query?: TSchema | undefined;
}

/** Routes registered so far; the OpenAPI document is generated from it. */
export class RouteCatalog {
  readonly routes: RouteDoc[] = [];

  add(def: DescribedRoute, how: Pick<RouteDoc, 'security' | 'permission' | 'response' | 'desc' | 'mediaType'>): void {
    const { method, path, tag, summary, description, body, query } = def;
    this.routes.push({
      method,
      path,
      tag,
      summary,
      ...how,
      ...(description !== undefined && { description }),
      ...(body !== undefined && { body }),
      ...(query !== undefined && { query }),
    });
  }
}
