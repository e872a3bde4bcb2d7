import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { Agent, request } from 'undici';
import { generateCpf } from '../src/brazil/documents.js';
import { isValidBarcode, isValidLinhaDigitavel, linhaDigitavel } from '../src/rails/boleto/boleto.js';
import { InterIssuer, type InterConfig } from '../src/rails/boleto/inter-client.js';
import { IssuerError, type BoletoIssueRequest } from '../src/rails/boleto/issuer.js';
import { parseBrCode } from '../src/rails/pix/br-code.js';
import { INTER_TEST, startFakeInter, type FakeInter } from './support/fake-inter.js';
import { pdfText } from './support/pdf.js';
import { startReceiver, until, type CallbackReceiver } from './support/receiver.js';

const PEM = {
  cert: readFileSync(INTER_TEST.certPath, 'utf8'),
  key: readFileSync(INTER_TEST.keyPath, 'utf8'),
  ca: readFileSync(INTER_TEST.caPath, 'utf8'),
};

function config(inter: FakeInter, overrides: Partial<InterConfig> = {}): InterConfig {
  return {
    baseUrl: inter.url,
    clientId: INTER_TEST.clientId,
    clientSecret: INTER_TEST.clientSecret,
    certPem: PEM.cert,
    keyPem: PEM.key,
    caPem: PEM.ca,
    account: INTER_TEST.account,
    timeoutMs: 3_000,
    ...overrides,
  };
}

/** `YYYY-MM-DD` in Brasília, `days` from now. */
function brasiliaDay(days: number, now = Date.now()): string {
  return new Date(now - 3 * 3_600_000 + days * 86_400_000).toISOString().slice(0, 10);
}

let sequence = 0;
let digit = 0;
const cpf = generateCpf(() => (digit++ * 3) % 10);

function issueRequest(overrides: Partial<BoletoIssueRequest> = {}): BoletoIssueRequest {
  sequence++;
  return {
    orderId: `order-${sequence}`,
    reference: `CG${String(sequence).padStart(6, '0')}`,
    amount: 987_654_321n,
    dueDate: brasiliaDay(5),
    payer: {
      type: 'CPF',
      document: cpf,
      name: 'Maria da Silva',
      address: {
        street: 'Avenida Brasil',
        number: '1200',
        district: 'Centro',
        city: 'Belo Horizonte',
        uf: 'MG',
        cep: '30110000',
      },
    },
    description: 'Pedido 1234 — assinatura anual',
    notificationUrl: 'http://127.0.0.1:1/callbacks/inter',
    ...overrides,
  };
}

/** The IssuerError a call throws (fails the test when it does not throw one). */
async function issuerError(call: Promise<unknown>): Promise<IssuerError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof IssuerError, `an IssuerError, not ${String(error)}`);
    return error;
  }
  assert.fail('the call did not throw');
}

/** A raw call to the fake, outside the client (for what the client itself would refuse to send). */
async function rawCall(
  inter: FakeInter,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const agent = new Agent({ connect: { cert: PEM.cert, key: PEM.key, ca: PEM.ca } });
  try {
    const form = new URLSearchParams({
      client_id: INTER_TEST.clientId,
      client_secret: INTER_TEST.clientSecret,
      grant_type: 'client_credentials',
      scope: 'boleto-cobranca.read boleto-cobranca.write',
    }).toString();
    const token = await request(`${inter.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      dispatcher: agent,
    });
    const { access_token } = (await token.body.json()) as { access_token: string };
    const answer = await request(`${inter.url}${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      dispatcher: agent,
    });
    const text = await answer.body.text();
    return { status: answer.statusCode, body: text === '' ? undefined : JSON.parse(text) };
  } finally {
    await agent.close();
  }
}

const count = (inter: FakeInter, operation: string) => inter.requests.filter((r) => r.operation === operation).length;

