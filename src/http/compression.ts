/**
 * Response compression: a text answer (HTML, CSS, JavaScript, JSON, SVG, plain text, CSV) of at
 * least MIN_BYTES is sent Brotli- or gzip-compressed when the request's Accept-Encoding allows it
 * (Brotli preferred, as browsers send both), with `Vary: Accept-Encoding` so caches keep both forms.
 * Streams, answers already encoded and small answers go as they are. Quality is chosen for
 * speed at serving time (Brotli 5, gzip 6), not for the smallest size.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Below this, compression saves too little to be worth the work (a merchant API answer is usually smaller). */
export const MIN_BYTES = 1024;

const COMPRESSIBLE = /^(?:text\/|application\/(?:json|javascript|xml|problem\+json)|image\/svg\+xml)/i;
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** The encoding the client accepts that Cashgate prefers (q=0 refuses one), if any. */
export function negotiateEncoding(header: string | undefined): 'br' | 'gzip' | undefined {
  if (header === undefined) return undefined;
  const accepted = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const weight = (name: string) => accepted.get(name) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return undefined;
}

function addVary(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const current =
    vary === undefined
      ? []
      : String(vary)
          .split(',')
          .map((v) => v.trim());
  if (!current.some((v) => v.toLowerCase() === 'accept-encoding' || v === '*'))
    void reply.header('vary', [...current.filter((v) => v !== ''), 'Accept-Encoding'].join(', '));
}

/** The payload to send: compressed, with its headers set, when the answer and the request allow it. */
export async function compressed(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (request.method === 'HEAD' || reply.getHeader('content-encoding') !== undefined) return payload;
  if (!COMPRESSIBLE.test(String(reply.getHeader('content-type') ?? ''))) return payload;
  const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
  if (body === undefined || body.length < MIN_BYTES) return payload;
  addVary(reply);
  const encoding = negotiateEncoding(request.headers['accept-encoding']);
  if (encoding === undefined) return payload;
  const out =
    encoding === 'br'
      ? await brotli(body, {
          params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
        })
      : await gzipped(body, { level: 6 });
  void reply.header('content-encoding', encoding);
  void reply.removeHeader('content-length');
  return out;
}
