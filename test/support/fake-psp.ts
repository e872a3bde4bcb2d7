/**
 * A local fake of a Brazilian Pix PSP for Cashgate's tests: the Banco Central's API Pix (bacen/pix-api openapi v2.x)
 * over mutual TLS — OAuth2 client credentials, immediate charges (cob) with dynamic BR Codes and JWS payload
 * locations, received Pix, refunds (devolução) and webhooks — plus Efí's Pix-send extension (PUT /v3/gn/pix/{idEnvio},
 * GET /v2/gn/pix/enviados/id-envio/{idEnvio} and the send webhook). Errors are the standard's RFC 7807 problems, and
 * Efí's {nome, mensagem} bodies on the send request. Tests play the payer (`pay`), script how sends and refunds end,
 * inject faults, and read back every request and every webhook delivery.
 */
import { readFileSync } from 'node:fs';
import { generateKeyPairSync, randomInt, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Agent, request as undiciRequest } from 'undici';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/psp/${name}`, import.meta.url));

export const PSP_TEST = {
  clientId: 'cashgate-test-client',
  clientSecret: 'cashgate-test-secret',
  /** The random key (EVP) the PSP account owns: cobs must name it, sends pay from it. */
  pixKey: 'a4ea94bf-6fcb-4bcc-ba11-89510db84d8f',
  /** The fake PSP's ISPB (in no bank list), the participant in the end-to-end and return ids it makes. */
  ispb: '99999004',
  /** The receiver's name and city written in the BR Codes (tags 59 and 60). */
  receiverName: 'CASHGATE TESTE',
  receiverCity: 'SAO PAULO',
  /** The test CA: it signs the PSP's server certificate and Cashgate's client certificate. */
  caPath: fixture('ca.pem'),
  /** Cashgate's client certificate and key for the mutual TLS. */
  certPath: fixture('client.pem'),
  keyPath: fixture('client-key.pem'),
  /** A self-signed client certificate (not from the CA) the PSP refuses at the handshake. */
  rogueCertPath: fixture('rogue-client.pem'),
  rogueKeyPath: fixture('rogue-client-key.pem'),
  /** The PSP's server certificate, which it also presents as a client when it posts webhooks to https URLs. */
  serverCertPath: fixture('server.pem'),
  serverKeyPath: fixture('server-key.pem'),
} as const;

export type PspEndpoint =
  | 'oauth'
  | 'cob-put'
  | 'cob-get'
  | 'cob-patch'
  | 'cob-list'
  | 'pix-get'
  | 'pix-list'
  | 'devolucao-put'
  | 'devolucao-get'
  | 'webhook-put'
  | 'webhook-get'
  | 'webhook-delete'
  | 'send-put'
  | 'send-get';

export type PspFault =
  /** 500 problem (Efí's erro_aplicacao on send-put), nothing done */
  | 'server-error'
  /** 503 problem, nothing done */
  | 'unavailable'
  /** 401 as if the token had been revoked, nothing done */
  | 'invalid-token'
  /** the operation is performed, but the answer is never sent (the socket is held until close()) */
  | 'timeout-after'
  /** nothing is performed and the answer is never sent */
  | 'timeout-before'
  /** nothing is performed; the socket is destroyed */
  | 'reset';

export type WebhookMode = 'send' | 'skip' | 'twice';

export interface RecordedRequest {
  endpoint: PspEndpoint;
  method: string;
  /** path and query string */
  path: string;
  /** parsed JSON (or form fields for oauth), or the raw text when it is neither */
  body: any;
  /** HTTP status answered; 0 when the answer was held or the connection reset */
  status: number;
  at: number;
}

export interface WebhookDelivery {
  url: string;
  body: any;
  /** HTTP status answered; 0 when the POST failed or got no answer */
  status: number;
  at: number;
}

export interface PayOptions {
  /** amount paid, default the cob's valor.original */
  valor?: string;
  /** the payer; `codigoBanco` (ISPB of the payer's PSP, default PSP_TEST.ispb) also starts the end-to-end id */
  payer?: { cpf?: string; cnpj?: string; nome: string; codigoBanco?: string };
  infoPagador?: string;
  /** 'send' (default) once, 'skip' none, 'twice' the same body twice */
  webhook?: WebhookMode;
  /** pays a cob that is not ATIVA or has expired */
  force?: boolean;
  /** the webhook goes out this long after the payment (default 0) */
  delayMs?: number;
}

export interface SendScript {
  status: 'REALIZADO' | 'NAO_REALIZADO';
  /** NAO_REALIZADO: gnExtras.erro.motivo of the webhook (default Efí's AC03 example) */
  motivo?: string;
  /** NAO_REALIZADO: gnExtras.erro.codigo (default AC03) */
  codigo?: string;
  delayMs?: number;
  webhook?: WebhookMode;
}

export interface RefundScript {
  status: 'DEVOLVIDO' | 'NAO_REALIZADO';
  /** NAO_REALIZADO: the refund's motivo */
  motivo?: string;
  delayMs?: number;
  webhook?: WebhookMode;
}

export interface FakePsp {
  /** https://127.0.0.1:PORT (mutual TLS): `${url}/oauth/token`, `${url}/v2/…`, `${url}/v3/gn/pix/{idEnvio}` */
  url: string;
  /** `${url}/v2` */
  baseUrl: string;
  /** host:port of the location server (TLS, no client certificate), which the BR Codes point at */
  locationHost: string;
  /** every API request received, in order */
  readonly requests: RecordedRequest[];
  /** every webhook POST attempt, in order (retries and redeliveries included) */
  readonly webhookDeliveries: WebhookDelivery[];
  /** cobs by txid, as GET /v2/cob/{txid} shows them */
  readonly cobs: Map<string, any>;
  /** received Pix by endToEndId, as GET /v2/pix/{e2eid} shows them */
  readonly received: Map<string, any>;
  /**
   * sends by idEnvio: the request as received ({valor, pagador, favorecido}) with idEnvio, endToEndId, status,
   * horario and, once NAO_REALIZADO, erro; GET /v2/gn/pix/enviados/id-envio/{idEnvio} shows them in Efí's shape
   */
  readonly sent: Map<string, any>;
  /** webhook URL by Pix key */
  readonly webhooks: Map<string, string>;
  /** the next `times` requests to `endpoint` fail this way */
  failNext(endpoint: PspEndpoint, fault: PspFault, times?: number): void;
  /** the next `times` requests to `endpoint` wait `ms` before they are processed and answered */
  delayNext(endpoint: PspEndpoint, ms: number, times?: number): void;
  /** invalidates every token issued so far */
  expireTokens(): void;
  /**
   * A payer pays the cob `txid` (status must be ATIVA and the cob unexpired unless `force`): records a received Pix
   * (end-to-end id `E` + ISPB + yyyyMMddHHmm + 11 alphanumerics), marks the cob CONCLUIDA (when it was ATIVA) and
   * appends the Pix to cob.pix. Resolves with the Pix once it is recorded; its webhook follows (await idle()).
   */
  pay(txid: string, options?: PayOptions): Promise<any>;
  /**
   * A payer sends a Pix of `valor` ("12.34") to the key directly, naming no charge: a received Pix without txid, and
   * its webhook (await idle()). Resolves with the Pix.
   */
  payKey(chave: string, valor: string, options?: Omit<PayOptions, 'valor' | 'force'>): Promise<any>;
  /** How sends to this favorecido chave ('account' for contaBanco) end: default REALIZADO after 50 ms, one webhook. */
  scriptSend(target: string, script: SendScript): void;
  /** How refunds of this Pix end: default DEVOLVIDO after 50 ms, one webhook. */
  scriptRefund(e2eid: string, script: RefundScript): void;
  /** Posts an earlier webhook body again to the same URL (duplicates, reordering); answers its HTTP status (0: none). */
  redeliver(index: number): Promise<number>;
  /** resolves when no scripted outcome or webhook is pending */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakePsp(options: { now?: () => number; webhookRetryMs?: number } = {}): Promise<FakePsp> {
  const fake = new FakePspServer(options.now ?? Date.now, options.webhookRetryMs ?? DEFAULT_WEBHOOK_RETRY_MS);
  await fake.listen();
  return fake;
}

// ---------------------------------------------------------------------------------------------------------------
// The standard's and Efí's texts

const TOKEN_TTL_SECONDS = 3600;
const SCOPES = 'cob.write cob.read pix.write pix.read webhook.write webhook.read pix.send gn.pix.send.read';
const DEFAULT_EXPIRACAO = 86400;
const DEFAULT_WEBHOOK_RETRY_MS = 200;
const WEBHOOK_RETRIES = 3;
const WEBHOOK_TIMEOUT_MS = 10_000;
const DEFAULT_SEND_SCRIPT: SendScript = { status: 'REALIZADO', delayMs: 50 };
const DEFAULT_REFUND_SCRIPT: RefundScript = { status: 'DEVOLVIDO', delayMs: 50 };
/** Efí's example of a send the receiving PSP refused (webhook gnExtras.erro). */
const DEFAULT_SEND_ERROR = {
  codigo: 'AC03',
  origem: 'PSP do usuário recebedor',
  motivo: 'Número da agência e/ou conta transacional do usuário recebedor inexistente ou inválido',
};
/** Efí's example motivo of a refused refund. */
const DEFAULT_REFUND_MOTIVO = 'Saldo insuficiente para realizar a devolução.';
/** Who the DICT says owns a favorecido chave (Efí's example; the fake resolves every key to it). */
const KEY_OWNER = { nome: 'Francisco da Silva', cpf: '***.456.789-**' };
/** How Efí's GET of a send names the account types it was given (only cacc→corrente is in Efí's examples). */
const ACCOUNT_TYPE_NAMES: Record<string, string> = {
  cacc: 'corrente',
  svgs: 'poupanca',
  slry: 'salario',
  tran: 'pagamento',
};

interface Violacao {
  razao: string;
  propriedade: string;
  valor?: string;
}

/** An RFC 7807 problem of the API Pix, answered as application/problem+json. */
class Problem extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    readonly title: string,
    readonly detail: string,
    readonly violacoes?: Violacao[],
  ) {
    super(detail);
  }
}

/** An Efí error of the send request, answered as {"nome","mensagem"}. */
class EfiError extends Error {
  constructor(
    readonly status: number,
    readonly nome: string,
    readonly mensagem: string,
  ) {
    super(mensagem);
  }
}

/** An OAuth2 token error (RFC 6749 §5.2). */
class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
  ) {
    super(error);
  }
}

const cobInvalida = (violacoes: Violacao[]) =>
  new Problem(
    400,
    'CobOperacaoInvalida',
    'Cobrança inválida.',
    'A requisição que busca alterar ou criar uma cobrança para pagamento imediato não respeita o _schema_ ou está semanticamente errada.',
    violacoes,
  );
const cobNaoAtiva = () =>
  new Problem(
    400,
    'CobOperacaoInvalida',
    'Operação inválida.',
    'Cobrança não encontra-se mais com o status ATIVA, somente cobranças ativas podem ser revisadas.',
  );
const cobNaoEncontrado = () =>
  new Problem(404, 'CobNaoEncontrado', 'Cobrança não encontrada.', 'Cobrança não encontrada para o txid informado.');
const consultaInvalida = (kind: string, violacoes: Violacao[]) =>
  new Problem(
    400,
    kind,
    'Consulta inválida.',
    'Os parâmetros de consulta não respeitam o _schema_ ou não fazem sentido semanticamente.',
    violacoes,
  );
const pixNaoEncontrado = () =>
  new Problem(404, 'PixNaoEncontrado', 'Pix não encontrado.', 'Pix não encontrado para o e2eid informado.');
const devolucaoInvalida = (violacoes: Violacao[]) =>
  new Problem(
    400,
    'PixDevolucaoInvalida',
    'Devolução inválida.',
    'A presente requisição de devolução não respeita o _schema_ ou não faz sentido semanticamente.',
    violacoes,
  );
const devolucaoNaoEncontrada = () =>
  new Problem(
    404,
    'PixDevolucaoNaoEncontrada',
    'Devolução não encontrada.',
    'Devolução não encontrada para o e2eid informado.',
  );
const webhookInvalido = (violacoes: Violacao[]) =>
  new Problem(
    400,
    'WebhookOperacaoInvalida',
    'Webhook inválido.',
    'A presente requisição busca criar um webhook sem respeitar o _schema_ ou, ainda, com sentido semanticamente inválido.',
    violacoes,
  );
const webhookNaoEncontrado = () =>
  new Problem(404, 'WebhookNaoEncontrado', 'Webhook não encontrado.', 'O webhook para a chave informada não existe.');
const pixEnviadoNaoEncontrado = () =>
  new Problem(404, 'PixEnviadoNaoEncontrado', 'Não Encontrado', 'Pix enviado não encontrado para o idEnvio informado.');
const acessoNegado = () =>
  new Problem(401, 'AcessoNegado', 'Acesso Negado', 'Token de acesso ausente, inválido ou expirado.');
const naoEncontrado = () => new Problem(404, 'NaoEncontrado', 'Não Encontrado', 'Entidade não encontrada.');
const requisicaoInvalida = (detail: string) => new Problem(400, 'RequisicaoInvalida', 'Requisição inválida.', detail);
const erroInterno = () =>
  new Problem(500, 'ErroInternoDoServidor', 'Erro Interno do Servidor', 'Condição inesperada ao processar requisição.');
const servicoIndisponivel = () =>
  new Problem(
    503,
    'ServicoIndisponivel',
    'Serviço Indisponível',
    'Serviço não está disponível no momento. Serviço solicitado pode estar em manutenção ou fora da janela de funcionamento.',
  );
const cobPayloadNaoEncontrado = (status: 404 | 410) =>
  new Problem(
    status,
    'CobPayloadNaoEncontrado',
    'Cobrança não encontrada.',
    'A cobrança em questão não foi encontrada para a location requisitada.',
  );

const efiValorInvalido = (mensagem: string) => new EfiError(400, 'valor_invalido', mensagem);
const efiChaveInvalida = () =>
  new EfiError(400, 'chave_invalida', 'A chave informada não faz referência à conta Efí autenticada');
/** Not in Efí's documentation, which only says the payer's key must have a webhook: the fake's own name. */
const efiSemWebhook = () =>
  new EfiError(400, 'chave_sem_webhook', 'A chave do pagador não possui um webhook associado');
const efiIdEnvioDuplicado = () =>
  new EfiError(409, 'id_envio_duplicado', 'O id de envio informado já foi utilizado em outro pagamento');
const efiErroAplicacao = () => new EfiError(500, 'erro_aplicacao', 'Ocorreu um erro ao validar a chave');
/** Not in Efí's documentation either: the fake's 503 in Efí's shape. */
const efiIndisponivel = () => new EfiError(503, 'servico_indisponivel', 'Serviço indisponível no momento');

// ---------------------------------------------------------------------------------------------------------------
// Time and identifiers

const iso = (ms: number) => new Date(ms).toISOString();

/** yyyyMMddHHmm in UTC, as in end-to-end and return ids. */
function idStamp(ms: number): string {
  return iso(ms).slice(0, 16).replace(/[-T:]/g, '');
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomText(alphabet: string, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += alphabet.charAt(randomInt(alphabet.length));
  return text;
}

/** E (payment) or D (return) + ISPB + yyyyMMddHHmm + 11 alphanumerics: 32 characters. */
const transactionId = (prefix: 'E' | 'D', ispb: string, ms: number) =>
  `${prefix}${ispb}${idStamp(ms)}${randomText(ALNUM, 11)}`;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const TXID = /^[a-zA-Z0-9]{26,35}$/;
const SHORT_ID = /^[a-zA-Z0-9]{1,35}$/;
const E2E_ID = /^[a-zA-Z0-9]{32}$/;
const MONEY = /^\d{1,10}\.\d{2}$/;
const CPF = /^\d{11}$/;
const CNPJ = /^[0-9A-Z]{14}$/;
const ISPB = /^\d{8}$/;

const cents = (money: string) => Number(money.replace('.', ''));

// ---------------------------------------------------------------------------------------------------------------
// BR Code (EMV MPM) and the JWS of the payload location

function tlv(id: string, value: string): string {
  const length = Buffer.byteLength(value, 'utf8');
  if (length > 99) throw new Error(`BR Code field ${id} would be ${length} bytes long`);
  return `${id}${String(length).padStart(2, '0')}${value}`;
}

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), four upper-case hex digits. */
function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** The dynamic BR Code of a cob: its location (no scheme) in 26.25, the amount in 54, *** as 62.05. */
function dynamicBrCode(location: string, amount: string): string {
  const payload =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('26', tlv('00', 'br.gov.bcb.pix') + tlv('25', location)) +
    tlv('52', '0000') +
    tlv('53', '986') +
    tlv('54', amount) +
    tlv('58', 'BR') +
    tlv('59', PSP_TEST.receiverName) +
    tlv('60', PSP_TEST.receiverCity) +
    tlv('62', tlv('05', '***')) +
    '6304';
  return payload + crc16(payload);
}

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** A compact JWS signed RS256 (RSASSA-PKCS1-v1_5 with SHA-256). */
function compactJws(header: object, payload: object, key: KeyObject): string {
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The records, in the shapes the API answers

type CobStatus = 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';

interface Devedor {
  cpf?: string;
  cnpj?: string;
  nome: string;
}

interface InfoAdicional {
  nome: string;
  valor: string;
}

interface Cob {
  calendario: { criacao: string; expiracao: number };
  txid: string;
  revisao: number;
  loc: { id: number; location: string; tipoCob: 'cob'; criacao: string };
  location: string;
  status: CobStatus;
  devedor?: Devedor;
  valor: { original: string; modalidadeAlteracao?: number };
  chave: string;
  solicitacaoPagador?: string;
  infoAdicionais?: InfoAdicional[];
  pixCopiaECola: string;
  pix?: Pix[];
}

interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  natureza: 'ORIGINAL';
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
  motivo?: string;
}

interface Pix {
  endToEndId: string;
  /** absent for a Pix paid to the key directly (no charge) */
  txid?: string;
  valor: string;
  chave: string;
  horario: string;
  infoPagador?: string;
  gnExtras?: { pagador: { nome: string; cpf?: string; cnpj?: string; codigoBanco: string } };
  devolucoes?: Devolucao[];
}

interface ContaBanco {
  nome: string;
  cpf?: string;
  cnpj?: string;
  codigoBanco: string;
  agencia: string;
  conta: string;
  tipoConta: string;
}

/** A send as the fake keeps it (the `sent` map): the request as received, and its state. */
interface Sent {
  idEnvio: string;
  endToEndId: string;
  valor: string;
  pagador: { chave: string; infoPagador?: string };
  favorecido: { chave: string; cpf?: string; cnpj?: string } | { contaBanco: ContaBanco };
  status: 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';
  horario: { solicitacao: string; liquidacao?: string };
  /** NAO_REALIZADO: the reason sent in the webhook's gnExtras.erro */
  erro?: { codigo: string; origem: string; motivo: string };
}

// ---------------------------------------------------------------------------------------------------------------
// Request bodies

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const shown = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : undefined);

/** Collects the violacoes of one request. */
class Violations {
  readonly list: Violacao[] = [];

  add(propriedade: string, razao: string, value?: unknown): void {
    const valor = shown(value);
    this.list.push(valor === undefined ? { razao, propriedade } : { razao, propriedade, valor });
  }

  /** A string of at most `max` characters, or undefined (with a violacao unless it was absent and optional). */
  text(body: Body, field: string, propriedade: string, max: number, required = false): string | undefined {
    const value = body[field];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || value.length > max || (required && value === '')) {
      this.add(propriedade, `O campo ${propriedade} não respeita o _schema_.`, value);
      return undefined;
    }
    return value;
  }
}

interface CobFields {
  expiracao?: number;
  valor?: { original: string; modalidadeAlteracao?: number };
  chave?: string;
  devedor?: Devedor;
  solicitacaoPagador?: string;
  infoAdicionais?: InfoAdicional[];
  status?: string;
}

/** The fields of a CobSolicitada ('create', PUT) or CobRevisada ('revise', PATCH), with every violacao. */
function readCob(body: unknown, mode: 'create' | 'revise', v: Violations): CobFields {
  if (!isObject(body)) {
    v.add('cob', 'O objeto cob não respeita o _schema_.');
    return {};
  }
  const fields: CobFields = {};
  if (body.calendario !== undefined || mode === 'create') {
    const calendario = body.calendario ?? {};
    const expiracao = isObject(calendario) ? calendario.expiracao : undefined;
    if (!isObject(calendario)) v.add('cob.calendario', 'O objeto cob.calendario não respeita o _schema_.');
    else if (expiracao === undefined) fields.expiracao = mode === 'create' ? DEFAULT_EXPIRACAO : undefined;
    else if (typeof expiracao === 'number' && Number.isSafeInteger(expiracao) && expiracao > 0) {
      fields.expiracao = expiracao;
    } else v.add('cob.calendario.expiracao', 'O campo cob.calendario.expiracao é igual ou menor que zero.', expiracao);
  }
  if (body.valor !== undefined || mode === 'create') readValor(body.valor, fields, v);
  if (body.chave !== undefined || mode === 'create') {
    const chave = v.text(body, 'chave', 'cob.chave', 77, true);
    if (chave !== undefined && chave !== PSP_TEST.pixKey) {
      v.add('cob.chave', 'O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.', chave);
    } else fields.chave = chave;
  }
  if (body.devedor !== undefined) fields.devedor = readDevedor(body.devedor, v);
  fields.solicitacaoPagador = v.text(body, 'solicitacaoPagador', 'cob.solicitacaoPagador', 140);
  if (body.infoAdicionais !== undefined) fields.infoAdicionais = readInfoAdicionais(body.infoAdicionais, v);
  if (isObject(body.loc) && body.loc.id !== undefined) {
    v.add('cob.loc.id', 'O location referenciado por cob.loc.id inexiste.', body.loc.id);
  }
  if (mode === 'revise' && body.status !== undefined) {
    if (body.status !== 'REMOVIDA_PELO_USUARIO_RECEBEDOR') {
      v.add('cob.status', 'O campo cob.status não respeita o _schema_.', body.status);
    } else if (Object.keys(body).some((key) => key !== 'status')) {
      v.add('cob.status', 'A remoção da cobrança não pode vir acompanhada de outras alterações.', body.status);
    } else fields.status = body.status;
  }
  return fields;
}

function readValor(valor: unknown, fields: CobFields, v: Violations): void {
  const original = isObject(valor) ? valor.original : undefined;
  if (typeof original !== 'string' || !MONEY.test(original)) {
    v.add('cob.valor.original', 'O campo cob.valor.original não respeita o _schema_.', original);
    return;
  }
  if (cents(original) === 0) {
    v.add('cob.valor.original', 'O campo cob.valor.original é zero.', original);
    return;
  }
  const modalidade = isObject(valor) ? valor.modalidadeAlteracao : undefined;
  if (modalidade !== undefined && modalidade !== 0 && modalidade !== 1) {
    v.add(
      'cob.valor.modalidadeAlteracao',
      'O campo cob.valor.modalidadeAlteracao não respeita o _schema_.',
      modalidade,
    );
    return;
  }
  fields.valor = modalidade === undefined ? { original } : { original, modalidadeAlteracao: modalidade };
}

function readDevedor(devedor: unknown, v: Violations): Devedor | undefined {
  const invalid = (razao = 'O objeto cob.devedor não respeita o _schema_.') => {
    v.add('cob.devedor', razao);
    return undefined;
  };
  if (!isObject(devedor)) return invalid();
  const { cpf, cnpj, nome } = devedor;
  if (cpf !== undefined && cnpj !== undefined) {
    return invalid('Os campos cob.devedor.cpf e cob.devedor.cnpj não podem estar preenchidos ao mesmo tempo.');
  }
  if (cpf === undefined && cnpj === undefined) {
    return invalid('O campo cob.devedor.nome exige um cob.devedor.cpf ou um cob.devedor.cnpj.');
  }
  if (typeof nome !== 'string' || nome === '' || nome.length > 200) {
    v.add('cob.devedor.nome', 'O campo cob.devedor.nome não respeita o _schema_.', nome);
    return undefined;
  }
  if (cpf !== undefined) {
    if (typeof cpf === 'string' && CPF.test(cpf)) return { cpf, nome };
    v.add('cob.devedor.cpf', 'O campo cob.devedor.cpf não respeita o _schema_.', cpf);
    return undefined;
  }
  if (typeof cnpj === 'string' && CNPJ.test(cnpj)) return { cnpj, nome };
  v.add('cob.devedor.cnpj', 'O campo cob.devedor.cnpj não respeita o _schema_.', cnpj);
  return undefined;
}

function readInfoAdicionais(list: unknown, v: Violations): InfoAdicional[] | undefined {
  const fits = (item: unknown): item is InfoAdicional =>
    isObject(item) &&
    typeof item.nome === 'string' &&
    item.nome.length <= 50 &&
    typeof item.valor === 'string' &&
    item.valor.length <= 200;
  if (!Array.isArray(list) || list.length > 50 || !list.every(fits)) {
    v.add('cob.infoAdicionais', 'O objeto cob.infoAdicionais não respeita o _schema_.');
    return undefined;
  }
  return list.map((item) => ({ nome: item.nome, valor: item.valor }));
}

interface DevolucaoRequest {
  valor: string;
  descricao?: string;
}

function readDevolucao(body: unknown, v: Violations): DevolucaoRequest | undefined {
  if (!isObject(body)) {
    v.add('devolucao', 'O objeto devolucao não respeita o _schema_.');
    return undefined;
  }
  const { valor, natureza } = body;
  const before = v.list.length;
  if (typeof valor !== 'string' || !MONEY.test(valor) || cents(valor) === 0) {
    v.add('devolucao.valor', 'O campo devolucao.valor não respeita o _schema_.', valor);
  }
  // RETIRADA applies to Pix Saque and Pix Troco, which the fake never receives.
  if (natureza !== undefined && natureza !== 'ORIGINAL') {
    v.add('devolucao.natureza', 'O campo devolucao.natureza não se aplica a este Pix.', natureza);
  }
  const descricao = v.text(body, 'descricao', 'devolucao.descricao', 140);
  if (v.list.length > before || typeof valor !== 'string') return undefined;
  return descricao === undefined ? { valor } : { valor, descricao };
}

type SendRequest = Pick<Sent, 'valor' | 'pagador' | 'favorecido'> & {
  /** the favorecido chave, or 'account' */
  target: string;
};

/** Efí's send body; its errors name one problem at a time ({nome: 'valor_invalido', mensagem}). */
function readSend(body: unknown): SendRequest {
  if (!isObject(body)) throw efiValorInvalido('O corpo da requisição deve ser um objeto JSON');
  const { valor, pagador, favorecido } = body;
  if (typeof valor !== 'string' || !MONEY.test(valor) || cents(valor) === 0) {
    throw efiValorInvalido('Campo valor deve ser maior que zero');
  }
  if (!isObject(pagador) || typeof pagador.chave !== 'string' || pagador.chave === '') {
    throw efiValorInvalido('Campo pagador.chave é obrigatório');
  }
  const info = pagador.infoPagador;
  if (info !== undefined && (typeof info !== 'string' || info.length > 140)) {
    throw efiValorInvalido('Campo pagador.infoPagador deve ter no máximo 140 caracteres');
  }
  const request = { valor, pagador: { chave: pagador.chave, ...(info === undefined ? {} : { infoPagador: info }) } };
  if (!isObject(favorecido)) throw efiValorInvalido('Campo favorecido é obrigatório');
  const { chave, contaBanco } = favorecido;
  if ((chave === undefined) === (contaBanco === undefined)) {
    throw efiValorInvalido('Informe favorecido.chave ou favorecido.contaBanco');
  }
  if (chave !== undefined) {
    if (typeof chave !== 'string' || chave === '' || chave.length > 77) {
      throw efiValorInvalido('Campo favorecido.chave é inválido');
    }
    // With a cpf or cnpj, Efí checks that the key belongs to that document (the fake accepts any that fits).
    const { cpf, cnpj } = favorecido;
    const fits = (value: unknown, pattern: RegExp) =>
      value === undefined || (typeof value === 'string' && pattern.test(value));
    if (!fits(cpf, CPF) || !fits(cnpj, CNPJ))
      throw efiValorInvalido('Campo favorecido.cpf ou favorecido.cnpj é inválido');
    const documents = { ...(typeof cpf === 'string' ? { cpf } : {}), ...(typeof cnpj === 'string' ? { cnpj } : {}) };
    return { ...request, target: chave, favorecido: { chave, ...documents } };
  }
  return { ...request, target: 'account', favorecido: { contaBanco: readContaBanco(contaBanco) } };
}

function readContaBanco(conta: unknown): ContaBanco {
  const field = (name: string, pattern: RegExp): string => {
    const value = isObject(conta) ? conta[name] : undefined;
    if (typeof value !== 'string' || !pattern.test(value)) {
      throw efiValorInvalido(`Campo favorecido.contaBanco.${name} é inválido`);
    }
    return value;
  };
  if (!isObject(conta)) throw efiValorInvalido('Campo favorecido.contaBanco é inválido');
  const nome = field('nome', /^.{1,200}$/);
  const codigoBanco = field('codigoBanco', ISPB);
  const agencia = field('agencia', /^\d{1,4}$/);
  const numero = field('conta', /^\d{1,20}$/);
  const tipoConta = field('tipoConta', /^(cacc|svgs|slry|tran)$/i);
  if ((conta.cpf === undefined) === (conta.cnpj === undefined)) {
    throw efiValorInvalido('Informe favorecido.contaBanco.cpf ou favorecido.contaBanco.cnpj');
  }
  const holder = conta.cpf !== undefined ? { cpf: field('cpf', CPF) } : { cnpj: field('cnpj', CNPJ) };
  return { nome, ...holder, codigoBanco, agencia, conta: numero, tipoConta };
}

/** A send as GET /v2/gn/pix/enviados/id-envio/{idEnvio} shows it, in Efí's shape. */
function sentView(sent: Sent) {
  const { favorecido } = sent;
  const shown =
    'contaBanco' in favorecido
      ? {
          contaBanco: {
            nome: favorecido.contaBanco.nome,
            ...(favorecido.contaBanco.cpf === undefined ? {} : { cpf: maskCpf(favorecido.contaBanco.cpf) }),
            ...(favorecido.contaBanco.cnpj === undefined ? {} : { cnpj: maskCnpj(favorecido.contaBanco.cnpj) }),
            agencia: favorecido.contaBanco.agencia,
            conta: favorecido.contaBanco.conta,
            tipoConta: ACCOUNT_TYPE_NAMES[favorecido.contaBanco.tipoConta.toLowerCase()] ?? 'corrente',
          },
        }
      : { chave: favorecido.chave, identificacao: { ...KEY_OWNER } };
  return {
    endToEndId: sent.endToEndId,
    idEnvio: sent.idEnvio,
    valor: sent.valor,
    chave: sent.pagador.chave,
    status: sent.status,
    ...(sent.pagador.infoPagador === undefined ? {} : { infoPagador: sent.pagador.infoPagador }),
    horario: sent.horario,
    favorecido: shown,
  };
}

/** As Efí shows a CPF it answers with: ***.456.789-** */
const maskCpf = (cpf: string) => `***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**`;
const maskCnpj = (cnpj: string) => `**.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-**`;

interface ListQuery {
  inicio: number;
  fim: number;
  paginaAtual: number;
  itensPorPagina: number;
}

/** inicio, fim (RFC 3339, fim not before inicio) and paginacao.* of a list query. */
function readListQuery(query: URLSearchParams, v: Violations): ListQuery {
  const time = (name: string): number => {
    const value = query.get(name);
    const ms = value !== null && RFC3339.test(value) ? Date.parse(value) : NaN;
    if (Number.isNaN(ms)) v.add(name, `O parâmetro ${name} não respeita o _schema_.`, value ?? undefined);
    return ms;
  };
  const whole = (name: string, min: number, max: number, fallback: number): number => {
    const value = query.get(name);
    if (value === null) return fallback;
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!(n >= min && n <= max)) v.add(name, `O parâmetro ${name} não respeita o _schema_.`, value);
    return n;
  };
  const inicio = time('inicio');
  const fim = time('fim');
  if (fim < inicio) v.add('fim', 'O timestamp representado pelo parâmetro fim é anterior ao parâmetro inicio.');
  const paginaAtual = whole('paginacao.paginaAtual', 0, Number.MAX_SAFE_INTEGER, 0);
  const itensPorPagina = whole('paginacao.itensPorPagina', 1, 1000, 100);
  return { inicio, fim, paginaAtual, itensPorPagina };
}

/** One page of `items` and its parametros.paginacao. */
function page<T>(items: T[], query: ListQuery) {
  const start = query.paginaAtual * query.itensPorPagina;
  const paginacao = {
    paginaAtual: query.paginaAtual,
    itensPorPagina: query.itensPorPagina,
    quantidadeDePaginas: Math.max(1, Math.ceil(items.length / query.itensPorPagina)),
    quantidadeTotalDeItens: items.length,
  };
  return { paginacao, items: items.slice(start, start + query.itensPorPagina) };
}

function parseJson(raw: string, invalid: () => Error): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw invalid();
  }
}

/** The body as tests read it back: parsed JSON, form fields, or the raw text. */
function recordedBody(raw: string, contentType: string | undefined): unknown {
  if (raw === '') return undefined;
  if (contentType?.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function basicCredentials(header: string | undefined): string | undefined {
  const encoded = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header ?? '')?.[1];
  return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
}

/** grant_type from a form-urlencoded body or, as Efí sends it, a JSON one. */
function grantType(raw: string, contentType: string | undefined): string | undefined {
  if (contentType?.includes('application/x-www-form-urlencoded')) {
    return new URLSearchParams(raw).get('grant_type') ?? undefined;
  }
  try {
    const body = JSON.parse(raw) as unknown;
    return isObject(body) && typeof body.grant_type === 'string' ? body.grant_type : undefined;
  } catch {
    return new URLSearchParams(raw).get('grant_type') ?? undefined;
  }
}

/** https, or http to this machine (tests run plain receivers). */
function acceptableWebhookUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const { protocol, hostname } = new URL(url);
  return protocol === 'https:' || (protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(hostname));
}

// ---------------------------------------------------------------------------------------------------------------
// Routes and replies

interface Reply {
  status: number;
  /** JSON value, or text sent as is (the JWS) */
  body?: unknown;
  type?: string;
  headers?: Record<string, string>;
}

const ROUTES: { endpoint: PspEndpoint; method: string; pattern: RegExp }[] = [
  { endpoint: 'oauth', method: 'POST', pattern: /^\/oauth\/token$/ },
  { endpoint: 'cob-list', method: 'GET', pattern: /^\/v2\/cob\/?$/ },
  { endpoint: 'cob-put', method: 'PUT', pattern: /^\/v2\/cob\/([^/]+)$/ },
  { endpoint: 'cob-get', method: 'GET', pattern: /^\/v2\/cob\/([^/]+)$/ },
  { endpoint: 'cob-patch', method: 'PATCH', pattern: /^\/v2\/cob\/([^/]+)$/ },
  { endpoint: 'pix-list', method: 'GET', pattern: /^\/v2\/pix\/?$/ },
  { endpoint: 'pix-get', method: 'GET', pattern: /^\/v2\/pix\/([^/]+)$/ },
  { endpoint: 'devolucao-put', method: 'PUT', pattern: /^\/v2\/pix\/([^/]+)\/devolucao\/([^/]+)$/ },
  { endpoint: 'devolucao-get', method: 'GET', pattern: /^\/v2\/pix\/([^/]+)\/devolucao\/([^/]+)$/ },
  { endpoint: 'webhook-put', method: 'PUT', pattern: /^\/v2\/webhook\/([^/]+)$/ },
  { endpoint: 'webhook-get', method: 'GET', pattern: /^\/v2\/webhook\/([^/]+)$/ },
  { endpoint: 'webhook-delete', method: 'DELETE', pattern: /^\/v2\/webhook\/([^/]+)$/ },
  { endpoint: 'send-put', method: 'PUT', pattern: /^\/v3\/gn\/pix\/([^/]+)$/ },
  { endpoint: 'send-get', method: 'GET', pattern: /^\/v2\/gn\/pix\/enviados\/id-envio\/([^/]+)$/ },
];

type RouteMatch = { endpoint: PspEndpoint; params: string[] } | 'no-route' | 'no-method';

function matchRoute(method: string, path: string): RouteMatch {
  let pathKnown = false;
  for (const route of ROUTES) {
    const match = route.pattern.exec(path);
    if (match === null) continue;
    pathKnown = true;
    if (route.method !== method) continue;
    try {
      return { endpoint: route.endpoint, params: match.slice(1).map((param) => decodeURIComponent(param)) };
    } catch {
      return 'no-route';
    }
  }
  return pathKnown ? 'no-method' : 'no-route';
}

function errorReply(error: unknown): Reply {
  if (error instanceof Problem) {
    const body = {
      type: `https://pix.bcb.gov.br/api/v2/error/${error.kind}`,
      title: error.title,
      status: error.status,
      detail: error.detail,
      ...(error.violacoes === undefined ? {} : { violacoes: error.violacoes }),
    };
    const headers: Record<string, string> = error.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
    return { status: error.status, body, type: 'application/problem+json', headers };
  }
  if (error instanceof EfiError) return { status: error.status, body: { nome: error.nome, mensagem: error.mensagem } };
  if (error instanceof OAuthError) {
    const headers: Record<string, string> = error.status === 401 ? { 'www-authenticate': 'Basic' } : {};
    return { status: error.status, body: { error: error.error }, headers };
  }
  return errorReply(erroInterno());
}