describe('Banco Inter API Cobrança v3 client', () => {
  let inter: FakeInter;
  let client: InterIssuer;
  let registry: Registry;
  let receiver: CallbackReceiver;

  before(async () => {
    // several clients share this fake: its token limit is raised (the limit itself is tested on a fake of its own)
    inter = await startFakeInter({
      allowHttpWebhook: true,
      webhookRetryMs: [50, 50, 50, 50],
      tokenCallsPerMinute: 100,
    });
    registry = new Registry();
    client = new InterIssuer(config(inter), Date.now, registry);
    receiver = await startReceiver((got, index) =>
      got.path === '/flaky' && index === 0 ? { status: 500 } : { status: 200 },
    );
  });

  after(async () => {
    await client.close();
    await inter.close();
    await receiver.close();
  });

  it('issues (processing, the amount a two-decimal JSON number), then get after the delay answers it open', async () => {
    const asked = issueRequest();
    const issued = await client.issue(asked);
    assert.equal(issued.value.state, 'processing');
    assert.equal(issued.value.status, 'EM_PROCESSAMENTO');
    assert.equal(issued.value.reference, asked.reference);
    assert.equal(issued.value.linhaDigitavel, undefined);
    assert.match(issued.value.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      issued.exchanges.map((e) => [e.operation, e.httpStatus, e.code]),
      [['issue', 200, 'ok']],
    );
    const sent = inter.requests.findLast((r) => r.operation === 'issue');
    assert.ok(sent);
    assert.equal(sent.body.valorNominal, 9876543.21);
    assert.equal(sent.body.seuNumero, asked.reference);
    assert.equal(sent.body.numDiasAgenda, 0);
    assert.deepEqual(sent.body.formasRecebimento, ['BOLETO', 'PIX']);
    assert.deepEqual(sent.body.mensagem, { linha1: 'Pedido 1234 — assinatura anual' });
    assert.deepEqual(sent.body.pagador, {
      cpfCnpj: cpf,
      tipoPessoa: 'FISICA',
      nome: 'Maria da Silva',
      endereco: 'Avenida Brasil',
      numero: '1200',
      bairro: 'Centro',
      cidade: 'Belo Horizonte',
      uf: 'MG',
      cep: '30110000',
    });

    const early = await client.get(issued.value.id);
    assert.equal(early.value.state, 'processing');
    await inter.idle();
    const got = await client.get(issued.value.id);
    const charge = got.value;
    assert.equal(charge.state, 'open');
    assert.equal(charge.status, 'A_RECEBER');
    assert.equal(charge.amount, 987_654_321n);
    assert.equal(charge.dueDate, asked.dueDate);
    assert.equal(charge.reference, asked.reference);
    assert.ok(charge.barcode !== undefined && isValidBarcode(charge.barcode), `valid barcode ${charge.barcode}`);
    assert.equal(charge.barcode.slice(0, 3), '077');
    assert.match(charge.linhaDigitavel ?? '', /^\d{47}$/);
    assert.equal(charge.linhaDigitavel, linhaDigitavel(charge.barcode));
    assert.ok(isValidLinhaDigitavel(charge.linhaDigitavel));
    assert.match(charge.nossoNumero ?? '', /^\d{11}$/);
    assert.ok(charge.pixCode !== undefined && parseBrCode(charge.pixCode).crcValid);
    assert.equal(charge.paid, undefined);
    assert.deepEqual(
      got.exchanges.map((e) => [e.operation, e.method, e.path, e.httpStatus]),
      [['get', 'GET', `/cobranca/v3/cobrancas/${charge.id}`, 200]],
    );
  });

  it('answers FALHA_EMISSAO as failed', async () => {
    const asked = issueRequest();
    inter.failIssue(asked.reference);
    const issued = await client.issue(asked);
    await inter.idle();
    const { value } = await client.get(issued.value.id);
    assert.equal(value.state, 'failed');
    assert.equal(value.status, 'FALHA_EMISSAO');
    assert.equal(value.linhaDigitavel, undefined);
  });

  it('stays processing while Inter holds the issue, and opens once released', async () => {
    const asked = issueRequest();
    inter.holdIssue(asked.reference);
    const issued = await client.issue(asked);
    await inter.idle();
    assert.equal((await client.get(issued.value.id)).value.state, 'processing');
    inter.releaseIssue(asked.reference);
    await inter.idle();
    assert.equal((await client.get(issued.value.id)).value.state, 'open');
  });

  it('finds a charge by its seuNumero over the due date window, and answers undefined for none', async () => {
    const asked = issueRequest();
    const issued = await client.issue(asked);
    await inter.idle();
    const found = await client.find(asked);
    assert.ok(found.value);
    assert.equal(found.value.id, issued.value.id);
    assert.equal(found.value.state, 'open');
    assert.ok(found.value.linhaDigitavel !== undefined);
    assert.equal(found.exchanges[0]?.operation, 'find');
    const listed = new URL(`https://x${found.exchanges[0].path}`).searchParams;
    assert.equal(listed.get('seuNumero'), asked.reference);
    assert.equal(listed.get('filtrarDataPor'), 'VENCIMENTO');
    assert.ok((listed.get('dataInicial') ?? '') <= asked.dueDate && asked.dueDate <= (listed.get('dataFinal') ?? ''));
    assert.equal(listed.get('paginacao.paginaAtual'), '0');

    const none = await client.find({ ...issueRequest(), dueDate: asked.dueDate });
    assert.equal(none.value, undefined);
    assert.equal(none.exchanges.length, 1);
  });

  it('prefers the registered charge to a failed attempt with the same seuNumero', async () => {
    const asked = issueRequest();
    inter.failIssue(asked.reference);
    await client.issue(asked);
    await inter.idle();
    const failedOnly = await client.find(asked);
    assert.equal(failedOnly.value?.state, 'failed');
    // failIssue names one issue: the next attempt (another amount, so not a duplicate) is registered
    const again = await client.issue({ ...asked, amount: asked.amount + 1n });
    await inter.idle();
    const found = await client.find(asked);
    assert.ok(found.value);
    assert.equal(found.value.id, again.value.id);
    assert.equal(found.value.state, 'open');
  });

  it('cancels (202, the reason cut to 50 characters); a second cancel is invalid', async () => {
    const issued = await client.issue(issueRequest());
    await inter.idle();
    const reason = 'The order expired before the payer paid it; written off by Cashgate';
    const cancelled = await client.cancel(issued.value.id, reason);
    assert.deepEqual(
      cancelled.exchanges.map((e) => [e.operation, e.httpStatus]),
      [['cancel', 202]],
    );
    assert.equal(
      inter.requests.findLast((r) => r.operation === 'cancel')?.body.motivoCancelamento,
      reason.slice(0, 50),
    );
    const { value } = await client.get(issued.value.id);
    assert.equal(value.state, 'cancelled');
    assert.equal(value.status, 'CANCELADO');
    const error = await issuerError(client.cancel(issued.value.id, 'again'));
    assert.equal(error.kind, 'invalid');
    assert.equal(error.exchange.httpStatus, 400);
  });

  it('fetches the PDF: bytes starting %PDF- that hold the linha digitável', async () => {
    const issued = await client.issue(issueRequest());
    await inter.idle();
    const charge = (await client.get(issued.value.id)).value;
    const pdf = await client.pdf({ id: charge.id, pdfUrl: undefined });
    assert.equal(pdf.value.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.ok((await pdfText(pdf.value)).includes(charge.linhaDigitavel ?? '?'), 'the PDF holds the linha digitável');
    assert.equal(pdf.exchanges[0]?.operation, 'pdf');
  });

  it('lists what was paid between two instants, with the amount received exactly and how it was paid', async () => {
    const paidOne = await client.issue(issueRequest({ amount: 1234n }));
    const unpaid = await client.issue(issueRequest());
    await inter.idle();
    await inter.pay(paidOne.value.id, { pagarCom: 'PIX', valor: '12.30' });
    await inter.idle();
    const { value, exchanges } = await client.paidBetween(Date.now() - 86_400_000, Date.now());
    const mine = value.find((c) => c.id === paidOne.value.id);
    assert.ok(mine, 'the paid charge is listed');
    assert.equal(mine.state, 'paid');
    assert.deepEqual(mine.paid, { amount: 1230n, at: brasiliaDay(0), method: 'PIX', amountStated: true });
    assert.equal(mine.amount, 1234n);
    assert.ok(!value.some((c) => c.id === unpaid.value.id), 'an unpaid charge is not');
    assert.ok(value.every((c) => c.state === 'paid'));
    const query = new URL(`https://x${exchanges[0]?.path ?? ''}`).searchParams;
    assert.equal(exchanges[0]?.operation, 'list-paid');
    assert.equal(query.get('filtrarDataPor'), 'PAGAMENTO');
    assert.equal(query.get('situacao'), 'RECEBIDO');
    assert.equal(query.get('dataFinal'), brasiliaDay(0));
    const got = await client.get(paidOne.value.id);
    assert.deepEqual(got.value.paid, { amount: 1230n, at: brasiliaDay(0), method: 'PIX', amountStated: true });
  });

  it('a charge paid after its cancellation reads as paid', async () => {
    const issued = await client.issue(issueRequest());
    await inter.idle();
    await client.cancel(issued.value.id, 'order expired');
    await inter.pay(issued.value.id);
    const { value } = await client.get(issued.value.id);
    assert.equal(value.state, 'paid');
    assert.ok(value.paid);
    assert.equal(value.paid.method, 'BOLETO');
    assert.equal(value.paid.amount, 987_654_321n);
  });

  it('reads ATRASADO as open, EXPIRADO as expired, MARCADO_RECEBIDO as settled and anything else as other', async () => {
    let shift = 0;
    const local = await startFakeInter({ now: () => Date.now() + shift });
    const localClient = new InterIssuer(config(local), () => Date.now() + shift);
    try {
      const late = await localClient.issue(issueRequest({ dueDate: brasiliaDay(1) }));
      const expiring = await localClient.issue(issueRequest());
      await local.idle();
      shift = 3 * 86_400_000;
      const overdue = await localClient.get(late.value.id);
      assert.deepEqual([overdue.value.state, overdue.value.status], ['open', 'ATRASADO']);
      local.expire(expiring.value.id);
      const expired = await localClient.get(expiring.value.id);
      assert.deepEqual([expired.value.state, expired.value.status], ['expired', 'EXPIRADO']);
      // Marked paid by hand in Internet Banking, or sent to protest: nothing the API does, so written in directly.
      local.charges.get(late.value.id).cobranca.situacao = 'MARCADO_RECEBIDO';
      const settled = await localClient.get(late.value.id);
      assert.deepEqual([settled.value.state, settled.value.paid], ['settled', undefined]);
      local.charges.get(late.value.id).cobranca.situacao = 'PROTESTO';
      assert.equal((await localClient.get(late.value.id)).value.state, 'other');
    } finally {
      await localClient.close();
      await local.close();
    }
  });

  it('registers the webhook; Inter posts arrays of callbacks, retried on failure; notified reads their ids', async () => {
    const registered = await client.registerWebhook(`${receiver.url}/flaky`);
    assert.deepEqual(
      registered.exchanges.map((e) => [e.operation, e.method, e.httpStatus]),
      [['webhook-put', 'PUT', 204]],
    );
    assert.equal(inter.webhookUrl, `${receiver.url}/flaky`);
    const before = receiver.received.length;
    const issued = await client.issue(issueRequest());
    await inter.idle();
    await until(() => receiver.received.length >= before + 2);
    const attempts = inter.callbacks.filter((c) => c.body[0]?.codigoSolicitacao === issued.value.id);
    assert.deepEqual(
      attempts.map((c) => [c.attempt, c.status]),
      [
        [1, 500],
        [2, 200],
      ],
    );
    const delivered = receiver.received.at(-1);
    assert.ok(delivered);
    assert.equal(delivered.headers['x-conta-corrente'], INTER_TEST.account);
    const body = JSON.parse(delivered.body) as unknown;
    assert.ok(Array.isArray(body));
    assert.equal(body[0].situacao, 'A_RECEBER');
    const notified = await client.notified(body);
    // only the ids: nothing in a callback's body is taken for true (no paidAmount from valorTotalRecebido)
    assert.deepEqual(notified, { value: [{ id: issued.value.id }], exchanges: [] });
    const ids = async (raw: unknown) => (await client.notified(raw)).value.map((charge) => charge.id);
    const paidClaim = { ...body[0], situacao: 'RECEBIDO', valorTotalRecebido: '99999.99', origemRecebimento: 'PIX' };
    assert.deepEqual((await client.notified([paidClaim])).value, [{ id: issued.value.id }]);
    assert.deepEqual(await ids([...body, ...body, { codigoSolicitacao: 'abc-1' }]), [issued.value.id, 'abc-1']);
    assert.deepEqual(await ids(body[0]), [issued.value.id]);
    assert.deepEqual(await ids(JSON.stringify(body)), [issued.value.id]);
    assert.deepEqual(await ids({ pix: [] }), []);
    assert.deepEqual(await ids('not json'), []);
    assert.deepEqual(await ids([{ codigoSolicitacao: '../../etc' }, 7, null]), []);
    await rawCall(inter, 'DELETE', '/cobranca/v3/cobrancas/webhook');
  });

  it('refuses a webhook URL that is not https unless allowed', async () => {
    const strict = await startFakeInter();
    const strictClient = new InterIssuer(config(strict), Date.now);
    try {
      const error = await issuerError(strictClient.registerWebhook('http://127.0.0.1:9/inter'));
      assert.equal(error.kind, 'invalid');
      assert.match(error.message, /webhookUrl/);
      await strictClient.registerWebhook('https://cashgate.example/inter');
      assert.equal(strict.webhookUrl, 'https://cashgate.example/inter');
    } finally {
      await strictClient.close();
      await strict.close();
    }
  });

  it('a valorNominal below R$ 2.50 is invalid: refused by the client before any call, and by Inter', async () => {
    const before = inter.requests.length;
    const error = await issuerError(client.issue(issueRequest({ amount: 249n })));
    assert.equal(error.kind, 'invalid');
    assert.equal(error.exchange.httpStatus, null);
    assert.equal(inter.requests.length, before);

    const body = (valorNominal: number) => ({
      seuNumero: `RAW${valorNominal}`,
      valorNominal,
      dataVencimento: brasiliaDay(3),
      numDiasAgenda: 0,
      pagador: {
        cpfCnpj: cpf,
        tipoPessoa: 'FISICA',
        nome: 'Ana',
        endereco: 'Rua A',
        cidade: 'Recife',
        uf: 'PE',
        cep: '50000000',
      },
    });
    const low = await rawCall(inter, 'POST', '/cobranca/v3/cobrancas', body(2.49));
    assert.equal(low.status, 400);
    assert.deepEqual(
      low.body.violacoes.map((v: any) => v.propriedade),
      ['valorNominal'],
    );
    const least = await rawCall(inter, 'POST', '/cobranca/v3/cobrancas', body(2.5));
    assert.equal(least.status, 200);
  });

  it('Inter refuses a payer without an address, an unknown UF, a bad CPF and PIX alone, with violacoes', async () => {
    const error = await issuerError(
      client.issue(issueRequest({ payer: { type: 'CPF', document: cpf, name: 'Sem Endereço' } })),
    );
    assert.equal(error.kind, 'invalid');
    assert.equal(error.code, 'payer-address');
    const bad = await rawCall(inter, 'POST', '/cobranca/v3/cobrancas', {
      seuNumero: 'RAWBAD',
      valorNominal: 10,
      dataVencimento: '2020-01-01',
      numDiasAgenda: 61,
      pagador: {
        cpfCnpj: '12345678900',
        tipoPessoa: 'FISICA',
        nome: 'Ana',
        cidade: 'Recife',
        uf: 'XX',
        cep: '5000000',
      },
      formasRecebimento: ['PIX'],
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.violacoes.map((v: any) => v.propriedade).sort(), [
      'dataVencimento',
      'formasRecebimento',
      'numDiasAgenda',
      'pagador.cep',
      'pagador.cpfCnpj',
      'pagador.endereco',
      'pagador.uf',
    ]);
    const problem = await issuerError(client.issue(issueRequest({ reference: 'X'.repeat(16) })));
    assert.equal(problem.kind, 'invalid');
    assert.equal(problem.code, 'Dados inválidos.');
    assert.match(problem.message, /seuNumero: /);
  });

  it('the same seuNumero, valorNominal, dataVencimento and cpfCnpj within 30 minutes is invalid; after them it is not', async () => {
    let shift = 0;
    const local = await startFakeInter({ now: () => Date.now() + shift });
    const localClient = new InterIssuer(config(local), () => Date.now() + shift);
    try {
      const asked = issueRequest();
      await localClient.issue(asked);
      const error = await issuerError(localClient.issue(asked));
      assert.equal(error.kind, 'invalid');
      assert.equal(error.exchange.httpStatus, 400);
      // another amount is another key
      await localClient.issue({ ...asked, amount: asked.amount + 100n });
      shift = 29 * 60_000;
      assert.equal((await issuerError(localClient.issue(asked))).kind, 'invalid');
      shift = 31 * 60_000;
      assert.equal((await localClient.issue(asked)).value.state, 'processing');
    } finally {
      await localClient.close();
      await local.close();
    }
  });

  it('fetches the token once for ten concurrent calls, asking both scopes', async () => {
    const fresh = new InterIssuer(config(inter), Date.now);
    try {
      const issued = await client.issue(issueRequest());
      const tokensBefore = count(inter, 'oauth');
      const all = await Promise.all(Array.from({ length: 10 }, () => fresh.get(issued.value.id)));
      assert.equal(all.length, 10);
      assert.equal(count(inter, 'oauth'), tokensBefore + 1);
      const form = inter.requests.findLast((r) => r.operation === 'oauth')?.body;
      assert.equal(form.grant_type, 'client_credentials');
      assert.equal(form.scope, 'boleto-cobranca.read boleto-cobranca.write');
      assert.equal(form.client_id, INTER_TEST.clientId);
      // token fetches are not exchanges
      assert.ok(all.every((called) => called.exchanges.length === 1 && called.exchanges[0]?.operation === 'get'));
    } finally {
      await fresh.close();
    }
  });

  it('drops a token Inter refuses and fetches a new one once', async () => {
    const issued = await client.issue(issueRequest());
    inter.expireTokens();
    const tokensBefore = count(inter, 'oauth');
    const got = await client.get(issued.value.id);
    assert.equal(count(inter, 'oauth'), tokensBefore + 1);
    assert.deepEqual(
      got.exchanges.map((e) => e.httpStatus),
      [401, 200],
    );
    // calls refused together fetch one new token between them
    inter.expireTokens();
    const together = await Promise.all(Array.from({ length: 6 }, () => client.get(issued.value.id)));
    assert.ok(together.every((called) => called.value.id === issued.value.id));
    assert.equal(count(inter, 'oauth'), tokensBefore + 2);
    // and only once: a second refusal is the answer
    inter.failNext('get', 'invalid-token', 2);
    const error = await issuerError(client.get(issued.value.id));
    assert.equal(error.kind, 'invalid');
    assert.equal(error.exchange.httpStatus, 401);
    assert.equal(count(inter, 'oauth'), tokensBefore + 3);
  });

  it('a token past its 60 minutes is fetched again before the call', async () => {
    let shift = 0;
    const local = await startFakeInter({ now: () => Date.now() + shift });
    const localClient = new InterIssuer(config(local), () => Date.now() + shift);
    try {
      const issued = await localClient.issue(issueRequest());
      shift = 61 * 60_000;
      const got = await localClient.get(issued.value.id);
      assert.deepEqual(
        got.exchanges.map((e) => e.httpStatus),
        [200],
      );
      assert.equal(count(local, 'oauth'), 2);
    } finally {
      await localClient.close();
      await local.close();
    }
  });

  it('an issue whose answer is lost is unknown, and find then finds it', async () => {
    const quick = new InterIssuer(config(inter, { timeoutMs: 400 }), Date.now);
    try {
      const asked = issueRequest();
      inter.failNext('issue', 'timeout-after');
      const error = await issuerError(quick.issue(asked));
      assert.equal(error.kind, 'unknown');
      assert.equal(error.code, 'timeout');
      assert.equal(error.exchange.httpStatus, null);
      await inter.idle();
      const found = await quick.find(asked);
      assert.ok(found.value, 'the charge Inter registered is found');
      assert.equal(found.value.reference, asked.reference);
      assert.equal(found.value.state, 'open');
      const stored = inter.charges.get(found.value.id);
      assert.equal(stored.cobranca.seuNumero, asked.reference);
    } finally {
      await quick.close();
    }
  });

  it('sorts failures: 404 not-found, 503 and 429 busy, 500 and a reset unknown, 403 invalid', async () => {
    const issued = await client.issue(issueRequest());
    const missing = await issuerError(client.get('00000000-0000-4000-8000-000000000000'));
    assert.equal(missing.kind, 'not-found');
    assert.equal(missing.code, 'Não Encontrado');
    inter.failNext('get', 'unavailable');
    assert.equal((await issuerError(client.get(issued.value.id))).kind, 'busy');
    inter.failNext('get', 'server-error');
    const internal = await issuerError(client.get(issued.value.id));
    assert.equal(internal.kind, 'unknown');
    assert.equal(internal.code, 'Erro Interno');
    inter.failNext('get', 'reset');
    assert.equal((await issuerError(client.get(issued.value.id))).kind, 'unknown');

    const otherAccount = new InterIssuer(config(inter, { account: '999' }), Date.now);
    try {
      const denied = await issuerError(otherAccount.get(issued.value.id));
      assert.equal(denied.kind, 'invalid');
      assert.equal(denied.exchange.httpStatus, 403);
    } finally {
      await otherAccount.close();
    }
  });

  it('a token without boleto-cobranca.write reads but cannot issue (403)', async () => {
    const readOnly = await startFakeInter({ grantedScopes: ['boleto-cobranca.read'] });
    const readClient = new InterIssuer(config(readOnly), Date.now);
    try {
      const error = await issuerError(readClient.issue(issueRequest()));
      assert.equal(error.kind, 'invalid');
      assert.equal(error.exchange.httpStatus, 403);
      assert.equal((await issuerError(readClient.get('00000000-0000-4000-8000-000000000000'))).kind, 'not-found');
    } finally {
      await readClient.close();
      await readOnly.close();
    }
  });

  it('the token endpoint takes 5 calls a minute; the 6th is busy', async () => {
    const local = await startFakeInter();
    const clients = Array.from({ length: 6 }, () => new InterIssuer(config(local), Date.now));
    try {
      for (const each of clients.slice(0, 5)) await issuerError(each.get('00000000-0000-4000-8000-000000000000'));
      const sixth = clients[5];
      assert.ok(sixth);
      const error = await issuerError(sixth.get('00000000-0000-4000-8000-000000000000'));
      assert.equal(error.kind, 'busy');
      assert.equal(error.exchange.operation, 'oauth');
      assert.equal(error.exchange.httpStatus, 429);
    } finally {
      for (const each of clients) await each.close();
      await local.close();
    }
  });

  it('a rogue client certificate is refused at the handshake: network, nothing reached Inter', async () => {
    const rogue = new InterIssuer(
      config(inter, {
        certPem: readFileSync(INTER_TEST.rogueCertPath, 'utf8'),
        keyPem: readFileSync(INTER_TEST.rogueKeyPath, 'utf8'),
      }),
      Date.now,
    );
    const before = inter.requests.length;
    try {
      const error = await issuerError(rogue.get('00000000-0000-4000-8000-000000000000'));
      assert.equal(error.kind, 'network');
      assert.equal(error.code, 'network');
      assert.equal(error.exchange.operation, 'oauth');
      assert.equal(inter.requests.length, before);
    } finally {
      await rogue.close();
    }
  });

  it('counts and times every call by issuer, operation and outcome', async () => {
    const counted = await registry.getSingleMetricAsString('cashgate_boleto_issuer_requests_total');
    for (const labels of [
      'issuer="inter",operation="oauth",outcome="ok"',
      'issuer="inter",operation="issue",outcome="ok"',
      'issuer="inter",operation="get",outcome="ok"',
      'issuer="inter",operation="get",outcome="Não autorizado"',
      'issuer="inter",operation="get",outcome="Não Encontrado"',
      'issuer="inter",operation="find",outcome="ok"',
      'issuer="inter",operation="cancel",outcome="ok"',
      'issuer="inter",operation="pdf",outcome="ok"',
      'issuer="inter",operation="list-paid",outcome="ok"',
      'issuer="inter",operation="webhook-put",outcome="ok"',
      'issuer="inter",operation="issue",outcome="Dados inválidos."',
    ]) {
      assert.ok(counted.includes(`{${labels}}`), `${labels} in\n${counted}`);
    }
    const timed = await registry.getSingleMetricAsString('cashgate_boleto_issuer_request_duration_seconds');
    assert.match(
      timed,
      /cashgate_boleto_issuer_request_duration_seconds_count\{issuer="inter",operation="issue"\} [1-9]/,
    );
  });
});
