/**
 * A local fake of Banco Inter's API Cobrança v3 ("BolePix") for Cashgate's tests, written from Inter's published
 * reference (developers.inter.co/references/cobranca-bolepix and /token, as compiled in edusouza/inter-pj-cli
 * `spec/inter-empresas-openapi.json` and extracted in unfoldingcx/inter.js `specs/cobranca.json`): mutual TLS with a
 * required client certificate, OAuth2 client credentials with scopes (60-minute tokens, 5 token calls a minute),
 * asynchronous issue (EM_PROCESSAMENTO, then A_RECEBER with boleto and Pix, or FALHA_EMISSAO), the 30-minute duplicate
 * rule, the listing with its date window and paging, cancellation, the PDF, the sandbox's `/pagar`, the account's
 * webhook and its callbacks (a JSON array of CallbackCobranca, retried). Errors are Inter's `Problema`
 * {title, status, detail, violacoes}. Tests play the payer (`pay`), script how issues end, inject faults, and read back
 * every request and every callback attempt. What the documentation leaves open is marked "(unconfirmed)" and listed
 * in docs/boleto-inter.md.
 */
import { readFileSync } from 'node:fs';
import { randomInt, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Agent, request as undiciRequest } from 'undici';
import { isValidCnpj, isValidCpf } from '../../src/brazil/documents.js';
import { formatMinor, parseDecimal } from '../../src/money.js';
import { boletoBarcode, DUE_DATE_RANGE, formatLinhaDigitavel, linhaDigitavel } from '../../src/rails/boleto/boleto.js';
import { dynamicBrCode } from '../../src/rails/pix/br-code.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/psp/${name}`, import.meta.url));

export const INTER_TEST = {
  clientId: 'cashgate-inter-client',
  clientSecret: 'cashgate-inter-secret',
  /** The current account (digits with its check digit, no leading zeros): x-conta-corrente. */
  account: '12345678',
  /** Cashgate's client certificate and key for the mutual TLS (the PSP fixtures: one test CA signs everything). */
  certPath: fixture('client.pem'),
  keyPath: fixture('client-key.pem'),
  /** The test CA: it signs the fake's server certificate and Cashgate's client certificate. */
  caPath: fixture('ca.pem'),
  /** A self-signed client certificate (not from the CA) the fake refuses at the handshake. */
  rogueCertPath: fixture('rogue-client.pem'),
  rogueKeyPath: fixture('rogue-client-key.pem'),
} as const;

/** The fake's names of Inter's endpoints (what failNext, delayNext and `requests` speak of). */
export type InterOperation =
  'oauth' | 'issue' | 'get' | 'list' | 'cancel' | 'pdf' | 'pay' | 'webhook-put' | 'webhook-get' | 'webhook-delete';

export type InterFault =
  /** 500 problem, nothing done */
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

export type CallbackMode = 'send' | 'skip' | 'twice';

export interface InterRequest {
  operation: InterOperation;
  method: string;
  /** path and query string */
  path: string;
  /** parsed JSON, form fields (oauth), or the raw text */
  body: any;
  /** HTTP status answered; 0 when the answer was held or the connection reset */
  status: number;
  at: number;
}

export interface InterCallback {
  url: string;
  /** the JSON array posted */
  body: any;
  /** HTTP status answered; 0 when the POST failed or got no answer */
  status: number;
  /** 1 for the first POST of a callback, 2… for its retries (Inter's numeroTentativa) */
  attempt: number;
  at: number;
}

export interface InterPayOptions {
  pagarCom?: 'BOLETO' | 'PIX';
  /** valorTotalRecebido, "12.34"; default the valorNominal */
  valor?: string;
  /** 'send' (default) one callback, 'skip' none, 'twice' the same body twice */
  callback?: CallbackMode;
}

export interface FakeInterOptions {
  now?: () => number;
  /** how long a charge stays EM_PROCESSAMENTO (default 50 ms) */
  issueDelayMs?: number;
  /** the waits before each retry of a callback (Inter's 20, 30, 60, 120 minutes, scaled; default [200, 300, 600, 1200]) */
  webhookRetryMs?: readonly number[];
  /** accept an http:// webhookUrl (Inter requires https; tests run Cashgate on http) */
  allowHttpWebhook?: boolean;
  /** the scopes the application was granted in Internet Banking (default read and write) */
  grantedScopes?: readonly string[];
  /** token calls allowed in any 60 seconds (Inter's limit, and the default, is 5) */
  tokenCallsPerMinute?: number;
}