function faultError(endpoint: PspEndpoint, fault: 'server-error' | 'unavailable' | 'invalid-token'): Error {
  if (fault === 'invalid-token') return endpoint === 'oauth' ? new OAuthError(401, 'invalid_client') : acessoNegado();
  if (endpoint === 'send-put') return fault === 'server-error' ? efiErroAplicacao() : efiIndisponivel();
  return fault === 'server-error' ? erroInterno() : servicoIndisponivel();
}

// ---------------------------------------------------------------------------------------------------------------
// The server

class FakePspServer implements FakePsp {
  url = '';
  baseUrl = '';
  locationHost = '';
  readonly requests: RecordedRequest[] = [];
  readonly webhookDeliveries: WebhookDelivery[] = [];
  readonly cobs = new Map<string, Cob>();
  readonly received = new Map<string, Pix>();
  readonly sent = new Map<string, Sent>();
  readonly webhooks = new Map<string, string>();
  /** token → when it expires */
  private readonly tokens = new Map<string, number>();
  private readonly webhookCreated = new Map<string, string>();
  /** location token (the last path segment) → txid */
  private readonly locations = new Map<string, string>();
  private nextLocId = 1;
  private readonly sendScripts = new Map<string, SendScript>();
  private readonly refundScripts = new Map<string, RefundScript>();
  private readonly faults = new Map<PspEndpoint, PspFault[]>();
  private readonly delays = new Map<PspEndpoint, number[]>();
  /** running waits: timer → ends the wait early (close) */
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly pending = new Set<Promise<void>>();
  /** answers never to be sent (timeout-*), and answers being delayed */
  private readonly held = new Set<ServerResponse>();
  private readonly aborter = new AbortController();
  private closed = false;
  private readonly api: Server;
  private readonly locationServer: Server;
  private readonly webhookAgent: Agent;
  private readonly signingKey: KeyObject;
  private readonly jwk: { kid: string } & Record<string, unknown>;

