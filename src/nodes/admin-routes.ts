import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import type { NodeLiveness } from './liveness.js';
import * as q from './queries.js';

/** Nodes listed at most (alive first, then the most recently ended). */
const LISTED = 200;

export const NodeView = Type.Object({
  id: Type.String({ description: 'fresh at every start, and when a node declared dead rejoins' }),
  host: Type.String(),
  pid: Type.Integer(),
  role: Type.String({ description: '`serve` (HTTP and, unless CASHGATE_WORKERS=false, workers) or `worker`' }),
  version: Type.String(),
  startedAt: Type.Integer({ description: 'ms since the epoch' }),
  lastHeartbeatAt: Type.Integer({ description: 'ms since the epoch' }),
  state: Type.Union([Type.Literal('alive'), Type.Literal('silent'), Type.Literal('dead'), Type.Literal('gone')], {
    description:
      '`alive`: its heartbeat is fresh; `silent`: marked alive but its heartbeat is older than NODE_DEAD_AFTER_MS ' +
      '(the next heartbeat of any node declares it dead); `dead`: declared dead, its leases freed; `gone`: stopped ' +
      'cleanly, its leases released',
  }),
  endedAt: Type.Union([Type.Integer(), Type.Null()], { description: 'when it was declared dead or stopped' }),
  leases: Type.Record(Type.String(), Type.Integer(), {
    description:
      'leases held now, by kind: rail_hand_over, callback_delivery, daraja_reconcile, chain_watch, chain_send (kinds it holds none of are left out)',
  }),
});

/** Operator routes: the nodes sharing this database and the leases each holds. */
export function registerNodeAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { nodes: NodeLiveness; store: Pick<Store, 'read'>; clock: Clock },
): void {
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/nodes',
    tag: 'Admin: nodes',
    summary: 'The nodes on this database: heartbeat, state and the leases each holds',
    description:
      'Every Cashgate process (serve or worker) on this database, alive ones first, then those that ended in the last seven days. ' +
      'A node whose heartbeat is older than NODE_DEAD_AFTER_MS is declared dead by the next heartbeat of any other ' +
      'node, and every lease it held is freed at once.',
    response: Type.Object({
      nodeId: Type.String({ description: 'the node that answered' }),
      deadAfterMs: Type.Integer(),
      nodes: Type.Array(NodeView),
    }),
    handle: async () => {
      const now = deps.clock.now();
      const [rows, held] = await Promise.all([q.listNodes(deps.store.read, LISTED), deps.nodes.held()]);
      return {
        nodeId: deps.nodes.id,
        deadAfterMs: deps.nodes.deadAfterMs,
        nodes: rows.map((row) => ({
          id: row.id,
          host: row.host,
          pid: row.pid,
          role: row.role,
          version: row.version,
          startedAt: row.started_at,
          lastHeartbeatAt: row.heartbeat_at,
          state:
            row.state === 'alive' && now - row.heartbeat_at > deps.nodes.deadAfterMs
              ? ('silent' as const)
              : (row.state as 'alive' | 'dead' | 'gone'),
          endedAt: row.ended_at === null ? null : row.ended_at,
          leases: held.get(row.id) ?? {},
        })),
      };
    },
  });
}