export interface FakeInter {
  /** https://127.0.0.1:PORT (mutual TLS): `${url}/oauth/v2/token`, `${url}/cobranca/v3/cobrancas…` */
  url: string;
  /** every request received, in order */
  readonly requests: InterRequest[];
  /** charges by codigoSolicitacao, in the shape GET /cobranca/v3/cobrancas/{codigoSolicitacao} answers */
  readonly charges: Map<string, any>;
  /** the account's webhook, as PUT /cobranca/v3/cobrancas/webhook set it */
  readonly webhookUrl: string | undefined;
  /** every callback POST attempt, in order (retries and redeliveries included) */
  readonly callbacks: InterCallback[];
  /** the next `times` requests to `operation` fail this way */
  failNext(operation: InterOperation, fault: InterFault, times?: number): void;
  /** the next `times` requests to `operation` wait `ms` before they are processed and answered */
  delayNext(operation: InterOperation, ms: number, times?: number): void;
  /** the next issue with this seuNumero ends FALHA_EMISSAO */
  failIssue(seuNumero: string): void;
  /** issues with this seuNumero stay EM_PROCESSAMENTO until releaseIssue */
  holdIssue(seuNumero: string): void;
  /** the held issues of this seuNumero end (A_RECEBER, or FALHA_EMISSAO when failIssue named it) */
  releaseIssue(seuNumero: string): void;
  /**
   * A payer pays the charge: A_RECEBER or ATRASADO, and also CANCELADO or EXPIRADO (a printed slip paid at a branch
   * after the write-off). It becomes RECEBIDO; its callback follows (await idle()).
   */
  pay(id: string, options?: InterPayOptions): Promise<void>;
  /** Inter writes the charge off after its last payable day: A_RECEBER or ATRASADO → EXPIRADO, and a callback. */
  expire(id: string): void;
  /** Posts an earlier callback body again to the same URL; answers its HTTP status (0: none). */
  redeliver(index: number): Promise<number>;
  /** invalidates every token issued so far */
  expireTokens(): void;
  /** resolves when no issue or callback is pending */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeInter(options: FakeInterOptions = {}): Promise<FakeInter> {
  const fake = new FakeInterServer(options);
  await fake.listen();
  return fake;
}

/** The environment of a gateway on this local Inter, listening on `port` (where Inter posts its callbacks). */
export function interGatewayEnv(inter: Pick<FakeInter, 'url'>, port: number): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    BRAZIL_BOLETO_RAIL: 'inter',
    INTER_BASE_URL: inter.url,
    INTER_CLIENT_ID: INTER_TEST.clientId,
    INTER_CLIENT_SECRET: INTER_TEST.clientSecret,
    INTER_CERT: INTER_TEST.certPath,
    INTER_KEY: INTER_TEST.keyPath,
    INTER_CA: INTER_TEST.caPath,
    INTER_ACCOUNT: INTER_TEST.account,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Inter's texts and limits

const TOKEN_TTL_SECONDS = 3600;
const TOKEN_CALLS_PER_MINUTE = 5;
const SCOPE_READ = 'boleto-cobranca.read';
const SCOPE_WRITE = 'boleto-cobranca.write';
const DUPLICATE_WINDOW_MS = 30 * 60_000;
const CALLBACK_TIMEOUT_MS = 5_000;
const BRASILIA_OFFSET_MS = -3 * 3_600_000;
const DAY_MS = 86_400_000;
const UFS = new Set('AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO'.split(' '));
const SITUACOES = new Set([
  'RECEBIDO',
  'A_RECEBER',
  'MARCADO_RECEBIDO',
  'ATRASADO',
  'CANCELADO',
  'EXPIRADO',
  'FALHA_EMISSAO',
  'EM_PROCESSAMENTO',
  'PROTESTO',
]);
const ORDENAR_POR = new Set([
  'PESSOA_PAGADORA',
  'TIPO_COBRANCA',
  'CODIGO_COBRANCA',
  'IDENTIFICADOR',
  'DATA_EMISSAO',
  'DATA_VENCIMENTO',
  'VALOR',
  'STATUS',
]);
const MONEY = /^\d{1,10}\.\d{2}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

interface Violacao {
  razao: string;
  propriedade?: string;
  valor?: string;
}

/** Inter's `Problema`: {title, status, detail, violacoes}. */
class Problem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly violacoes?: Violacao[],
  ) {
    super(detail);
  }
}

// The titles and details of Inter's published examples (RequisicaoInvalidaExample1, AcessoNegadoExample1…).
const dadosInvalidos = (violacoes: Violacao[]) =>
  new Problem(
    400,
    'Dados inválidos.',
    'Verifique se os dados informados estão de acordo com a documentação disponibilizada e tente novamente.',
    violacoes,
  );
/** The fake's own wording of a refused operation on a charge (unconfirmed: Inter publishes only the 400 itself). */
const operacaoInvalida = (detail: string) => new Problem(400, 'Operação inválida.', detail);
const acessoNegado = (detail = 'Requisição de participante autenticado que viola alguma regra de autorização.') =>
  new Problem(403, 'Acesso Negado', detail);
/** Unconfirmed: the answer to a missing or expired token is not published; 401 is what OAuth2 resource servers send. */
const naoAutorizado = () => new Problem(401, 'Não autorizado', 'Token de acesso ausente, inválido ou expirado.');
const naoEncontrado = () => new Problem(404, 'Não Encontrado', 'Entidade não encontrada.');
const limiteExcedido = () =>
  new Problem(429, 'Limite de requisições excedido', 'O limite de chamadas por minuto foi atingido.');
const erroInterno = () => new Problem(500, 'Erro Interno', 'Ocorreu um erro não esperado. Tente novamente mais tarde.');
const servicoIndisponivel = () =>
  new Problem(
    503,
    'Serviço Indisponível',
    'Serviço não está disponível no momento. Serviço solicitado pode estar em manutenção ou fora da janela de funcionamento.',
  );

// ---------------------------------------------------------------------------------------------------------------
// Time, identifiers, documents

/** `YYYY-MM-DD` in Brasília. */
const brasiliaDate = (ms: number) => new Date(ms + BRASILIA_OFFSET_MS).toISOString().slice(0, 10);
/** Date and time in Brasília with its offset, e.g. 2026-11-28T14:30:08.000-03:00. */
const brasiliaDateTime = (ms: number) => `${new Date(ms + BRASILIA_OFFSET_MS).toISOString().slice(0, 23)}-03:00`;
const shiftDate = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

function isCalendarDate(value: string): boolean {
  if (!DATE.test(value)) return false;
  const time = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === value;
}

function randomText(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet.charAt(randomInt(alphabet.length));
  return out;
}

/** A minimal one-page PDF 1.4 with these lines of (ASCII) text in Helvetica. */
function smallPdf(lines: string[]): Buffer {
  const escape = (line: string) => line.replace(/[^\x20-\x7e]/g, '?').replace(/([\\()])/g, '\\$1');
  const content = `BT /F1 11 Tf 50 790 Td 14 TL ${lines.map((line) => `(${escape(line)}) '`).join(' ')} ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(pdf, 'latin1'));
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, 'latin1');
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, '0')} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

// ---------------------------------------------------------------------------------------------------------------
// Request bodies

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const shown = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : undefined);

class Violations {
  readonly list: Violacao[] = [];

  add(propriedade: string, razao: string, value?: unknown): void {
    const valor = shown(value);
    this.list.push(valor === undefined ? { razao, propriedade } : { razao, propriedade, valor });
  }

  /** A string of min..max characters, or undefined (with a violacao unless it was absent and optional). */
  text(
    body: Body,
    field: string,
    propriedade: string,
    min: number,
    max: number,
    required: boolean,
  ): string | undefined {
    const value = body[field];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || value.length < min || value.length > max) {
      const razao = value === undefined ? 'Campo obrigatório.' : `Deve ser um texto de ${min} a ${max} caracteres.`;
      this.add(propriedade, razao, value);
      return undefined;
    }
    return value;
  }
}

interface Pagador {
  cpfCnpj: string;
  tipoPessoa: 'FISICA' | 'JURIDICA';
  nome: string;
  endereco: string;
  bairro?: string;
  cidade: string;
  uf: string;
  cep: string;
  numero?: string;
  complemento?: string;
  email?: string;
  ddd?: string;
  telefone?: string;
}