  constructor(
    private readonly now: () => number,
    private readonly webhookRetryMs: number,
  ) {
    const key = readFileSync(PSP_TEST.serverKeyPath);
    const cert = readFileSync(PSP_TEST.serverCertPath);
    const ca = readFileSync(PSP_TEST.caPath);
    this.api = createServer({ key, cert, ca, requestCert: true, rejectUnauthorized: true }, (request, response) => {
      void this.handle(request, response);
    });
    this.locationServer = createServer({ key, cert }, (request, response) => this.serveLocation(request, response));
    this.webhookAgent = new Agent({ connect: { ca, cert, key } });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.signingKey = privateKey;
    this.jwk = { ...publicKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
  }

  async listen(): Promise<void> {
    const listen = (server: Server) =>
      new Promise<number>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
      );
    this.url = `https://127.0.0.1:${await listen(this.api)}`;
    this.baseUrl = `${this.url}/v2`;
    this.locationHost = `127.0.0.1:${await listen(this.locationServer)}`;
  }

  failNext(endpoint: PspEndpoint, fault: PspFault, times = 1): void {
    const queue = this.faults.get(endpoint) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.faults.set(endpoint, queue);
  }

  delayNext(endpoint: PspEndpoint, ms: number, times = 1): void {
    const queue = this.delays.get(endpoint) ?? [];
    for (let i = 0; i < times; i++) queue.push(ms);
    this.delays.set(endpoint, queue);
  }

