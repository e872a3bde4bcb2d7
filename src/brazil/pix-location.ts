import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import {
  calculateJwkThumbprint,
  CompactSign,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  importPKCS8,
  type CryptoKey,
  type JWK,
} from 'jose';
import type { Clock } from '../clock.js';
import { formatMoney, fromDb } from '../money.js';
import { brazilDetails, payerDocument } from './details.js';
import type { OrderRow } from '../orders/queries.js';
import type { OrderService } from '../orders/service.js';
import { COLLECTION_STATUS } from '../orders/state-machine.js';

const KEY_FILE = 'pix-jws-key.pem';
const ALG = 'RS256';

/** A new location id: short enough that any sane PUBLIC_BASE_URL keeps the location within 77 characters. */
export function newLocationId(): string {
  return randomBytes(12).toString('hex');
}

/** The location as tag 26.25 of a dynamic BR Code carries it: no scheme. */
export function locationUrl(publicBaseUrl: string, locationId: string): string {
  return `${publicBaseUrl.replace(/^https?:\/\//, '')}/pix/v2/${locationId}`;
}

interface SigningKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * Signs the API Pix payload that a payer's bank fetches from a dynamic BR Code's location. The key
 * comes from PIX_JWS_PRIVATE_KEY, else a file in the data directory, generated on first use (0600).
 */
export class PixLocationSigner {
  #key: Promise<SigningKey> | undefined;

  constructor(
    private readonly options: { privateKeyPem: string | undefined; dataDir: string; publicBaseUrl: string },
  ) {}

  #load(): Promise<SigningKey> {
    this.#key ??= this.#read().catch((error: unknown) => {
      this.#key = undefined; // the next request tries again
      throw error;
    });
    return this.#key;
  }

  async #read(): Promise<SigningKey> {
    {
      const file = join(this.options.dataDir, KEY_FILE);
      let pem = this.options.privateKeyPem ?? (existsSync(file) ? readFileSync(file, 'utf8') : undefined);
      if (pem === undefined) {
        const generated = await generateKeyPair(ALG, { modulusLength: 2048, extractable: true });
        pem = await exportPKCS8(generated.privateKey);
        try {
          writeFileSync(file, pem, { mode: 0o600, flag: 'wx' });
        } catch (error) {
          // Another process on this data directory wrote it first: use that one.
          if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
          pem = readFileSync(file, 'utf8');
        }
      }
      const privateKey = await importPKCS8(pem, ALG, { extractable: true });
      // The public half of an RSA key is its modulus and exponent.
      const { kty, n, e } = await exportJWK(privateKey);
      const publicJwk: JWK = { kty, n, e };
      const kid = await calculateJwkThumbprint(publicJwk);
      return { privateKey, publicJwk: { ...publicJwk, kid, alg: ALG, use: 'sig' } };
    }
  }

  async sign(payload: Record<string, unknown>): Promise<string> {
    const { privateKey, publicJwk } = await this.#load();
    return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({
        alg: ALG,
        kid: publicJwk.kid ?? '',
        jku: `${this.options.publicBaseUrl}/pix/jwks.json`,
        typ: 'JWT',
      })
      .sign(privateKey);
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: [(await this.#load()).publicJwk] };
  }
}

const STATUS: Record<number, string> = {
  [COLLECTION_STATUS.pending]: 'ATIVA',
  [COLLECTION_STATUS.paid]: 'CONCLUIDA',
  [COLLECTION_STATUS.expired]: 'REMOVIDA_PELO_PSP',
  // The payer cancelled: the charge is withdrawn as the receiving user's (the merchant's) own.
  [COLLECTION_STATUS.cancelled]: 'REMOVIDA_PELO_USUARIO_RECEBEDOR',
};

/** The API Pix `cob` of a PIX_DYNAMIC collection, as its location answers it. */
export function cobPayload(order: OrderRow, pixKey: string, now: number): Record<string, unknown> {
  const details = brazilDetails(order);
  const payer = payerDocument(details);
  const devedor =
    payer === undefined
      ? undefined
      : { [payer.type === 'CNPJ' ? 'cnpj' : 'cpf']: payer.number, nome: details.userInfoName ?? '' };
  return {
    calendario: {
      criacao: new Date(order.created_at).toISOString(),
      apresentacao: new Date(now).toISOString(),
      expiracao: Math.max(0, Math.round(((order.cashier_expire_at ?? order.created_at) - order.created_at) / 1000)),
    },
    txid: order.id,
    revisao: 0,
    status: STATUS[order.status] ?? 'ATIVA',
    ...(devedor !== undefined && { devedor }),
    valor: { original: formatMoney(fromDb(order.amount), order.currency) },
    chave: pixKey,
    ...(order.remark !== null && { solicitacaoPagador: order.remark.slice(0, 140) }),
  };
}

/** GET /pix/v2/{id} (the JWS a payer's bank reads) and GET /pix/jwks.json (the keys to check it). */
export function registerPixLocationRoutes(
  app: FastifyInstance,
  deps: { orders: OrderService; signer: PixLocationSigner; pixKey: string; clock: Clock },
): void {
  app.get<{ Params: { locationId: string } }>('/pix/v2/:locationId', async (request, reply) => {
    const order = await deps.orders.findByRailRef(`loc:${request.params.locationId}`);
    if (order === undefined)
      return reply.code(404).type('application/problem+json').send({ title: 'Cobrança não encontrada', status: 404 });
    const jws = await deps.signer.sign(cobPayload(order, deps.pixKey, deps.clock.now()));
    return reply.header('cache-control', 'no-store').type('application/jose').send(jws);
  });
  app.get('/pix/jwks.json', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').send(await deps.signer.jwks()),
  );
}
