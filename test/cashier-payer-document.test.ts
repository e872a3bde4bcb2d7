import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parsePix } from 'pix-utils';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { pdfText } from './support/pdf.js';

let seq = 0;
const nextId = () => `gen-doc-${Date.now()}-${++seq}`;

/** The ways a CPF is written: bare digits, formatted 000.000.000-00, or as receipts mask it (***.000.000-**). */
const writings = (cpf: string) => [
  cpf,
  `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`,
  `***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**`,
];

/**
 * An aggregate cashier opened without userIdentity pays with a CPF Cashgate generates (the rails
 * want one), valid by its check digits, so possibly a real person's: it must never be shown, or
 * sent anywhere, as the payer's document.
 */
describe(`a payer document Cashgate generated is never shown or sent as the payer's (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;

  before(async () => {
    gw = await startTestGateway();
    merchant = await gw.merchantWithKey();
  });
  after(async () => {
    await gw.close();
  });

  /** Opens an aggregate cashier without userIdentity and chooses `method`; the order and its generated CPF. */
  const pay = async (method: string) => {
    const created = await signedCall(
      gw.url,
      merchant.credentials,
      { path: '/api/v3/polymerize/createCollectingOrder', body: { externalOrderId: nextId() } },
      gw.clock.now(),
    );
    assert.equal(created.body.code, '200', created.body.msgEn);
    const checkout = new URL(created.body.data as string).pathname;
    const chosen = await fetch(new URL(checkout, gw.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ amount: '25.00', method }).toString(),
      redirect: 'manual',
    });
    assert.equal(chosen.status, 303, await chosen.text());
    const cashierPath = chosen.headers.get('location') ?? '';
    const order = await gw.gateway.orders.findByCashier(cashierPath.split('/').pop() ?? '');
    assert.ok(order !== undefined, 'the order was made');
    const details = JSON.parse(order.details) as { userInfoNo?: string; documentSource?: string; payParam?: string };
    assert.equal(details.documentSource, 'generated');
    assert.match(details.userInfoNo ?? '', /^\d{11}$/, 'the rails got a CPF');
    return { order, cashierPath, cpf: details.userInfoNo ?? '', payParam: details.payParam ?? '' };
  };
  const absent = (text: string, cpf: string, where: string) => {
    for (const written of writings(cpf)) assert.ok(!text.includes(written), `${where} does not show ${written}`);
  };

  it('the boleto page, its PDF and its voucher do not show it', async () => {
    const { order, cashierPath, cpf } = await pay('BOLETO');
    const pageText = await (await fetch(new URL(cashierPath, gw.url))).text();
    absent(pageText, cpf, 'the boleto page');
    const pdf = await fetch(new URL(`${cashierPath}/boleto.pdf`, gw.url));
    assert.equal(pdf.status, 200);
    absent(await pdfText(new Uint8Array(await pdf.arrayBuffer())), cpf, 'the boleto PDF');
    await gw.sandbox(order.id, 'paid');
    const voucher = await signedCall(
      gw.url,
      merchant.credentials,
      { path: '/api/v3/bra/query/voucher', body: { orderId: order.id } },
      gw.clock.now(),
    );
    assert.equal(voucher.body.code, '200', voucher.body.msgEn);
    absent(JSON.stringify(voucher.body), cpf, 'the voucher');
    const link = /https?:\/\/[^"\s]+/.exec(JSON.stringify(voucher.body.data))?.[0];
    if (link !== undefined)
      absent(await (await fetch(new URL(new URL(link).pathname, gw.url))).text(), cpf, 'the voucher page');
  });

  it('the merchant’s query leaves it out, saying it was generated', async () => {
    const { order, cpf } = await pay('PIX');
    const queried = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: '/api/v3/bra/query/collectingOrder',
        body: { externalOrderId: order.external_order_id, orderId: order.id },
      },
      gw.clock.now(),
    );
    assert.equal(queried.body.code, '200', queried.body.msgEn);
    const record = queried.body.data[0] as Record<string, unknown>;
    assert.equal(record.accountNo, '');
    assert.equal(record.accountType, '');
    assert.equal(record.payerDocumentSource, 'generated');
    absent(JSON.stringify(queried.body), cpf, 'the query');
  });

  it('a dynamic Pix charge names no devedor', async () => {
    const { cpf, payParam } = await pay('PIX_DYNAMIC');
    const pix = parsePix(payParam) as { url?: string };
    const location = new URL(`http://${pix.url ?? ''}`);
    const jws = await (await fetch(new URL(location.pathname, gw.url))).text();
    const payload = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(payload.devedor, undefined, 'no devedor');
    absent(jws, cpf, 'the charge');
  });
});