  expireTokens(): void {
    this.tokens.clear();
  }

  scriptSend(target: string, script: SendScript): void {
    this.sendScripts.set(target, { ...script });
  }

  scriptRefund(e2eid: string, script: RefundScript): void {
    this.refundScripts.set(e2eid, { ...script });
  }

  async payKey(chave: string, valor: string, options: Omit<PayOptions, 'valor' | 'force'> = {}): Promise<Pix> {
    if (!MONEY.test(valor)) throw new Error(`valor ${valor} is not \\d{1,10}\\.\\d{2}`);
    const pix = this.receive(chave, valor, undefined, options);
    this.notify(chave, () => pix, options.webhook ?? 'send', options.delayMs ?? 0);
    return structuredClone(pix);
  }

  async pay(txid: string, options: PayOptions = {}): Promise<Pix> {
    const cob = this.cobs.get(txid);
    if (cob === undefined) throw new Error(`no cob ${txid}`);
    const now = this.now();
    if (options.force !== true) {
      if (cob.status !== 'ATIVA') throw new Error(`cob ${txid} is ${cob.status}`);
      const expiresAt = Date.parse(cob.calendario.criacao) + cob.calendario.expiracao * 1000;
      if (now >= expiresAt) throw new Error(`cob ${txid} expired at ${iso(expiresAt)}`);
    }
    const pix = this.receive(cob.chave, options.valor ?? cob.valor.original, txid, options);
    (cob.pix ??= []).push(pix);
    if (cob.status === 'ATIVA') cob.status = 'CONCLUIDA';
    this.notify(cob.chave, () => pix, options.webhook ?? 'send', options.delayMs ?? 0);
    return structuredClone(pix);
  }