interface IssueFields {
  seuNumero: string;
  cents: bigint;
  dataVencimento: string;
  numDiasAgenda: number;
  pagador: Pagador;
  mensagem?: Record<string, string>;
  formasRecebimento: string[];
}

/** EmitirCobrancaRequestBody with every violacao; `today` is Brasília's date, `hour` its hour. */
function readIssue(body: unknown, today: string, hour: number): IssueFields {
  const v = new Violations();
  if (!isObject(body)) throw dadosInvalidos([{ razao: 'Corpo da requisição inválido.' }]);
  const seuNumero = v.text(body, 'seuNumero', 'seuNumero', 1, 15, true);
  let cents: bigint | undefined;
  const valor = body.valorNominal;
  if (typeof valor !== 'number') v.add('valorNominal', 'Campo obrigatório e numérico.', shown(valor));
  else {
    cents = parseDecimal(valor, 2);
    if (cents === undefined) v.add('valorNominal', 'Deve ter no máximo duas casas decimais.', valor);
    else if (cents < 250n || cents > 9_999_999_999n) {
      v.add('valorNominal', 'Deve estar entre 2.5 e 99999999.99.', valor);
      cents = undefined;
    }
  }
  const due = body.dataVencimento;
  let dataVencimento: string | undefined;
  if (typeof due !== 'string' || !isCalendarDate(due)) {
    v.add('dataVencimento', 'Não foi possível converter o valor. Formato aceito: YYYY-MM-DD.', shown(due));
  } else if (due < today) v.add('dataVencimento', 'A data de vencimento não pode ser anterior à data atual.', due);
  else if (due === today && hour >= 20) {
    v.add('dataVencimento', 'Cobranças com vencimento para o mesmo dia só podem ser emitidas até às 19h59.', due);
  } else if (due > DUE_DATE_RANGE.last) v.add('dataVencimento', 'Data de vencimento fora do intervalo aceito.', due);
  else dataVencimento = due;
  const agenda = body.numDiasAgenda;
  if (typeof agenda !== 'number' || !Number.isInteger(agenda) || agenda < 0 || agenda > 60) {
    v.add('numDiasAgenda', 'Deve ser um inteiro de 0 a 60.', shown(agenda));
  }
  const pagador = readPagador(body.pagador, v);
  let mensagem: Record<string, string> | undefined;
  if (body.mensagem !== undefined) {
    if (!isObject(body.mensagem)) v.add('mensagem', 'Objeto inválido.');
    else {
      mensagem = {};
      for (const line of ['linha1', 'linha2', 'linha3', 'linha4', 'linha5']) {
        const value = v.text(body.mensagem, line, `mensagem.${line}`, 0, 78, false);
        if (value !== undefined) mensagem[line] = value;
      }
    }
  }
  let formasRecebimento = ['BOLETO', 'PIX'];
  const formas = body.formasRecebimento;
  if (formas !== undefined) {
    const known = ['BOLETO', 'PIX', 'SEM_FORMA_PAGAMENTO'];
    if (
      !Array.isArray(formas) ||
      formas.length === 0 ||
      !formas.every((f) => typeof f === 'string' && known.includes(f)) ||
      new Set(formas).size !== formas.length
    ) {
      v.add('formasRecebimento', 'Lista inválida de formas de recebimento.');
    } else if (formas.length === 1 && formas[0] === 'PIX') {
      v.add('formasRecebimento', 'Não é possível informar somente PIX como forma de recebimento.', 'PIX');
    } else formasRecebimento = formas as string[];
  }
  if (v.list.length > 0) throw dadosInvalidos(v.list);
  if (seuNumero === undefined || cents === undefined || dataVencimento === undefined || pagador === undefined) {
    throw dadosInvalidos(v.list);
  }
  return {
    seuNumero,
    cents,
    dataVencimento,
    numDiasAgenda: agenda as number,
    pagador,
    ...(mensagem === undefined ? {} : { mensagem }),
    formasRecebimento,
  };
}

