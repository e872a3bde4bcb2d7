import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { isValidCnpj, isValidCpf } from '../src/brazil/documents.js';
import { isValidBarcode, isValidLinhaDigitavel } from '../src/rails/boleto/boleto.js';
import { brasiliaDate, EfiIssuer } from '../src/rails/boleto/efi-client.js';
import { IssuerError, type BoletoIssueRequest } from '../src/rails/boleto/issuer.js';
import { EFI_TEST, startFakeEfi, type FakeEfi } from './support/fake-efi.js';

const CPF = '52998224725';
const CNPJ = '11222333000181';
const DAY = 86_400_000;

interface Receiver {
  url: string;
  bodies: string[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks/efi`,
    bodies,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function rejects(promise: Promise<unknown>): Promise<IssuerError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof IssuerError, `expected an IssuerError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

async function until(condition: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) assert.fail('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('Efí API Cobranças client against the local fake', () => {
  let efi: FakeEfi;
  let receiver: Receiver;
  let client: EfiIssuer;
  let registry: Registry;
  let orderSeq = 0;
  const dueDate = brasiliaDate(Date.now() + 3 * DAY);

  const order = (overrides: Partial<BoletoIssueRequest> = {}): BoletoIssueRequest => {
    orderSeq++;
    return {
      orderId: `ord_efi_${orderSeq}_${Date.now()}`,
      reference: `REF${orderSeq}`,
      amount: 12_345n + BigInt(orderSeq),
      dueDate,
      payer: { type: 'CPF', document: CPF, name: 'Maria da Silva' },
      notificationUrl: receiver.url,
      ...overrides,
    };
  };

  before(async () => {
    assert.ok(isValidCpf(CPF) && isValidCnpj(CNPJ));
    efi = await startFakeEfi({ notificationRetryMs: 40, maxNotificationTries: 10 });
    receiver = await startReceiver();
    registry = new Registry();
    client = new EfiIssuer(
      { baseUrl: efi.url, clientId: EFI_TEST.clientId, clientSecret: EFI_TEST.clientSecret, timeoutMs: 2000 },
      Date.now,
      registry,
    );
  });

  after(async () => {
    await client.close();
    await efi.close();
    await receiver.close();
  });

  it('issues a Bolix: an open charge with a 47-digit linha, a valid barcode, a Pix code and a PDF link', async () => {
    const request = order({ description: 'Assinatura anual' });
    const { value: charge, exchanges } = await client.issue(request);
    assert.equal(charge.state, 'open');
    assert.equal(charge.status, 'waiting');
    assert.match(charge.id, /^\d+$/);
    assert.equal(charge.reference, request.orderId);
    assert.equal(charge.amount, request.amount);
    assert.equal(charge.dueDate, dueDate);
    assert.match(charge.linhaDigitavel ?? '', /^\d{47}$/);
    assert.ok(isValidLinhaDigitavel(charge.linhaDigitavel ?? ''));
    assert.ok(charge.barcode !== undefined && isValidBarcode(charge.barcode));
    assert.equal(charge.barcode.slice(0, 3), '364');
    assert.equal(BigInt(charge.barcode.slice(9, 19)), request.amount);
    assert.match(charge.pixCode ?? '', /^000201/);
    assert.ok(charge.pdfUrl?.startsWith(efi.url));
    assert.equal(charge.paid, undefined);
    // the request as Efí documents it, and the exchange that records it (no token call among the exchanges)
    assert.deepEqual(
      exchanges.map((e) => [e.operation, e.code]),
      [['issue', 'ok']],
    );
    const sent = efi.requests.filter((r) => r.operation === 'issue').at(-1)?.body;
    assert.deepEqual(sent, {
      items: [{ name: `Assinatura anual (${request.reference})`, value: Number(request.amount), amount: 1 }],
      metadata: { custom_id: request.orderId, notification_url: receiver.url },
      payment: { banking_billet: { customer: { name: 'Maria da Silva', cpf: CPF }, expire_at: dueDate } },
    });
    const oauth = efi.requests.find((r) => r.operation === 'oauth');
    assert.deepEqual(oauth?.body, { grant_type: 'client_credentials' });
  });

  it('issues for a company with its address and names the item after the order', async () => {
    const request = order({
      payer: {
        type: 'CNPJ',
        document: CNPJ,
        name: 'Loja Exemplo Ltda',
        address: { street: 'Rua A', district: 'Centro', city: 'Ouro Preto', uf: 'MG', cep: '35400000' },
      },
    });
    const { value: charge } = await client.issue(request);
    assert.equal(charge.state, 'open');
    const sent = efi.requests.filter((r) => r.operation === 'issue').at(-1)?.body;
    assert.equal(sent.items[0].name, `Pedido ${request.orderId} (${request.reference})`);
    assert.deepEqual(sent.payment.banking_billet.customer, {
      juridical_person: { corporate_name: 'Loja Exemplo Ltda', cnpj: CNPJ },
      address: {
        street: 'Rua A',
        number: 'S/N',
        neighborhood: 'Centro',
        zipcode: '35400000',
        city: 'Ouro Preto',
        state: 'MG',
      },
    });
  });

  it('gets a charge, finds it by order id, and finds nothing for an unknown order', async () => {
    const request = order();
    const { value: issued } = await client.issue(request);
    const { value: got, exchanges } = await client.get(issued.id);
    assert.equal(got.id, issued.id);
    assert.equal(got.state, 'open');
    assert.equal(got.reference, request.orderId);
    assert.equal(got.linhaDigitavel, issued.linhaDigitavel);
    assert.equal(got.pixCode, issued.pixCode);
    assert.equal(got.pdfUrl, issued.pdfUrl);
    assert.equal(exchanges[0]?.operation, 'get');

    const found = await client.find({ orderId: request.orderId, reference: request.reference, dueDate });
    assert.equal(found.value?.id, issued.id);
    assert.deepEqual(
      found.exchanges.map((e) => e.operation),
      ['find', 'get'],
    );
    const listed = efi.requests.filter((r) => r.operation === 'list').at(-1);
    const query = new URL(listed?.path ?? '', efi.url).searchParams;
    assert.equal(query.get('charge_type'), 'billet');
    assert.equal(query.get('custom_id'), request.orderId);
    assert.equal(query.get('date_of'), 'creation');

    const missing = await client.find({ orderId: 'ord_never_issued', reference: 'X', dueDate });
    assert.equal(missing.value, undefined);
  });

  it('find prefers the newest charge that is not cancelled', async () => {
    const request = order();
    const { value: older } = await client.issue(request);
    const { value: newer } = await client.issue({ ...request, amount: request.amount + 1n });
    assert.equal((await client.find(request)).value?.id, newer.id);
    await client.cancel(newer.id);
    assert.equal((await client.find(request)).value?.id, older.id);
  });

  it('cancels an open charge and is refused cancelling it again (3500043)', async () => {
    const { value: charge } = await client.issue(order());
    const cancelled = await client.cancel(charge.id);
    assert.equal(cancelled.exchanges[0]?.operation, 'cancel');
    assert.equal(cancelled.exchanges[0].path, `/v1/charge/${charge.id}/cancel`);
    assert.equal((await client.get(charge.id)).value.state, 'cancelled');
    const error = await rejects(client.cancel(charge.id));
    assert.equal(error.kind, 'invalid');
    assert.equal(error.code, '3500043');
  });

  it('a charge Efí does not know is not-found', async () => {
    const error = await rejects(client.get('99999999'));
    assert.equal(error.kind, 'not-found');
  });

  it("fetches Efí's PDF without Authorization, also when only the id is known", async () => {
    const { value: charge } = await client.issue(order());
    const { value: pdf, exchanges } = await client.pdf(charge);
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.deepEqual(exchanges[0]?.response, { bytes: pdf.length });
    const fetched = efi.requests.filter((r) => r.operation === 'pdf');
    assert.equal(fetched.at(-1)?.status, 200);
    const byId = await client.pdf({ id: charge.id, pdfUrl: undefined });
    assert.deepEqual(
      byId.exchanges.map((e) => e.operation),
      ['get', 'pdf'],
    );
    assert.ok(byId.value.includes(Buffer.from(charge.linhaDigitavel?.slice(0, 5) ?? 'none')));
    const error = await rejects(client.pdf({ id: charge.id, pdfUrl: `${efi.url}/emissao/${charge.id}/0000.pdf` }));
    assert.equal(error.kind, 'not-found');
  });

  it('a PDF link that answers something else is invalid', async () => {
    const error = await rejects(client.pdf({ id: '1', pdfUrl: `${receiver.url}/not-a-pdf` }));
    assert.equal(error.kind, 'invalid');
    assert.equal(error.code, 'not-pdf');
    const other = await rejects(client.pdf({ id: '1', pdfUrl: 'ftp://example.invalid/file.pdf' }));
    assert.equal(other.kind, 'invalid');
    assert.equal(other.code, 'no-pdf');
  });

  it('reads a paid charge and lists the charges paid in a window', async () => {
    const request = order();
    const { value: charge } = await client.issue(request);
    const unpaidYet = await client.paidBetween(Date.now() - DAY, Date.now() + DAY);
    assert.ok(!unpaidYet.value.some((c) => c.id === charge.id));
    efi.pay(charge.id, { method: 'PIX' });
    const { value: paid } = await client.get(charge.id);
    assert.equal(paid.state, 'paid');
    assert.equal(paid.paid?.amount, request.amount);
    assert.match(paid.paid.at, /^\d{4}-\d{2}-\d{2}/);
    // a Bolix keeps the method banking_billet however it was paid: Efí does not say
    assert.equal(paid.paid.method, 'UNKNOWN');
    const paidNow = await client.paidBetween(Date.now() - DAY, Date.now() + DAY);
    const listed = paidNow.value.find((c) => c.id === charge.id);
    assert.equal(listed?.state, 'paid');
    assert.equal(listed.reference, request.orderId);
    assert.equal(listed.amount, request.amount);
    assert.ok(paidNow.value.every((c) => c.state === 'paid'));
    const query = new URL(efi.requests.filter((r) => r.operation === 'list').at(-1)?.path ?? '', efi.url).searchParams;
    assert.equal(query.get('date_of'), 'payment');
    assert.equal(query.get('status'), 'paid');
    // a window before the payment holds none of it
    const earlier = await client.paidBetween(Date.now() - 10 * DAY, Date.now() - 5 * DAY);
    assert.ok(!earlier.value.some((c) => c.id === charge.id));
  });

  it('pages through the list until a short page', async () => {
    const few = await client.paidBetween(Date.now() - DAY, Date.now() + DAY);
    const pages = few.exchanges.filter((e) => e.operation === 'list-paid');
    assert.equal(pages.length, 1);
    assert.match(pages[0]?.path ?? '', /limit=100&page=1$/);
  });

  it('redeems a notification token for the charge ids, and Efí stops re-posting once it is read', async () => {
    const url = `${receiver.url}/n${Date.now()}`;
    const { value: charge } = await client.issue(order({ notificationUrl: url }));
    // not read yet: Efí posts the token again and again
    await until(() => efi.notifications.filter((n) => n.url === url).length >= 2);
    const token = efi.notifications.find((n) => n.url === url)?.token ?? '';
    assert.ok(receiver.bodies.includes(new URLSearchParams({ notification: token }).toString()));
    const posted = Object.fromEntries(new URLSearchParams({ notification: token }));
    const { value: ids, exchanges } = await client.notified(posted);
    assert.deepEqual(ids, [{ id: charge.id }]);
    assert.equal(exchanges[0]?.operation, 'notification');
    assert.equal(exchanges[0].path, `/v1/notification/${token}`);
    await efi.idle();
    const count = efi.notifications.filter((n) => n.url === url).length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(efi.notifications.filter((n) => n.url === url).length, count);
    // a payment is a new change: posted again, with the same token
    efi.pay(charge.id);
    await until(() => efi.notifications.filter((n) => n.url === url).length > count);
    assert.equal(efi.notifications.filter((n) => n.url === url).at(-1)?.token, token);
    // the redeemed token states the value received, which the charge detail does not
    assert.deepEqual((await client.notified(posted)).value, [{ id: charge.id, paidAmount: charge.amount }]);
    await efi.idle();
  });

  it('notified ignores bodies without a token and reports an unknown token as not-found', async () => {
    assert.deepEqual(await client.notified({}), { value: [], exchanges: [] });
    assert.deepEqual(await client.notified('notification=abc'), { value: [], exchanges: [] });
    const error = await rejects(client.notified({ notification: '00000000-0000-0000-0000-000000000000' }));
    assert.equal(error.kind, 'not-found');
  });

  it('refuses below R$ 5.00 with 4600036 and a third identical charge with 4600210', async () => {
    const small = await rejects(client.issue(order({ amount: 499n })));
    assert.equal(small.kind, 'invalid');
    assert.equal(small.code, '4600036');
    const same = order();
    await client.issue(same);
    await client.issue(same);
    const third = await rejects(client.issue(same));
    assert.equal(third.kind, 'invalid');
    assert.equal(third.code, '4600210');
    const badName = await rejects(client.issue(order({ payer: { type: 'CPF', document: CPF, name: 'Maria' } })));
    assert.equal(badName.code, '3500034');
    assert.match(badName.message, /customer\/name/);
  });

  it('fetches a new token once when Efí refuses the cached one', async () => {
    const { value: charge } = await client.issue(order());
    const tokensBefore = efi.requests.filter((r) => r.operation === 'oauth').length;
    efi.expireTokens();
    const { value, exchanges } = await client.get(charge.id);
    assert.equal(value.id, charge.id);
    assert.deepEqual(
      exchanges.map((e) => e.httpStatus),
      [401, 200],
    );
    assert.equal(efi.requests.filter((r) => r.operation === 'oauth').length, tokensBefore + 1);
    efi.failNext('get', 'invalid-token', 2);
    const error = await rejects(client.get(charge.id));
    assert.equal(error.exchange.httpStatus, 401);
    assert.equal(error.kind, 'invalid');
  });

  it('a lost answer on issue is unknown, and find then finds the charge Efí made', async () => {
    const quick = new EfiIssuer(
      { baseUrl: efi.url, clientId: EFI_TEST.clientId, clientSecret: EFI_TEST.clientSecret, timeoutMs: 300 },
      Date.now,
    );
    try {
      const request = order();
      efi.failNext('issue', 'timeout-after');
      const error = await rejects(quick.issue(request));
      assert.equal(error.kind, 'unknown');
      assert.equal(error.code, 'timeout');
      const found = await quick.find(request);
      assert.ok(found.value !== undefined);
      assert.equal(found.value.reference, request.orderId);
      assert.equal(found.value.state, 'open');
    } finally {
      await quick.close();
    }
  });

  it('503 and the rate-limit code are busy, a reset or a 500 unknown', async () => {
    efi.failNext('issue', 'unavailable');
    const unavailable = await rejects(client.issue(order()));
    assert.equal(unavailable.kind, 'busy');
    efi.failNext('get', 'rate-limited');
    const limited = await rejects(client.get('1'));
    assert.equal(limited.kind, 'busy');
    assert.equal(limited.code, '3500055');
    efi.failNext('cancel', 'server-error');
    const failed = await rejects(client.cancel('1'));
    assert.equal(failed.kind, 'unknown');
    efi.failNext('get', 'reset');
    const reset = await rejects(client.get('1'));
    assert.equal(reset.kind, 'unknown');
  });

  it('counts calls by issuer, operation and outcome', async () => {
    const counter = await registry.getSingleMetric('cashgate_boleto_issuer_requests_total')?.get();
    const count = (operation: string, outcome: string) =>
      counter?.values.find(
        (v) => v.labels.issuer === 'efi' && v.labels.operation === operation && v.labels.outcome === outcome,
      )?.value ?? 0;
    assert.ok(count('oauth', 'ok') >= 2);
    assert.ok(count('issue', 'ok') >= 5);
    assert.equal(count('issue', '4600036'), 1);
    assert.equal(count('issue', '4600210'), 1);
    assert.equal(count('get', 'http-401'), 3);
    assert.equal(count('get', '3500055'), 1);
    assert.equal(count('issue', 'http-503'), 1);
    assert.ok(count('find', 'ok') >= 2);
    assert.ok(count('list-paid', 'ok') >= 3);
    assert.ok(count('notification', 'ok') >= 1);
    assert.ok(count('pdf', 'ok') >= 2);
  });
});
