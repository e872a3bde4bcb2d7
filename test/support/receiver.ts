import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the request arrived. */
  at: number;
}

/** The four signature headers of a received callback, as `verifyCallback` takes them. */
export function callbackHeaders(got: ReceivedCallback): {
  access_key: string;
  timestamp: string;
  nonce: string;
  sign: string;
} {
  return {
    access_key: String(got.headers.access_key),
    timestamp: String(got.headers.timestamp),
    nonce: String(got.headers.nonce),
    sign: String(got.headers.sign),
  };
}

/** What the receiver answers: a status (and body), or nothing at all (the request hangs). */
export type Answer = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

/** A merchant's callback endpoint on a free local port, recording every request. */
export interface CallbackReceiver {
  url: string;
  received: ReceivedCallback[];
  /** Decides the answer for each request (default: 200 {"code":"200","success":true}). */
  answer: (request: ReceivedCallback, index: number) => Answer;
  /** Resolves when `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedCallback[]>;
  close(): Promise<void>;
}

export async function startReceiver(answer?: CallbackReceiver['answer']): Promise<CallbackReceiver> {
  const hanging = new Set<ServerResponse>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: CallbackReceiver = {
    url: '',
    received: [],
    answer: answer ?? (() => ({ status: 200, body: '{"code":"200","success":true}' })),
    waitFor(count, timeoutMs = 15_000) {
      if (receiver.received.length >= count) return Promise.resolve(receiver.received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${receiver.received.length} of ${count} callbacks in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(receiver.received);
          },
        });
      });
    },
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: ReceivedCallback = {
        path: request.url ?? '/',
        method: request.method ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = receiver.received.push(entry) - 1;
      for (const waiter of [...waiters]) {
        if (receiver.received.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      const reply = receiver.answer(entry, index);
      if (reply === 'hang') {
        hanging.add(response);
        return;
      }
      const send = () => {
        response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        response.end(reply.body ?? '');
      };
      if (reply.delayMs === undefined) send();
      else setTimeout(send, reply.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value other than undefined (or throws after `timeoutMs`). */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Receivers a suite starts as it goes, all closed together at its end. */
export function receiverPool(): {
  start: (answer?: CallbackReceiver['answer']) => Promise<CallbackReceiver>;
  closeAll: () => Promise<void>;
} {
  const started: CallbackReceiver[] = [];
  return {
    start: async (answer) => {
      const receiver = await startReceiver(answer);
      started.push(receiver);
      return receiver;
    },
    closeAll: async () => {
      await Promise.all(started.map((r) => r.close()));
    },
  };
}

/**
 * Retries `check` until it stops throwing (or rethrows its last failure after `timeoutMs`).
 *
 * Give every `assert.ok` in `check` a message: without one, each failure makes Node's assert read
 * and parse the test's source to describe the expression, which under the TypeScript loader can
 * take the test process's event loop for minutes (a polling check fails many times).
 */
export async function until(check: () => unknown, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await sleep(50);
  }
}