function readPagador(value: unknown, v: Violations): Pagador | undefined {
  if (!isObject(value)) {
    v.add('pagador', 'Campo obrigatório.');
    return undefined;
  }
  const before = v.list.length;
  const cpfCnpj = v.text(value, 'cpfCnpj', 'pagador.cpfCnpj', 11, 18, true);
  const tipoPessoa = value.tipoPessoa;
  if (tipoPessoa !== 'FISICA' && tipoPessoa !== 'JURIDICA') {
    v.add('pagador.tipoPessoa', 'Deve ser FISICA ou JURIDICA.', shown(tipoPessoa));
  }
  if (cpfCnpj !== undefined) {
    const valid =
      (/^\d{11}$/.test(cpfCnpj) && isValidCpf(cpfCnpj) && tipoPessoa !== 'JURIDICA') ||
      (/^\d{14}$/.test(cpfCnpj) && isValidCnpj(cpfCnpj) && tipoPessoa !== 'FISICA');
    if (!valid) v.add('pagador.cpfCnpj', 'CPF/CNPJ inválido.', cpfCnpj);
  }
  const nome = v.text(value, 'nome', 'pagador.nome', 1, 100, true);
  const endereco = v.text(value, 'endereco', 'pagador.endereco', 1, 100, true);
  const cidade = v.text(value, 'cidade', 'pagador.cidade', 1, 60, true);
  const uf = value.uf;
  if (typeof uf !== 'string' || !UFS.has(uf)) v.add('pagador.uf', 'UF inválida.', shown(uf));
  const cep = value.cep;
  if (typeof cep !== 'string' || !/^\d{8}$/.test(cep)) v.add('pagador.cep', 'Deve ter 8 dígitos.', shown(cep));
  const optional: [keyof Pagador, number][] = [
    ['bairro', 60],
    ['numero', 10],
    ['complemento', 30],
    ['email', 50],
    ['ddd', 2],
    ['telefone', 9],
  ];
  const extras: Partial<Pagador> = {};
  for (const [field, max] of optional) {
    const text = v.text(value, field, `pagador.${field}`, 0, max, false);
    if (text !== undefined) (extras as Record<string, string>)[field] = text;
  }
  if (v.list.length > before) return undefined;
  return {
    cpfCnpj: cpfCnpj as string,
    tipoPessoa: tipoPessoa as Pagador['tipoPessoa'],
    nome: nome as string,
    endereco: endereco as string,
    cidade: cidade as string,
    uf: uf as string,
    cep: cep as string,
    ...extras,
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function recordedBody(raw: string, contentType: string | undefined): unknown {
  if (raw === '') return undefined;
  if (contentType?.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Routes and replies

interface Reply {
  status: number;
  body?: unknown;
  type?: string;
}

const ROUTES: { operation: InterOperation; method: string; pattern: RegExp }[] = [
  { operation: 'oauth', method: 'POST', pattern: /^\/oauth\/v2\/token$/ },
  { operation: 'list', method: 'GET', pattern: /^\/cobranca\/v3\/cobrancas$/ },
  { operation: 'issue', method: 'POST', pattern: /^\/cobranca\/v3\/cobrancas$/ },
  { operation: 'webhook-put', method: 'PUT', pattern: /^\/cobranca\/v3\/cobrancas\/webhook$/ },
  { operation: 'webhook-get', method: 'GET', pattern: /^\/cobranca\/v3\/cobrancas\/webhook$/ },
  { operation: 'webhook-delete', method: 'DELETE', pattern: /^\/cobranca\/v3\/cobrancas\/webhook$/ },
  { operation: 'get', method: 'GET', pattern: /^\/cobranca\/v3\/cobrancas\/([^/]+)$/ },
  { operation: 'pdf', method: 'GET', pattern: /^\/cobranca\/v3\/cobrancas\/([^/]+)\/pdf$/ },
  { operation: 'cancel', method: 'POST', pattern: /^\/cobranca\/v3\/cobrancas\/([^/]+)\/cancelar$/ },
  { operation: 'pay', method: 'POST', pattern: /^\/cobranca\/v3\/cobrancas\/([^/]+)\/pagar$/ },
];
const WRITE: ReadonlySet<InterOperation> = new Set(['issue', 'cancel', 'pay', 'webhook-put', 'webhook-delete']);

function matchRoute(
  method: string,
  path: string,
): { operation: InterOperation; param: string } | 'no-route' | 'no-method' {
  let known = false;
  for (const route of ROUTES) {
    const match = route.pattern.exec(path);
    if (match === null) continue;
    // /cobrancas/webhook is the webhook, never a charge id
    if (route.operation === 'get' && match[1] === 'webhook') continue;
    known = true;
    if (route.method !== method) continue;
    try {
      return { operation: route.operation, param: decodeURIComponent(match[1] ?? '') };
    } catch {
      return 'no-route';
    }
  }
  return known ? 'no-method' : 'no-route';
}

function errorReply(error: unknown): Reply {
  const problem = error instanceof Problem ? error : erroInterno();
  const body = {
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    ...(problem.violacoes === undefined ? {} : { violacoes: problem.violacoes }),
  };
  // Inter's reference gives its 400 (RequisicaoInvalida) as application/json, the other problems as problem+json.
  return {
    status: problem.status,
    body,
    type: problem.status === 400 ? 'application/json' : 'application/problem+json',
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The server

interface Meta {
  issuedAt: number;
  cents: bigint;
  numDiasAgenda: number;
  /** Brasília date of the payment (filtrarDataPor=PAGAMENTO) */
  paidOn?: string;
  formasRecebimento: string[];
}

class FakeInterServer implements FakeInter {
  url = '';
  readonly requests: InterRequest[] = [];
  readonly charges = new Map<string, any>();
  webhookUrl: string | undefined;
  readonly callbacks: InterCallback[] = [];
  private webhookCreated = '';
  private webhookUpdated = '';
  private readonly meta = new Map<string, Meta>();
  /** when each charge reached its situacao (the callback's dataHoraSituacao) */
  private readonly situacaoAt = new Map<string, number>();
  /** token → expiry and scopes */
  private readonly tokens = new Map<string, { expiresAt: number; scopes: Set<string> }>();
  private tokenCalls: number[] = [];
  /** duplicate key → when it was issued */
  private readonly issuedKeys = new Map<string, number>();
  private readonly failing = new Set<string>();
  private readonly holding = new Set<string>();
  /** seuNumero → held charge ids */
  private readonly held = new Map<string, string[]>();
  private nossoNumero = 0;
  private readonly faults = new Map<InterOperation, InterFault[]>();
  private readonly delays = new Map<InterOperation, number[]>();
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly pending = new Set<Promise<void>>();
  private readonly heldResponses = new Set<ServerResponse>();
  private readonly aborter = new AbortController();
  private closed = false;
  private readonly server: Server;
  private readonly callbackAgent: Agent;
  private readonly now: () => number;
  private readonly issueDelayMs: number;
  private readonly retryMs: readonly number[];
  private readonly allowHttpWebhook: boolean;
  private readonly grantedScopes: ReadonlySet<string>;
  private readonly tokenCallsPerMinute: number;

  constructor(options: FakeInterOptions) {
    this.now = options.now ?? Date.now;
    this.issueDelayMs = options.issueDelayMs ?? 50;
    this.retryMs = options.webhookRetryMs ?? [200, 300, 600, 1200];
    this.allowHttpWebhook = options.allowHttpWebhook ?? false;
    this.grantedScopes = new Set(options.grantedScopes ?? [SCOPE_READ, SCOPE_WRITE]);
    this.tokenCallsPerMinute = options.tokenCallsPerMinute ?? TOKEN_CALLS_PER_MINUTE;
    const key = readFileSync(fixture('server-key.pem'));
    const cert = readFileSync(fixture('server.pem'));
    const ca = readFileSync(INTER_TEST.caPath);
    // TLS 1.2 at most, so that a client certificate the fake refuses fails the handshake itself (under TLS 1.3 the
    // refusal only reaches the client after it has sent its request). Which versions Inter offers is unconfirmed.
    this.server = createServer(
      { key, cert, ca, requestCert: true, rejectUnauthorized: true, maxVersion: 'TLSv1.2' },
      (request, response) => {
        void this.handle(request, response);
      },
    );
    // Inter presents a client certificate of its own when it posts callbacks to https URLs.
    this.callbackAgent = new Agent({ connect: { ca, cert, key } });
  }

  async listen(): Promise<void> {
    const port = await new Promise<number>((resolve) =>
      this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as AddressInfo).port)),
    );
    this.url = `https://127.0.0.1:${port}`;
  }

  failNext(operation: InterOperation, fault: InterFault, times = 1): void {
    const queue = this.faults.get(operation) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.faults.set(operation, queue);
  }

  delayNext(operation: InterOperation, ms: number, times = 1): void {
    const queue = this.delays.get(operation) ?? [];
    for (let i = 0; i < times; i++) queue.push(ms);
    this.delays.set(operation, queue);
  }

  failIssue(seuNumero: string): void {
    this.failing.add(seuNumero);
  }

  holdIssue(seuNumero: string): void {
    this.holding.add(seuNumero);
  }

  releaseIssue(seuNumero: string): void {
    this.holding.delete(seuNumero);
    const ids = this.held.get(seuNumero) ?? [];
    this.held.delete(seuNumero);
    for (const id of ids) this.schedule(0, async () => this.finishIssue(id));
  }

  expireTokens(): void {
    this.tokens.clear();
  }

  async pay(id: string, options: InterPayOptions = {}): Promise<void> {
    const charge = this.charge(id);
    const situacao: string = charge.cobranca.situacao;
    if (!['A_RECEBER', 'ATRASADO', 'CANCELADO', 'EXPIRADO'].includes(situacao)) {
      throw new Error(`charge ${id} is ${situacao}`);
    }
    const meta = this.metaOf(id);
    const valor = options.valor ?? formatMinor(meta.cents, 2);
    if (!MONEY.test(valor)) throw new Error(`valor ${valor} is not \\d{1,10}\\.\\d{2}`);
    this.settle(id, options.pagarCom ?? 'BOLETO', valor);
    this.notify(id, options.callback ?? 'send');
  }

  expire(id: string): void {
    const charge = this.charge(id);
    const situacao: string = charge.cobranca.situacao;
    if (situacao !== 'A_RECEBER' && situacao !== 'ATRASADO') throw new Error(`charge ${id} is ${situacao}`);
    this.setSituacao(charge, 'EXPIRADO');
    this.notify(id, 'send');
  }

  async redeliver(index: number): Promise<number> {
    const callback = this.callbacks[index];
    if (callback === undefined) throw new Error(`no callback ${index}`);
    return this.post(callback.url, callback.body, callback.attempt);
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
    for (const response of this.heldResponses) response.destroy();
    this.heldResponses.clear();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    await this.callbackAgent.close();
  }

  // --- HTTP

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const target = new URL(request.url ?? '/', 'https://inter.local');
    const raw = await readBody(request);
    const method = request.method ?? 'GET';
    const route = matchRoute(method, target.pathname);
    if (route === 'no-route') return this.send(response, errorReply(naoEncontrado()));
    if (route === 'no-method') {
      return this.send(response, errorReply(new Problem(405, 'Método não permitido', `${method} ${target.pathname}`)));
    }
    const record: InterRequest = {
      operation: route.operation,
      method,
      path: target.pathname + target.search,
      body: recordedBody(raw, request.headers['content-type']),
      status: 0,
      at: this.now(),
    };
    this.requests.push(record);
    const fault = this.faults.get(route.operation)?.shift();
    if (fault === 'reset') return void request.socket.destroy();
    if (fault === 'timeout-before') return this.hold(response);
    if (fault === 'server-error' || fault === 'unavailable' || fault === 'invalid-token') {
      const problem =
        fault === 'server-error' ? erroInterno() : fault === 'unavailable' ? servicoIndisponivel() : naoAutorizado();
      const reply = errorReply(problem);
      record.status = reply.status;
      return this.send(response, reply);
    }
    const delay = this.delays.get(route.operation)?.shift();
    if (delay !== undefined) {
      this.heldResponses.add(response);
      await this.wait(delay);
      this.heldResponses.delete(response);
      if (this.closed) return void response.destroy();
    }
    const reply = this.process(route.operation, route.param, request, target.searchParams, raw);
    if (fault === 'timeout-after') return this.hold(response);
    record.status = reply.status;
    this.send(response, reply);
  }

  private process(
    operation: InterOperation,
    id: string,
    request: IncomingMessage,
    query: URLSearchParams,
    raw: string,
  ): Reply {
    try {
      if (operation === 'oauth') return this.issueToken(request, raw);
      this.authorize(request, operation);
      const json = () => {
        try {
          return JSON.parse(raw) as unknown;
        } catch {
          throw dadosInvalidos([{ razao: 'O corpo da requisição não é um JSON válido.' }]);
        }
      };
      switch (operation) {
        case 'issue':
          return this.issue(json());
        case 'get':
          return { status: 200, body: this.view(id) };
        case 'list':
          return this.list(query);
        case 'cancel':
          return this.cancel(id, json());
        case 'pdf':
          return this.pdf(id);
        case 'pay':
          return this.pagar(id, json());
        case 'webhook-put':
          return this.putWebhook(json());
        case 'webhook-get':
          if (this.webhookUrl === undefined) throw naoEncontrado();
          return {
            status: 200,
            body: { webhookUrl: this.webhookUrl, criacao: this.webhookCreated, atualizacao: this.webhookUpdated },
          };
        case 'webhook-delete':
          if (this.webhookUrl === undefined) throw naoEncontrado();
          this.webhookUrl = undefined;
          return { status: 204 };
      }
    } catch (error) {
      return errorReply(error);
    }
  }

  private send(response: ServerResponse, reply: Reply): void {
    if (response.destroyed) return;
    if (reply.body === undefined) {
      response.writeHead(reply.status).end();
      return;
    }
    response
      .writeHead(reply.status, { 'content-type': reply.type ?? 'application/json' })
      .end(JSON.stringify(reply.body));
  }

  private hold(response: ServerResponse): void {
    this.heldResponses.add(response);
    response.on('close', () => this.heldResponses.delete(response));
  }

  // --- OAuth

  private issueToken(request: IncomingMessage, raw: string): Reply {
    const now = this.now();
    this.tokenCalls = this.tokenCalls.filter((at) => at > now - 60_000);
    this.tokenCalls.push(now);
    if (this.tokenCalls.length > this.tokenCallsPerMinute) throw limiteExcedido();
    if (!(request.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) {
      throw new Problem(400, 'Formato inválido', 'O corpo deve ser application/x-www-form-urlencoded.');
    }
    const form = new URLSearchParams(raw);
    const v = new Violations();
    for (const field of ['client_id', 'client_secret', 'grant_type', 'scope']) {
      if ((form.get(field) ?? '') === '') v.add(field, 'Campo obrigatório.');
    }
    if (v.list.length > 0) throw new Problem(400, 'Formato inválido', 'Requisição inválida.', v.list);
    if (form.get('grant_type') !== 'client_credentials') {
      throw new Problem(400, 'Formato inválido', 'grant_type não suportado.', [
        { razao: 'Deve ser client_credentials.', propriedade: 'grant_type' },
      ]);
    }
    if (form.get('client_id') !== INTER_TEST.clientId || form.get('client_secret') !== INTER_TEST.clientSecret) {
      throw acessoNegado('Credenciais da aplicação inválidas.');
    }
    const asked = (form.get('scope') ?? '').split(/\s+/).filter((scope) => scope !== '');
    const scopes = new Set(asked.filter((scope) => this.grantedScopes.has(scope)));
    if (scopes.size === 0) throw acessoNegado('Nenhum dos escopos pedidos foi concedido à aplicação.');
    const token = randomUUID();
    this.tokens.set(token, { expiresAt: now + TOKEN_TTL_SECONDS * 1000, scopes });
    return {
      status: 200,
      body: { access_token: token, token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS, scope: [...scopes].join(' ') },
    };
  }

  private authorize(request: IncomingMessage, operation: InterOperation): void {
    const token = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const known = token === undefined ? undefined : this.tokens.get(token);
    if (known === undefined || this.now() >= known.expiresAt) throw naoAutorizado();
    const needed = WRITE.has(operation) ? SCOPE_WRITE : SCOPE_READ;
    if (!known.scopes.has(needed)) throw acessoNegado(`O token não tem o escopo ${needed}.`);
    const account = request.headers['x-conta-corrente'];
    if (account !== undefined && account !== INTER_TEST.account) {
      throw acessoNegado('Conta corrente não pertence à aplicação.');
    }
  }

  // --- Charges

  private charge(id: string): any {
    const charge = this.charges.get(id);
    if (charge === undefined) throw new Error(`no charge ${id}`);
    return charge;
  }

  private metaOf(id: string): Meta {
    const meta = this.meta.get(id);
    if (meta === undefined) throw new Error(`no charge ${id}`);
    return meta;
  }

  /** The charge as it stands now: A_RECEBER turns ATRASADO the day after its due date (no callback: none exists). */
  private refresh(charge: any): void {
    const today = brasiliaDate(this.now());
    if (charge.cobranca.situacao === 'A_RECEBER' && today > charge.cobranca.dataVencimento) {
      charge.cobranca.situacao = 'ATRASADO';
      charge.cobranca.dataSituacao = shiftDate(charge.cobranca.dataVencimento, 1);
    }
  }

  private view(id: string): any {
    const charge = this.charges.get(id);
    if (charge === undefined) throw naoEncontrado();
    this.refresh(charge);
    return structuredClone(charge);
  }

  private setSituacao(charge: any, situacao: string): void {
    charge.cobranca.situacao = situacao;
    charge.cobranca.dataSituacao = brasiliaDate(this.now());
    this.situacaoAt.set(charge.cobranca.codigoSolicitacao, this.now());
  }

  private issue(body: unknown): Reply {
    const now = this.now();
    const fields = readIssue(body, brasiliaDate(now), new Date(now + BRASILIA_OFFSET_MS).getUTCHours());
    const key = [fields.seuNumero, fields.cents, fields.dataVencimento, fields.pagador.cpfCnpj].join('|');
    const earlier = this.issuedKeys.get(key);
    if (earlier !== undefined && now - earlier < DUPLICATE_WINDOW_MS) {
      // Inter documents the rule, not its answer (unconfirmed): a 400 problem naming the four fields.
      throw dadosInvalidos(
        ['seuNumero', 'valorNominal', 'dataVencimento', 'pagador.cpfCnpj'].map((propriedade) => ({
          razao:
            'Já existe uma cobrança com os mesmos seuNumero, valorNominal, dataVencimento e cpfCnpj emitida há menos de 30 minutos.',
          propriedade,
        })),
      );
    }
    this.issuedKeys.set(key, now);
    const id = randomUUID();
    const today = brasiliaDate(now);
    this.charges.set(id, {
      cobranca: {
        codigoSolicitacao: id,
        seuNumero: fields.seuNumero,
        dataEmissao: today,
        dataVencimento: fields.dataVencimento,
        valorNominal: Number(formatMinor(fields.cents, 2)),
        tipoCobranca: 'SIMPLES',
        situacao: 'EM_PROCESSAMENTO',
        dataSituacao: today,
        arquivada: false,
        descontos: [],
        pagador: { ...fields.pagador },
        ...(fields.mensagem === undefined ? {} : { mensagem: fields.mensagem }),
      },
    });
    this.situacaoAt.set(id, now);
    this.meta.set(id, {
      issuedAt: now,
      cents: fields.cents,
      numDiasAgenda: fields.numDiasAgenda,
      formasRecebimento: fields.formasRecebimento,
    });
    this.schedule(this.issueDelayMs, async () => this.finishIssue(id));
    return { status: 200, body: { codigoSolicitacao: id } };
  }

  /** EM_PROCESSAMENTO ends: held, FALHA_EMISSAO, or A_RECEBER with the boleto (bank 077) and its Pix; then a callback. */
  private finishIssue(id: string): void {
    const charge = this.charge(id);
    if (charge.cobranca.situacao !== 'EM_PROCESSAMENTO') return;
    const seuNumero: string = charge.cobranca.seuNumero;
    if (this.holding.has(seuNumero)) {
      this.held.set(seuNumero, [...(this.held.get(seuNumero) ?? []), id]);
      return;
    }
    if (this.failing.delete(seuNumero)) {
      this.setSituacao(charge, 'FALHA_EMISSAO');
      this.notify(id, 'send');
      return;
    }
    const meta = this.metaOf(id);
    const nossoNumero = String(++this.nossoNumero).padStart(11, '0');
    const barcode = boletoBarcode({
      bankCode: '077',
      dueDate: charge.cobranca.dataVencimento,
      amountCents: meta.cents,
      // agência 0001, carteira 112, nosso número, then the account's last seven digits (Inter's layout is unpublished)
      freeField: `0001112${nossoNumero}${INTER_TEST.account.padStart(7, '0').slice(-7)}`,
    });
    charge.boleto = { nossoNumero, codigoBarras: barcode, linhaDigitavel: linhaDigitavel(barcode) };
    if (meta.formasRecebimento.includes('PIX')) {
      charge.pix = {
        txid: randomText(ALNUM, 32),
        pixCopiaECola: dynamicBrCode({
          locationUrl: `pix.fake-inter.test/cobv/${randomUUID().replaceAll('-', '')}`,
          merchantName: 'CASHGATE TESTE',
          merchantCity: 'SAO PAULO',
          amount: formatMinor(meta.cents, 2),
        }),
      };
    }
    this.setSituacao(charge, 'A_RECEBER');
    this.notify(id, 'send');
  }

  private settle(id: string, origem: 'BOLETO' | 'PIX', valor: string): void {
    const charge = this.charge(id);
    this.setSituacao(charge, 'RECEBIDO');
    charge.cobranca.valorTotalRecebido = valor;
    charge.cobranca.origemRecebimento = origem;
    this.metaOf(id).paidOn = brasiliaDate(this.now());
  }

  private cancel(id: string, body: unknown): Reply {
    const charge = this.charges.get(id);
    if (charge === undefined) throw naoEncontrado();
    this.refresh(charge);
    const v = new Violations();
    const motivo = isObject(body) ? v.text(body, 'motivoCancelamento', 'motivoCancelamento', 1, 50, true) : undefined;
    if (!isObject(body)) v.add('motivoCancelamento', 'Campo obrigatório.');
    if (v.list.length > 0 || motivo === undefined) throw dadosInvalidos(v.list);
    const situacao: string = charge.cobranca.situacao;
    if (situacao !== 'A_RECEBER' && situacao !== 'ATRASADO') {
      throw operacaoInvalida(`A cobrança está ${situacao} e não pode ser cancelada.`);
    }
    this.setSituacao(charge, 'CANCELADO');
    charge.cobranca.motivoCancelamento = motivo;
    this.notify(id, 'send');
    return { status: 202 };
  }

  /** Sandbox only: `POST …/pagar {pagarCom}` → 204, then the callback. */
  private pagar(id: string, body: unknown): Reply {
    const charge = this.charges.get(id);
    if (charge === undefined) throw naoEncontrado();
    this.refresh(charge);
    const pagarCom = isObject(body) ? body.pagarCom : undefined;
    if (pagarCom !== 'BOLETO' && pagarCom !== 'PIX') {
      throw dadosInvalidos([
        {
          razao: 'Deve ser BOLETO ou PIX.',
          propriedade: 'pagarCom',
          ...(typeof pagarCom === 'string' ? { valor: pagarCom } : {}),
        },
      ]);
    }
    const situacao: string = charge.cobranca.situacao;
    if (situacao !== 'A_RECEBER' && situacao !== 'ATRASADO') {
      throw operacaoInvalida(`A cobrança está ${situacao} e não pode ser paga.`);
    }
    if (pagarCom === 'PIX' && charge.pix === undefined) throw operacaoInvalida('A cobrança não tem Pix.');
    this.settle(id, pagarCom, formatMinor(this.metaOf(id).cents, 2));
    this.notify(id, 'send');
    return { status: 204 };
  }

  private pdf(id: string): Reply {
    const charge = this.view(id);
    if (charge.boleto === undefined)
      throw operacaoInvalida(`A cobrança está ${charge.cobranca.situacao} e não tem boleto.`);
    const lines = [
      'Banco Inter S.A. 077',
      `Linha digitavel: ${formatLinhaDigitavel(charge.boleto.linhaDigitavel)}`,
      charge.boleto.linhaDigitavel,
      `Vencimento: ${charge.cobranca.dataVencimento}`,
      `Valor: R$ ${formatMinor(this.metaOf(id).cents, 2)}`,
      `Pagador: ${charge.cobranca.pagador.nome}`,
      `Nosso numero: ${charge.boleto.nossoNumero}`,
    ];
    return { status: 200, body: { pdf: smallPdf(lines).toString('base64') } };
  }

  private list(query: URLSearchParams): Reply {
    const v = new Violations();
    const date = (name: string): string => {
      const value = query.get(name);
      if (value === null || !isCalendarDate(value))
        v.add(name, 'Não foi possível converter o valor.', value ?? undefined);
      return value ?? '';
    };
    const whole = (name: string, min: number, max: number, fallback: number): number => {
      const value = query.get(name);
      if (value === null) return fallback;
      const n = /^\d+$/.test(value) ? Number(value) : NaN;
      if (!(n >= min && n <= max)) v.add(name, 'Não foi possível converter o valor.', value);
      return n;
    };
    const oneOf = (name: string, values: ReadonlySet<string>, fallback: string | undefined): string | undefined => {
      const value = query.get(name);
      if (value === null) return fallback;
      if (!values.has(value)) v.add(name, 'Não foi possível converter o valor.', value);
      return value;
    };
    const inicial = date('dataInicial');
    const final = date('dataFinal');
    if (inicial !== '' && final !== '' && final < inicial)
      v.add('dataFinal', 'A data final é anterior à data inicial.', final);
    const por = oneOf('filtrarDataPor', new Set(['VENCIMENTO', 'EMISSAO', 'PAGAMENTO']), 'VENCIMENTO');
    const situacao = oneOf('situacao', SITUACOES, undefined);
    const tipoCobranca = oneOf('tipoCobranca', new Set(['SIMPLES', 'PARCELADO', 'RECORRENTE']), undefined);
    const ordenarPor = oneOf('ordenarPor', ORDENAR_POR, 'PESSOA_PAGADORA');
    const tipoOrdenacao = oneOf('tipoOrdenacao', new Set(['ASC', 'DESC']), 'ASC');
    const size = whole('paginacao.itensPorPagina', 1, 1000, 100);
    const page = whole('paginacao.paginaAtual', 0, Number.MAX_SAFE_INTEGER, 0);
    const seuNumero = query.get('seuNumero');
    if (seuNumero !== null && seuNumero.length > 15) v.add('seuNumero', 'Deve ter no máximo 15 caracteres.', seuNumero);
    const documento = query.get('cpfCnpjPessoaPagadora');
    const nome = query.get('pessoaPagadora')?.toLowerCase();
    if (v.list.length > 0) throw dadosInvalidos(v.list);
    const dateOf = (id: string, charge: any): string | undefined =>
      por === 'EMISSAO'
        ? charge.cobranca.dataEmissao
        : por === 'PAGAMENTO'
          ? this.meta.get(id)?.paidOn
          : charge.cobranca.dataVencimento;
    const found: [string, any][] = [];
    for (const [id, charge] of this.charges) {
      this.refresh(charge);
      const on = dateOf(id, charge);
      if (on === undefined || on < inicial || on > final) continue;
      if (situacao !== undefined && charge.cobranca.situacao !== situacao) continue;
      if (tipoCobranca !== undefined && charge.cobranca.tipoCobranca !== tipoCobranca) continue;
      if (seuNumero !== null && charge.cobranca.seuNumero !== seuNumero) continue;
      if (documento !== null && charge.cobranca.pagador.cpfCnpj !== documento) continue;
      if (nome !== undefined && !String(charge.cobranca.pagador.nome).toLowerCase().includes(nome)) continue;
      found.push([id, charge]);
    }
    const key = (id: string, charge: any): string | bigint => {
      const c = charge.cobranca;
      switch (ordenarPor) {
        case 'TIPO_COBRANCA':
          return c.tipoCobranca;
        case 'CODIGO_COBRANCA':
          return c.codigoSolicitacao;
        case 'IDENTIFICADOR':
          return c.seuNumero;
        case 'DATA_EMISSAO':
          return c.dataEmissao;
        case 'DATA_VENCIMENTO':
          return c.dataVencimento;
        case 'VALOR':
          return this.metaOf(id).cents;
        case 'STATUS':
          return c.situacao;
        default:
          return c.pagador.nome;
      }
    };
    const direction = tipoOrdenacao === 'DESC' ? -1 : 1;
    found.sort(([a, ca], [b, cb]) => {
      const ka = key(a, ca);
      const kb = key(b, cb);
      const order = ka < kb ? -1 : ka > kb ? 1 : this.metaOf(a).issuedAt - this.metaOf(b).issuedAt;
      return order * direction;
    });
    const totalPaginas = Math.max(1, Math.ceil(found.length / size));
    const items = found.slice(page * size, page * size + size).map(([id, charge]) => this.listItem(id, charge));
    return {
      status: 200,
      body: {
        totalPaginas,
        totalElementos: found.length,
        tamanhoPagina: size,
        primeiraPagina: page === 0,
        ultimaPagina: page >= totalPaginas - 1,
        numeroDeElementos: items.length,
        cobrancas: items,
      },
    };
  }

  /** A charge as the listing shows it: valorNominal as text, the payer by name and document only. */
  private listItem(id: string, charge: any): any {
    const c = charge.cobranca;
    return structuredClone({
      cobranca: {
        codigoSolicitacao: c.codigoSolicitacao,
        seuNumero: c.seuNumero,
        situacao: c.situacao,
        dataSituacao: c.dataSituacao,
        dataEmissao: c.dataEmissao,
        dataVencimento: c.dataVencimento,
        valorNominal: formatMinor(this.metaOf(id).cents, 2),
        ...(c.valorTotalRecebido === undefined ? {} : { valorTotalRecebido: c.valorTotalRecebido }),
        ...(c.origemRecebimento === undefined ? {} : { origemRecebimento: c.origemRecebimento }),
        tipoCobranca: c.tipoCobranca,
        pagador: { nome: c.pagador.nome, cpfCnpj: c.pagador.cpfCnpj },
      },
      ...(charge.boleto === undefined ? {} : { boleto: charge.boleto }),
      ...(charge.pix === undefined ? {} : { pix: charge.pix }),
    });
  }

  // --- Webhook and callbacks

  private putWebhook(body: unknown): Reply {
    const url = isObject(body) ? body.webhookUrl : undefined;
    const https = typeof url === 'string' && /^https:\/\/\S*$/.test(url) && URL.canParse(url);
    const http = this.allowHttpWebhook && typeof url === 'string' && /^http:\/\/\S*$/.test(url) && URL.canParse(url);
    if (typeof url !== 'string' || !(https || http)) {
      throw dadosInvalidos([
        {
          razao: 'Deve iniciar obrigatoriamente com https://',
          propriedade: 'webhookUrl',
          ...(typeof url === 'string' ? { valor: url } : {}),
        },
      ]);
    }
    const now = new Date(this.now()).toISOString();
    if (this.webhookUrl === undefined) this.webhookCreated = now;
    this.webhookUpdated = now;
    this.webhookUrl = url;
    return { status: 204 };
  }

  /** The CallbackCobranca of a charge as it stands. */
  private callbackItem(id: string): object {
    const charge = this.charge(id);
    const c = charge.cobranca;
    return {
      codigoSolicitacao: c.codigoSolicitacao,
      seuNumero: c.seuNumero,
      situacao: c.situacao,
      dataHoraSituacao: brasiliaDateTime(this.situacaoAt.get(id) ?? this.now()),
      ...(c.valorTotalRecebido === undefined ? {} : { valorTotalRecebido: c.valorTotalRecebido }),
      ...(c.origemRecebimento === undefined ? {} : { origemRecebimento: c.origemRecebimento }),
      ...(charge.boleto === undefined
        ? {}
        : {
            nossoNumero: charge.boleto.nossoNumero,
            codigoBarras: charge.boleto.codigoBarras,
            linhaDigitavel: charge.boleto.linhaDigitavel,
          }),
      ...(charge.pix === undefined ? {} : { txid: charge.pix.txid, pixCopiaECola: charge.pix.pixCopiaECola }),
    };
  }

  /** The charge's callback, its body taken now, to the webhook registered now (none without one). */
  private notify(id: string, mode: CallbackMode): void {
    const url = this.webhookUrl;
    if (url === undefined || mode === 'skip') return;
    const body = [this.callbackItem(id)];
    const times = mode === 'twice' ? 2 : 1;
    this.schedule(0, async () => {
      for (let i = 0; i < times; i++) await this.deliver(url, body);
    });
  }

  /** POSTs the array; an answer other than 2xx, or none, is retried after each of retryMs. */
  private async deliver(url: string, body: object[]): Promise<void> {
    for (let attempt = 1; attempt <= this.retryMs.length + 1; attempt++) {
      if (attempt > 1) await this.wait(this.retryMs[attempt - 2] ?? 0);
      if (this.closed) return;
      const status = await this.post(url, body, attempt);
      if (status >= 200 && status < 300) return;
    }
  }

  private async post(url: string, body: unknown, attempt: number): Promise<number> {
    const callback: InterCallback = { url, body: structuredClone(body), status: 0, attempt, at: this.now() };
    this.callbacks.push(callback);
    try {
      const response = await undiciRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-conta-corrente': INTER_TEST.account },
        body: JSON.stringify(body),
        dispatcher: this.callbackAgent,
        signal: AbortSignal.any([this.aborter.signal, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]),
      });
      await response.body.dump();
      callback.status = response.statusCode;
    } catch {
      callback.status = 0;
    }
    return callback.status;
  }

  // --- Scheduled work

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

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.set(timer, resolve);
    });
  }
}