  /** Records a Pix received at `chave` (for the charge `txid`, or none), from the payer the options name. */
  private receive(
    chave: string,
    valor: string,
    txid: string | undefined,
    options: Pick<PayOptions, 'payer' | 'infoPagador'>,
  ): Pix {
    const payer = options.payer;
    const codigoBanco = payer?.codigoBanco ?? PSP_TEST.ispb;
    if (!ISPB.test(codigoBanco)) throw new Error(`payer codigoBanco ${codigoBanco} is not an ISPB`);
    const pagador = payer && {
      nome: payer.nome,
      ...(payer.cpf === undefined ? {} : { cpf: payer.cpf }),
      ...(payer.cnpj === undefined ? {} : { cnpj: payer.cnpj }),
      codigoBanco,
    };
    const now = this.now();
    const pix: Pix = {
      endToEndId: transactionId('E', codigoBanco, now),
      ...(txid === undefined ? {} : { txid }),
      valor,
      chave,
      horario: iso(now),
      ...(options.infoPagador === undefined ? {} : { infoPagador: options.infoPagador }),
      ...(pagador === undefined ? {} : { gnExtras: { pagador } }),
    };
    this.received.set(pix.endToEndId, pix);
    return pix;
  }

  async redeliver(index: number): Promise<number> {
    const delivery = this.webhookDeliveries[index];
    if (delivery === undefined) throw new Error(`no webhook delivery ${index}`);
    return this.post(delivery.url, delivery.body);
  }

  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [timer, end] of this.timers) {
      clearTimeout(timer);
      end();
    }
    this.timers.clear();
    this.aborter.abort();
    for (const response of this.held) response.destroy();
    this.held.clear();
    for (const server of [this.api, this.locationServer]) server.closeAllConnections();
    await Promise.all([this.api, this.locationServer].map((server) => new Promise((resolve) => server.close(resolve))));
    await this.webhookAgent.close();
  }

  // --- HTTP

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const target = new URL(request.url ?? '/', 'https://psp.local');
    const raw = await readBody(request);
    const method = request.method ?? 'GET';
    const route = matchRoute(method, target.pathname);
    if (route === 'no-route') return this.send(response, errorReply(naoEncontrado()));
    if (route === 'no-method') {
      return this.send(
        response,
        errorReply(
          new Problem(
            405,
            'RequisicaoInvalida',
            'Método não permitido.',
            `${method} não se aplica a ${target.pathname}.`,
          ),
        ),
      );
    }
    const record: RecordedRequest = {
      endpoint: route.endpoint,
      method,
      path: target.pathname + target.search,
      body: recordedBody(raw, request.headers['content-type']),
      status: 0,
      at: this.now(),
    };
    this.requests.push(record);
    const fault = this.faults.get(route.endpoint)?.shift();
    if (fault === 'reset') return void request.socket.destroy();
    if (fault === 'timeout-before') return this.hold(response);
    if (fault === 'server-error' || fault === 'unavailable' || fault === 'invalid-token') {
      const reply = errorReply(faultError(route.endpoint, fault));
      record.status = reply.status;
      return this.send(response, reply);
    }
    const delay = this.delays.get(route.endpoint)?.shift();
    if (delay !== undefined) {
      this.held.add(response);
      await this.wait(delay);
      this.held.delete(response);
      if (this.closed) return void response.destroy();
    }
    const reply = this.process(route.endpoint, route.params, request, target.searchParams, raw);
    if (fault === 'timeout-after') return this.hold(response);
    record.status = reply.status;
    this.send(response, reply);
  }

  private process(
    endpoint: PspEndpoint,
    params: string[],
    request: IncomingMessage,
    query: URLSearchParams,
    raw: string,
  ): Reply {
    try {
      if (endpoint === 'oauth') return this.issueToken(request, raw);
      this.authorize(request.headers.authorization);
      const [first = '', second = ''] = params;
      const json = () => parseJson(raw, () => requisicaoInvalida('O corpo da requisição não é um JSON válido.'));
      switch (endpoint) {
        case 'cob-put':
          return this.putCob(first, json());
        case 'cob-get':
          return this.getCob(first);
        case 'cob-patch':
          return this.patchCob(first, json());
        case 'cob-list':
          return this.listCobs(query);
        case 'pix-get':
          return this.getPix(first);
        case 'pix-list':
          return this.listPix(query);
        case 'devolucao-put':
          return this.putDevolucao(first, second, json());
        case 'devolucao-get':
          return this.getDevolucao(first, second);
        case 'webhook-put':
          return this.putWebhook(first, json());
        case 'webhook-get':
          return this.getWebhook(first);
        case 'webhook-delete':
          return this.deleteWebhook(first);
        case 'send-put':
          return this.putSend(
            first,
            parseJson(raw, () => efiValorInvalido('O corpo da requisição não é um JSON')),
          );
        case 'send-get':
          return this.getSend(first);
      }
    } catch (error) {
      return errorReply(error);
    }
  }

  private send(response: ServerResponse, reply: Reply): void {
    if (response.destroyed) return;
    const headers = { ...reply.headers };
    if (reply.body === undefined) {
      response.writeHead(reply.status, headers).end();
      return;
    }
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    response.writeHead(reply.status, { 'content-type': reply.type ?? 'application/json', ...headers }).end(text);
  }

  /** The answer is never sent: the socket stays open until the client gives up or close() destroys it. */
  private hold(response: ServerResponse): void {
    this.held.add(response);
    response.on('close', () => this.held.delete(response));
  }

  // --- OAuth

  private issueToken(request: IncomingMessage, raw: string): Reply {
    if (basicCredentials(request.headers.authorization) !== `${PSP_TEST.clientId}:${PSP_TEST.clientSecret}`) {
      throw new OAuthError(401, 'invalid_client');
    }
    const grant = grantType(raw, request.headers['content-type']);
    if (grant === undefined) throw new OAuthError(400, 'invalid_request');
    if (grant !== 'client_credentials') throw new OAuthError(400, 'unsupported_grant_type');
    const token = randomText(ALNUM, 48);
    this.tokens.set(token, this.now() + TOKEN_TTL_SECONDS * 1000);
    return {
      status: 200,
      body: { access_token: token, token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS, scope: SCOPES },
    };
  }

  private authorize(authorization: string | undefined): void {
    const token = /^Bearer (\S+)$/i.exec(authorization ?? '')?.[1];
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    if (expiresAt === undefined || this.now() >= expiresAt) throw acessoNegado();
  }

  // --- Cob

  private putCob(txid: string, body: unknown): Reply {
    const v = new Violations();
    if (!TXID.test(txid)) v.add('cob.txid', 'O campo cob.txid não respeita o _schema_.', txid);
    else if (this.cobs.has(txid)) v.add('cob.txid', 'O txid informado já foi utilizado em outra cobrança.', txid);
    const fields = readCob(body, 'create', v);
    const { expiracao, valor, chave } = fields;
    if (v.list.length > 0 || expiracao === undefined || valor === undefined || chave === undefined) {
      throw cobInvalida(v.list);
    }
    const now = iso(this.now());
    const token = randomUUID().replaceAll('-', '');
    const location = `${this.locationHost}/qr/v2/${token}`;
    const cob: Cob = {
      calendario: { criacao: now, expiracao },
      txid,
      revisao: 0,
      loc: { id: this.nextLocId++, location, tipoCob: 'cob', criacao: now },
      location,
      status: 'ATIVA',
      ...(fields.devedor === undefined ? {} : { devedor: fields.devedor }),
      valor,
      chave,
      ...(fields.solicitacaoPagador === undefined ? {} : { solicitacaoPagador: fields.solicitacaoPagador }),
      ...(fields.infoAdicionais === undefined ? {} : { infoAdicionais: fields.infoAdicionais }),
      pixCopiaECola: dynamicBrCode(location, valor.original),
    };
    this.cobs.set(txid, cob);
    this.locations.set(token, txid);
    return { status: 201, body: cob };
  }

  private getCob(txid: string): Reply {
    const cob = this.cobs.get(txid);
    if (cob === undefined) throw cobNaoEncontrado();
    return { status: 200, body: cob };
  }

  /** Removal ({"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}) or revision of an ATIVA cob; revisao + 1. */
  private patchCob(txid: string, body: unknown): Reply {
    const cob = this.cobs.get(txid);
    if (cob === undefined) throw cobNaoEncontrado();
    const v = new Violations();
    const fields = readCob(body, 'revise', v);
    if (v.list.length > 0) throw cobInvalida(v.list);
    if (cob.status !== 'ATIVA') throw cobNaoAtiva();
    if (fields.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR') cob.status = fields.status;
    if (fields.expiracao !== undefined) cob.calendario.expiracao = fields.expiracao;
    if (fields.valor !== undefined) {
      cob.valor = fields.valor;
      cob.pixCopiaECola = dynamicBrCode(cob.location, fields.valor.original);
    }
    if (fields.chave !== undefined) cob.chave = fields.chave;
    if (fields.devedor !== undefined) cob.devedor = fields.devedor;
    if (fields.solicitacaoPagador !== undefined) cob.solicitacaoPagador = fields.solicitacaoPagador;
    if (fields.infoAdicionais !== undefined) cob.infoAdicionais = fields.infoAdicionais;
    cob.revisao++;
    return { status: 200, body: cob };
  }

  private listCobs(query: URLSearchParams): Reply {
    const v = new Violations();
    const list = readListQuery(query, v);
    const status = query.get('status');
    if (v.list.length > 0) throw consultaInvalida('CobConsultaInvalida', v.list);
    const cobs = [...this.cobs.values()]
      .filter((cob) => {
        const criacao = Date.parse(cob.calendario.criacao);
        return criacao >= list.inicio && criacao <= list.fim && (status === null || cob.status === status);
      })
      .sort((a, b) => Date.parse(a.calendario.criacao) - Date.parse(b.calendario.criacao));
    const { paginacao, items } = page(cobs, list);
    const parametros = { inicio: iso(list.inicio), fim: iso(list.fim), ...(status === null ? {} : { status }) };
    return { status: 200, body: { parametros: { ...parametros, paginacao }, cobs: items } };
  }

  // --- Received Pix and refunds

  private getPix(e2eid: string): Reply {
    const pix = this.received.get(e2eid);
    if (pix === undefined) throw pixNaoEncontrado();
    return { status: 200, body: pix };
  }

  private listPix(query: URLSearchParams): Reply {
    const v = new Violations();
    const list = readListQuery(query, v);
    const txid = query.get('txid');
    if (txid !== null && !SHORT_ID.test(txid)) v.add('txid', 'O parâmetro txid não respeita o _schema_.', txid);
    if (v.list.length > 0) throw consultaInvalida('PixConsultaInvalida', v.list);
    const pix = [...this.received.values()]
      .filter((p) => {
        const horario = Date.parse(p.horario);
        return horario >= list.inicio && horario <= list.fim && (txid === null || p.txid === txid);
      })
      .sort((a, b) => Date.parse(a.horario) - Date.parse(b.horario));
    const { paginacao, items } = page(pix, list);
    const parametros = { inicio: iso(list.inicio), fim: iso(list.fim), ...(txid === null ? {} : { txid }) };
    return { status: 200, body: { parametros: { ...parametros, paginacao }, pix: items } };
  }

  /**
   * A refund of at most what is left of the Pix. The same id with the same request answers the refund as it stands
   * (a retry); the same id with another request is a violacao.
   */
  private putDevolucao(e2eid: string, id: string, body: unknown): Reply {
    const pix = E2E_ID.test(e2eid) ? this.received.get(e2eid) : undefined;
    if (pix === undefined) throw pixNaoEncontrado();
    const v = new Violations();
    if (!SHORT_ID.test(id)) v.add('id', 'O campo id não respeita o _schema_.', id);
    const request = readDevolucao(body, v);
    const devolucoes = pix.devolucoes ?? [];
    const existing = devolucoes.find((d) => d.id === id);
    if (existing !== undefined && request !== undefined) {
      if (existing.valor === request.valor && existing.descricao === request.descricao) {
        return { status: 201, body: existing };
      }
      v.add('id', 'O id informado já foi utilizado por outra requisição de devolução deste Pix.', id);
    }
    if (request !== undefined && existing === undefined) {
      const refunded = devolucoes
        .filter((d) => d.status !== 'NAO_REALIZADO')
        .reduce((sum, d) => sum + cents(d.valor), 0);
      if (refunded + cents(request.valor) > cents(pix.valor)) {
        v.add('devolucao.valor', 'A soma das devoluções excederia o valor do Pix original.', request.valor);
      }
    }
    if (v.list.length > 0 || request === undefined) throw devolucaoInvalida(v.list);
    const now = this.now();
    const devolucao: Devolucao = {
      id,
      rtrId: transactionId('D', PSP_TEST.ispb, now),
      valor: request.valor,
      natureza: 'ORIGINAL',
      ...(request.descricao === undefined ? {} : { descricao: request.descricao }),
      horario: { solicitacao: iso(now) },
      status: 'EM_PROCESSAMENTO',
    };
    pix.devolucoes = [...devolucoes, devolucao];
    const script = { ...(this.refundScripts.get(e2eid) ?? DEFAULT_REFUND_SCRIPT) };
    this.schedule(script.delayMs ?? 0, async () => {
      devolucao.status = script.status;
      if (script.status === 'DEVOLVIDO') devolucao.horario.liquidacao = iso(this.now());
      else devolucao.motivo = script.motivo ?? DEFAULT_REFUND_MOTIVO;
      await this.notifyNow(pix.chave, () => pix, script.webhook ?? 'send');
    });
    return { status: 201, body: devolucao };
  }

  private getDevolucao(e2eid: string, id: string): Reply {
    const pix = this.received.get(e2eid);
    if (pix === undefined) throw pixNaoEncontrado();
    const devolucao = pix.devolucoes?.find((d) => d.id === id);
    if (devolucao === undefined) throw devolucaoNaoEncontrada();
    return { status: 200, body: devolucao };
  }

  // --- Webhooks

  private putWebhook(chave: string, body: unknown): Reply {
    const v = new Violations();
    if (chave !== PSP_TEST.pixKey) {
      v.add('chave', 'O parâmetro chave não corresponde a uma chave DICT pertencente a este usuário recebedor.', chave);
    }
    const url = isObject(body) ? body.webhookUrl : undefined;
    if (typeof url !== 'string' || !acceptableWebhookUrl(url)) {
      v.add('webhook.webhookUrl', 'Campo webhook.webhookUrl não respeita o _schema_.', url);
    }
    if (v.list.length > 0 || typeof url !== 'string') throw webhookInvalido(v.list);
    this.webhooks.set(chave, url);
    this.webhookCreated.set(chave, iso(this.now()));
    return { status: 200 };
  }

  private getWebhook(chave: string): Reply {
    const webhookUrl = this.webhooks.get(chave);
    if (webhookUrl === undefined) throw webhookNaoEncontrado();
    return { status: 200, body: { webhookUrl, chave, criacao: this.webhookCreated.get(chave) } };
  }

  private deleteWebhook(chave: string): Reply {
    if (!this.webhooks.delete(chave)) throw webhookNaoEncontrado();
    this.webhookCreated.delete(chave);
    return { status: 204 };
  }

  // --- Efí: send Pix

  private putSend(idEnvio: string, body: unknown): Reply {
    if (!SHORT_ID.test(idEnvio)) throw efiValorInvalido('Campo idEnvio deve ter de 1 a 35 caracteres alfanuméricos');
    if (this.sent.has(idEnvio)) throw efiIdEnvioDuplicado();
    const request = readSend(body);
    if (request.pagador.chave !== PSP_TEST.pixKey) throw efiChaveInvalida();
    if (!this.webhooks.has(request.pagador.chave)) throw efiSemWebhook();
    const now = this.now();
    const sent: Sent = {
      idEnvio,
      endToEndId: transactionId('E', PSP_TEST.ispb, now),
      valor: request.valor,
      pagador: request.pagador,
      favorecido: request.favorecido,
      status: 'EM_PROCESSAMENTO',
      horario: { solicitacao: iso(now) },
    };
    this.sent.set(idEnvio, sent);
    const script = { ...(this.sendScripts.get(request.target) ?? DEFAULT_SEND_SCRIPT) };
    this.schedule(script.delayMs ?? 0, () => this.finishSend(sent, script));
    const answer = { idEnvio, e2eId: sent.endToEndId, valor: sent.valor, horario: { ...sent.horario } };
    return { status: 201, body: { ...answer, status: 'EM_PROCESSAMENTO' } };
  }

  private async finishSend(sent: Sent, script: SendScript): Promise<void> {
    sent.status = script.status;
    const done = script.status === 'REALIZADO';
    if (done) sent.horario.liquidacao = iso(this.now());
    if (!done) {
      sent.erro = {
        codigo: script.codigo ?? DEFAULT_SEND_ERROR.codigo,
        origem: DEFAULT_SEND_ERROR.origem,
        motivo: script.motivo ?? DEFAULT_SEND_ERROR.motivo,
      };
    }
    // The shape of Efí's "Pix enviado" webhook: tipo SOLICITACAO, gnExtras.idEnvio, horario null when refused.
    const element = () => ({
      endToEndId: sent.endToEndId,
      chave: sent.pagador.chave,
      tipo: 'SOLICITACAO',
      status: sent.status,
      valor: sent.valor,
      horario: done ? (sent.horario.liquidacao ?? null) : null,
      ...(sent.pagador.infoPagador === undefined ? {} : { infoPagador: sent.pagador.infoPagador }),
      gnExtras: sent.erro === undefined ? { idEnvio: sent.idEnvio } : { idEnvio: sent.idEnvio, erro: sent.erro },
    });
    await this.notifyNow(sent.pagador.chave, element, script.webhook ?? 'send');
  }

  private getSend(idEnvio: string): Reply {
    const sent = this.sent.get(idEnvio);
    if (sent === undefined) throw pixEnviadoNaoEncontrado();
    return { status: 200, body: sentView(sent) };
  }

  // --- Payload location (second server: TLS without a client certificate)

  private serveLocation(request: IncomingMessage, response: ServerResponse): void {
    const path = new URL(request.url ?? '/', 'https://location.local').pathname;
    if (request.method === 'GET' && path === '/jwks.json')
      return this.send(response, { status: 200, body: this.jwks() });
    const token = /^\/qr\/v2\/([0-9a-f]{32})$/.exec(path)?.[1];
    if (request.method !== 'GET' || token === undefined) return this.send(response, errorReply(naoEncontrado()));
    const cob = this.cobs.get(this.locations.get(token) ?? '');
    if (cob === undefined) return this.send(response, errorReply(cobPayloadNaoEncontrado(404)));
    if (cob.status !== 'ATIVA' && cob.status !== 'CONCLUIDA') {
      return this.send(response, errorReply(cobPayloadNaoEncontrado(410)));
    }
    const payload = {
      calendario: {
        criacao: cob.calendario.criacao,
        apresentacao: iso(this.now()),
        expiracao: cob.calendario.expiracao,
      },
      txid: cob.txid,
      revisao: cob.revisao,
      ...(cob.devedor === undefined ? {} : { devedor: cob.devedor }),
      status: cob.status,
      valor: cob.valor,
      chave: cob.chave,
      ...(cob.solicitacaoPagador === undefined ? {} : { solicitacaoPagador: cob.solicitacaoPagador }),
      ...(cob.infoAdicionais === undefined ? {} : { infoAdicionais: cob.infoAdicionais }),
    };
    const header = { alg: 'RS256', typ: 'JWS', kid: this.jwk.kid, jku: `https://${this.locationHost}/jwks.json` };
    this.send(response, { status: 200, body: compactJws(header, payload, this.signingKey), type: 'application/jose' });
  }

  private jwks(): { keys: object[] } {
    return { keys: [this.jwk] };
  }

  // --- Scheduled work and webhook deliveries

  /** Runs `task` after `delayMs`; idle() waits for it, close() cancels it if it has not started. */
  private schedule(delayMs: number, task: () => Promise<unknown>): void {
    const done = this.wait(delayMs).then(async () => {
      if (this.closed) return;
      try {
        await task();
      } catch {
        // a failed task only ends; tests see what it did not do
      }
    });
    this.pending.add(done);
    void done.then(() => this.pending.delete(done));
  }

  /** A pause that close() ends early. */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.set(timer, resolve);
    });
  }

  /** Webhook(s) for the Pix key after `delayMs`, each element as it stands when they go. */
  private notify(chave: string, element: () => object, mode: WebhookMode, delayMs: number): void {
    this.schedule(delayMs, () => this.notifyNow(chave, element, mode));
  }

  private async notifyNow(chave: string, element: () => object, mode: WebhookMode): Promise<void> {
    const body = { pix: [structuredClone(element())] };
    const times = mode === 'skip' ? 0 : mode === 'twice' ? 2 : 1;
    for (let i = 0; i < times; i++) await this.deliver(chave, body);
  }

  /**
   * POSTs {"pix":[…]} to the key's webhookUrl + "/pix" (nothing when the key has no webhook); an answer other than
   * 2xx, or none, is tried again up to WEBHOOK_RETRIES more times, webhookRetryMs apart.
   */
  private async deliver(chave: string, body: object): Promise<void> {
    const webhookUrl = this.webhooks.get(chave);
    if (webhookUrl === undefined) return;
    for (let attempt = 0; attempt <= WEBHOOK_RETRIES; attempt++) {
      if (attempt > 0) await this.wait(this.webhookRetryMs);
      if (this.closed) return;
      const status = await this.post(`${webhookUrl}/pix`, body);
      if (status >= 200 && status < 300) return;
    }
  }

  /** One POST, recorded in webhookDeliveries; answers the HTTP status (0: no answer). */
  private async post(url: string, body: unknown): Promise<number> {
    const delivery: WebhookDelivery = { url, body: structuredClone(body), status: 0, at: this.now() };
    this.webhookDeliveries.push(delivery);
    try {
      const response = await undiciRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        dispatcher: this.webhookAgent,
        signal: AbortSignal.any([this.aborter.signal, AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)]),
      });
      await response.body.dump();
      delivery.status = response.statusCode;
    } catch {
      delivery.status = 0;
    }
    return delivery.status;
  }
}

