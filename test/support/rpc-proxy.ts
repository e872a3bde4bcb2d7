import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC relay in front of a node, for tests that need a call to vanish at a chosen moment:
 * `hold(method, { forward })` catches the next call of `method` and never answers it, after
 * passing it on to the node (`forward: true`: the node acts on it, the caller never learns) or not
 * (`forward: false`: it never reached the node). Everything else is relayed as it is.
 */
export interface RpcProxy {
  url: string;
  /** Resolves once the next call of `method` was caught (and, with `forward`, acted on by the node). */
  hold(method: string, options: { forward: boolean }): Promise<void>;
  /** Every call relayed or caught, in order of arrival. */
  calls: { method: string; params: unknown[]; at: number }[];
  close(): Promise<void>;
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const holds = new Map<string, { forward: boolean; caught: () => void }>();
  const held = new Set<ServerResponse>();
  const calls: RpcProxy['calls'] = [];
  const relay = async (body: string): Promise<{ status: number; text: string }> => {
    const response = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: response.status, text: await response.text() };
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let method = '';
      try {
        const call = JSON.parse(body) as { method?: unknown; params?: unknown };
        method = String(call.method);
        calls.push({ method, params: Array.isArray(call.params) ? call.params : [], at: Date.now() });
      } catch {
        // relayed as it is: the node answers what it makes of it
      }
      const hold = holds.get(method);
      if (hold !== undefined) {
        holds.delete(method);
        held.add(response);
        if (!hold.forward) return hold.caught();
        void relay(body).then(hold.caught, hold.caught);
        return;
      }
      relay(body).then(
        ({ status, text }) => response.writeHead(status, { 'content-type': 'application/json' }).end(text),
        () => response.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    hold: (method, options) => new Promise((caught) => holds.set(method, { forward: options.forward, caught })),
    close: async () => {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