/** The environment of a gateway on this local PSP, listening on `port` where the PSP posts its webhooks. */
export function apiPixGatewayEnv(psp: Pick<FakePsp, 'url'>, port: number): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    BRAZIL_RAIL: 'apipix',
    PIX_PSP_BASE_URL: `${psp.url}/v2`,
    PIX_PSP_TOKEN_URL: `${psp.url}/oauth/token`,
    PIX_PSP_CLIENT_ID: PSP_TEST.clientId,
    PIX_PSP_CLIENT_SECRET: PSP_TEST.clientSecret,
    PIX_PSP_CERT: PSP_TEST.certPath,
    PIX_PSP_KEY: PSP_TEST.keyPath,
    PIX_PSP_CA: PSP_TEST.caPath,
    PIX_KEY: PSP_TEST.pixKey,
  };
}

/** A gateway's environment on this local PSP (see apiPixGatewayEnv) with the short waits the tests use. */
export function apiPixTestEnv(psp: Pick<FakePsp, 'url'>, port: number): Record<string, string> {
  return {
    ...apiPixGatewayEnv(psp, port),
    PIX_PSP_TIMEOUT_MS: '5000',
    PIX_RECONCILE_INTERVAL_MS: '300',
    PIX_PAYOUT_RESULT_TIMEOUT_MS: '400',
    RAIL_POLL_INTERVAL_MS: '100',
    CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    CALLBACK_POLL_INTERVAL_MS: '50',
  };
}
