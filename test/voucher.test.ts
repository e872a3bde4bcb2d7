import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pdfText } from './support/pdf.js';
import {
  brasiliaTime,
  formatBrl,
  maskDocument,
  renderVoucher,
  senderBankOf,
  type VoucherFacts,
} from '../src/brazil/voucher.js';
import { BRAZILIAN_BANKS } from '../src/banks/bank-list.js';
import { drawableText } from '../src/pdf/text.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

const VOUCHER = '/api/v3/bra/query/voucher';
const PUBLIC_BASE_URL = 'https://pay.example.com';
const LINK = /^https:\/\/pay\.example\.com\/vouchers\/[A-Za-z0-9_-]{32}\.pdf$/;

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

const FACTS: VoucherFacts = {
  kind: 'pix_received',
  amount: 123_456n,
  settledAt: Date.UTC(2025, 0, 2, 13, 4, 5),
  payer: { name: 'Maria da Conceição Łukasz Zoë 王', lines: ['CPF: ***.982.247-**'] },
  payee: { name: 'CASHGATE SANDBOX', lines: ['Lojista / Merchant: Loja São João', 'Lojista / Merchant ID: mch_1'] },
  endToEndId: 'E00000000202501021304ABCDEFGHIJK',
  authenticationCode: '0123456789ABCDEF0123',
  orderId: 'BC0123456789ABCDEF01234567',
  externalOrderId: 'pedido-42',
  remark: 'Pedido nº 42 – café',
};

describe('voucher rendering', () => {
  it('formats reais the Brazilian way', () => {
    assert.equal(formatBrl(123_456n), 'R$ 1.234,56');
    assert.equal(formatBrl(5n), 'R$ 0,05');
    assert.equal(formatBrl(100_000_000n), 'R$ 1.000.000,00');
  });

  it('masks a CPF to its middle digits and formats a CNPJ', () => {
    assert.equal(maskDocument('CPF', '52998224725'), '***.982.247-**');
    assert.equal(maskDocument('CPF', '529.982.247-25'), '***.982.247-**');
    assert.equal(maskDocument('CNPJ', '11222333000181'), '11.222.333/0001-81');
  });

  it('gives the settlement time in Brasília, ISO and local', () => {
    const time = brasiliaTime(Date.UTC(2025, 0, 2, 13, 4, 5));
    assert.equal(time.iso, '2025-01-02T10:04:05-03:00');
    assert.equal(time.local, '02/01/2025 10:04:05');
    assert.equal(new Date(time.iso).getTime(), Date.UTC(2025, 0, 2, 13, 4, 5));
  });

  it('keeps what WinAnsi can draw and transliterates the rest', () => {
    const winAnsi = new Set(Array.from(' ?-Conceiçãoelukasz').map((c) => c.codePointAt(0) ?? 0));
    assert.equal(drawableText('Conceição', winAnsi), 'Conceição');
    assert.equal(drawableText('Łukasz\tő 王', winAnsi), 'Lukasz o ?');
  });

  it('renders a one-page PDF whose text carries every fact, accents included', async () => {
    const bytes = await renderVoucher(FACTS);
    assert.equal(Buffer.from(bytes.subarray(0, 5)).toString('latin1'), '%PDF-');
    assert.deepEqual(await renderVoucher(FACTS), bytes, 'the same facts give the same bytes');
    const text = await pdfText(bytes);
    for (const expected of [
      'Comprovante de pagamento / Payment receipt',
      'Pix recebido / Pix received',
      'R$ 1.234,56',
      'BRL 1234.56',
      '02/01/2025 10:04:05',
      '2025-01-02T10:04:05-03:00',
      'Maria da Conceição Lukasz Zoë ?',
      '***.982.247-**',
      'Loja São João',
      FACTS.endToEndId,
      FACTS.authenticationCode,
      FACTS.orderId,
      FACTS.externalOrderId,
      'Pedido nº 42 – café',
      'Issued by Cashgate',
    ]) {
      assert.ok(text.includes(expected), `the voucher shows ${expected}:\n${text}`);
    }
    assert.match(text, /-- 1 of 1 --/);
  });

  it("shows a boleto's linha digitável, due date and bank authentication, and no end-to-end id", async () => {
    const linha = '34191.09123 34567.880058 71234.510007 1 13120000015000';
    const boleto: VoucherFacts = {
      ...FACTS,
      kind: 'boleto_paid',
      boleto: { linhaDigitavel: linha, dueDate: '2025-12-31', bank: BRAZILIAN_BANKS.find((b) => b.code === '341') },
    };
    // Text as one line: a long label wraps inside its column.
    const text = (await pdfText(await renderVoucher(boleto))).replace(/\s+/g, ' ');
    for (const expected of [
      'Boleto pago / Boleto paid',
      `Linha digitável / Boleto number ${linha}`,
      'Vencimento / Due date 31/12/2025',
      'Banco emissor / Issuing bank 341 — ITAÚ UNIBANCO S.A.',
      `Autenticação / Authentication code ${FACTS.authenticationCode}`,
    ]) {
      assert.ok(text.includes(expected), `the boleto voucher shows ${expected}:\n${text}`);
    }
    assert.ok(!text.includes(FACTS.endToEndId), `a boleto voucher shows no end-to-end id:\n${text}`);
    assert.ok(!/fim a fim|End-to-end/i.test(text), `a boleto voucher has no end-to-end row:\n${text}`);
  });

  it('still shows the end-to-end id of a Pix', async () => {
    for (const kind of ['pix_received', 'pix_sent'] as const) {
      const text = await pdfText(await renderVoucher({ ...FACTS, kind }));
      assert.ok(
        text.includes(`ID fim a fim / End-to-end ID ${FACTS.endToEndId}`),
        `the ${kind} voucher shows its end-to-end id:\n${text}`,
      );
      assert.ok(!text.includes('Linha digitável'), `a ${kind} voucher has no linha digitável:\n${text}`);
    }
  });

  it("reads the sending participant's bank from an end-to-end id (E + ISPB + time + sequence)", () => {
    assert.deepEqual(
      senderBankOf('E09089356202501021304ABCDEFGHIJK'),
      BRAZILIAN_BANKS.find((b) => b.code === '364'),
      "Efí's ISPB",
    );
    assert.equal(senderBankOf('E00000000202501021304ABCDEFGHIJK')?.code, '001', "Banco do Brasil's ISPB is zeros");
    assert.equal(senderBankOf('E99999998202501021304ABCDEFGHIJK'), undefined, 'an ISPB not on the list');
    assert.equal(senderBankOf('E0908935620250102ABCDEFGHIJK'), undefined, 'too short');
    assert.equal(senderBankOf('D09089356202501021304ABCDEFGHIJK'), undefined, 'a return (D), not a payment');
    assert.equal(senderBankOf(undefined), undefined, 'no id');
  });

  it('wraps long values instead of running off the page', async () => {
    const long = { ...FACTS, payer: { name: 'Ana '.repeat(60).trim(), lines: [] }, externalOrderId: 'x'.repeat(64) };
    const text = await pdfText(await renderVoucher(long));
    assert.ok(text.replace(/\s+/g, '').includes('x'.repeat(64)));
    assert.match(text, /-- 1 of 1 --/);
  });
});

describe(`Brazil payment vouchers (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let other: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const call = (path: string, body: unknown, credentials = merchant.credentials) =>
    signedCall(gw.url, credentials, { path, body }, gw.clock.now());
  const sandbox = async (orderId: string, event: string) => {
    const response = await gw.sandbox(orderId, event);
    assert.equal(response.status, 200, JSON.stringify(response.body));
  };
  const voucher = (orderId: string, credentials = merchant.credentials) => call(VOUCHER, { orderId }, credentials);
  const details = async (orderId: string) =>
    JSON.parse((await gw.gateway.orders.find(orderId))?.details ?? '{}') as {
      endToEndId: string;
      voucherToken: string;
    };
  const fetchVoucher = (link: string) => fetch(new URL(new URL(link).pathname, gw.url));

  const collect = async (body: Record<string, unknown>) => {
    const response = await call('/api/v3/bra/createCollectingOrder', {
      amount: '1234.56',
      channelType: 'PIX',
      externalOrderId: unique('vc-col'),
      ...body,
    });
    assert.equal(response.body.code, '200', response.body.msgEn);
    return response.body.data.currencyOrderVo.orderId as string;
  };
  const transfer = async (path: string, body: Record<string, unknown>) => {
    const response = await call(path, {
      externalOrderId: unique('vc-trf'),
      personIdType: 'CPF',
      personId: '529.982.247-25',
      personName: 'João da Conceição',
      ...body,
    });
    assert.equal(response.body.code, '200', response.body.msgEn);
    return response.body.data.orderId as string;
  };
  const bankTransfer = (bankName = 'Banco do Brasil S.A.') =>
    transfer('/api/v3/bra/bank/createTransferOrder', {
      currencyAmount: '80.10',
      channelType: 'BANK',
      accountType: 'CC',
      accountId: '12345-6',
      bankName,
      agency: '1234',
    });
  const voucherText = async (orderId: string) => {
    const response = await voucher(orderId);
    assert.equal(response.body.code, '200', response.body.msgEn);
    const pdf = await fetchVoucher(response.body.data);
    assert.equal(pdf.status, 200, 'the voucher is served');
    return pdfText(new Uint8Array(await pdf.arrayBuffer()));
  };
  /** The voucher text split into its payer and payee parts. */
  const parties = (text: string) => {
    const payer = text.indexOf('Pagador / Payer');
    const payee = text.indexOf('Recebedor / Payee');
    const identification = text.indexOf('Identificação / Identification');
    assert.ok(payer >= 0 && payee > payer && identification > payee, `payer, payee, identification in order:\n${text}`);
    return { payer: text.slice(payer, payee), payee: text.slice(payee, identification) };
  };

  before(async () => {
    gw = await startTestGateway({ env: { PUBLIC_BASE_URL } });
    merchant = await gw.merchantWithKey();
    other = await gw.merchantWithKey();
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '1000.00',
      reason: 'float',
    });
  });
  after(async () => {
    await gw.close();
  });

  it('links a paid PIX collection to its PDF receipt, with the same link on every call', async () => {
    const orderId = await collect({
      userInfoType: 'CPF',
      userInfoNo: '52998224725',
      userInfoName: 'Maria da Conceição',
    });
    await sandbox(orderId, 'paid');
    const first = await voucher(orderId);
    assert.equal(first.status, 200);
    assert.equal(first.body.code, '200', first.body.msgEn);
    assert.match(first.body.data, LINK);
    const { endToEndId, voucherToken } = await details(orderId);
    assert.equal(
      first.body.data,
      `${PUBLIC_BASE_URL}/vouchers/${voucherToken}.pdf`,
      'the token settled with the order',
    );
    assert.equal((await voucher(orderId)).body.data, first.body.data, 'the link is stable');

    const response = await fetchVoucher(first.body.data);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/pdf');
    assert.equal(response.headers.get('content-disposition'), `inline; filename="cashgate-voucher-${orderId}.pdf"`);
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const bytes = new Uint8Array(await response.arrayBuffer());
    assert.equal(Buffer.from(bytes.subarray(0, 5)).toString('latin1'), '%PDF-');
    const text = await pdfText(bytes);
    for (const expected of [
      'Pix recebido / Pix received',
      'R$ 1.234,56',
      'BRL 1234.56',
      `ID fim a fim / End-to-end ID ${endToEndId}`,
      'Maria da Conceição',
      '***.982.247-**',
      'CASHGATE SANDBOX',
      merchant.merchantId,
      orderId,
      'Issued by Cashgate',
    ]) {
      assert.ok(text.includes(expected), `the voucher shows ${expected}:\n${text}`);
    }
  });

  it('links a succeeded bank transfer to its PDF receipt', async () => {
    const orderId = await bankTransfer();
    await sandbox(orderId, 'processing');
    await sandbox(orderId, 'succeeded');
    const response = await voucher(orderId);
    assert.equal(response.body.code, '200', response.body.msgEn);
    assert.match(response.body.data, LINK);
    const pdf = await fetchVoucher(response.body.data);
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers.get('content-type'), 'application/pdf');
    const text = await pdfText(new Uint8Array(await pdf.arrayBuffer()));
    const { endToEndId } = await details(orderId);
    for (const expected of [
      'Transferência bancária / Bank transfer',
      'R$ 80,10',
      'BRL 80.10',
      endToEndId,
      'João da Conceição',
      '***.982.247-**',
      'Banco do Brasil S.A.',
      '1234',
      '12345-6',
      'Test Merchant',
    ]) {
      assert.ok(text.includes(expected), `the voucher shows ${expected}:\n${text}`);
    }
    assert.ok(!text.includes('529.982.247-25') && !text.includes('52998224725'), 'the CPF is masked');
  });

  it("shows both parties' banks on a bank transfer: code and ISPB, with the payee's branch and account", async () => {
    const orderId = await bankTransfer('ITAÚ UNIBANCO S.A.');
    await sandbox(orderId, 'processing');
    await sandbox(orderId, 'succeeded');
    const { payer, payee } = parties(await voucherText(orderId));
    // The sandbox settles through ISPB 00000000 (its end-to-end ids say so): Banco do Brasil sent it.
    for (const expected of [
      'Banco / Bank Banco do Brasil S.A.',
      'Código do banco / Bank code 001',
      'ISPB 00000000',
      'Test Merchant',
    ]) {
      assert.ok(payer.includes(expected), `the payer part shows ${expected}:\n${payer}`);
    }
    for (const expected of [
      'Banco / Bank ITAÚ UNIBANCO S.A.',
      'Código do banco / Bank code 341',
      'ISPB 60701190',
      'Agência / Branch 1234',
      'Conta / Account 12345-6 (conta corrente / checking)',
    ]) {
      assert.ok(payee.includes(expected), `the payee part shows ${expected}:\n${payee}`);
    }

    // The payer's bank is the participant its end-to-end id names, here Efí's (364, ISPB 09089356).
    const settled = JSON.parse((await gw.gateway.orders.find(orderId))?.details ?? '{}') as Record<string, unknown>;
    await gw.gateway.store.transact((tx) =>
      tx
        .updateTable('orders')
        .set({ details: JSON.stringify({ ...settled, endToEndId: 'E09089356202501021304ABCDEFGHIJK' }) })
        .where('id', '=', orderId)
        .execute(),
    );
    const efi = parties(await voucherText(orderId));
    for (const expected of ['Código do banco / Bank code 364', 'ISPB 09089356']) {
      assert.ok(efi.payer.includes(expected), `the payer part shows ${expected}:\n${efi.payer}`);
    }
    assert.ok(efi.payee.includes('ISPB 60701190'), `the payee's bank is unchanged:\n${efi.payee}`);
  });

  it('shows the Pix key of a succeeded PIX transfer and the boleto kind of a paid boleto', async () => {
    const pixId = await transfer('/api/v3/bra/createTransferOrder', {
      currencyAmount: '12.00',
      channelType: 'PIX',
      accountType: 'EMAIL',
      accountId: 'joao@example.com.br',
    });
    await sandbox(pixId, 'processing');
    await sandbox(pixId, 'succeeded');
    const pixText = await pdfText(
      new Uint8Array(await (await fetchVoucher((await voucher(pixId)).body.data)).arrayBuffer()),
    );
    assert.ok(
      pixText.includes('Pix enviado / Pix sent') &&
        pixText.includes('joao@example.com.br') &&
        pixText.includes('R$ 12,00'),
      pixText,
    );
    const pixSent = await details(pixId);
    assert.ok(
      pixText.includes(`ID fim a fim / End-to-end ID ${pixSent.endToEndId}`),
      `a Pix sent shows its end-to-end id:\n${pixText}`,
    );

    const boletoId = await collect({ channelType: 'BOLETO', amount: '99.90' });
    await sandbox(boletoId, 'paid');
    const boletoText = await pdfText(
      new Uint8Array(await (await fetchVoucher((await voucher(boletoId)).body.data)).arrayBuffer()),
    );
    assert.ok(
      boletoText.includes('Boleto pago / Boleto paid') &&
        boletoText.includes('R$ 99,90') &&
        boletoText.includes('Não informado'),
      boletoText,
    );
  });

  it("shows a paid boleto's linha digitável and due date, and no end-to-end id", async () => {
    const boletoId = await collect({ channelType: 'BOLETO', amount: '99.90' });
    await sandbox(boletoId, 'paid');
    const text = (await voucherText(boletoId)).replace(/\s+/g, ' ');
    const settled = JSON.parse((await gw.gateway.orders.find(boletoId))?.details ?? '{}') as {
      linhaFormatted: string;
      boletoDueDate: string;
      endToEndId: string;
      authenticationCode: string;
    };
    const [year, month, day] = settled.boletoDueDate.split('-');
    for (const expected of [
      `Linha digitável / Boleto number ${settled.linhaFormatted}`,
      `Vencimento / Due date ${day}/${month}/${year}`,
      // BOLETO_BANK_CODE, 341 unless set.
      'Banco emissor / Issuing bank 341 — ITAÚ UNIBANCO S.A.',
      `Autenticação / Authentication code ${settled.authenticationCode}`,
    ]) {
      assert.ok(text.includes(expected), `the boleto voucher shows ${expected}:\n${text}`);
    }
    assert.match(settled.endToEndId, /^E/, 'the settlement has an id');
    assert.ok(!text.includes(settled.endToEndId), `no Pix end-to-end id on a boleto:\n${text}`);
    assert.ok(!/fim a fim|End-to-end/i.test(text), `no end-to-end row on a boleto:\n${text}`);
  });

  it('gives concurrent first requests one link, also for an order settled without a token', async () => {
    const orderId = await collect({});
    await sandbox(orderId, 'paid');
    const settled: Record<string, unknown> = await details(orderId);
    delete settled.voucherToken;
    await gw.gateway.store.transact((tx) =>
      tx
        .updateTable('orders')
        .set({ details: JSON.stringify(settled) })
        .where('id', '=', orderId)
        .execute(),
    );
    const links = await Promise.all(Array.from({ length: 6 }, () => voucher(orderId)));
    const distinct = new Set(links.map((r) => r.body.data as string));
    assert.equal(distinct.size, 1, JSON.stringify([...distinct]));
    assert.match([...distinct][0] ?? '', LINK);
    const rows = await gw.gateway.store.read
      .selectFrom('vouchers')
      .selectAll()
      .where('order_id', '=', orderId)
      .execute();
    assert.equal(rows.length, 1);
    assert.equal((await fetchVoucher([...distinct][0] ?? '')).status, 200);
  });

  it('says why an order that has not succeeded has no voucher', async () => {
    const pending = await collect({});
    const response = await voucher(pending);
    assert.equal(response.status, 400);
    assert.equal(response.body.code, '300');
    assert.equal(response.body.data, null);
    assert.equal(
      response.body.msgEn,
      'no voucher: the order is not successful (status WAITING_PAYMENT); a voucher exists once the payment succeeds',
    );

    const expired = await collect({});
    await sandbox(expired, 'expired');
    assert.match((await voucher(expired)).body.msgEn, /status EXPIRED/);

    const processing = await bankTransfer();
    await sandbox(processing, 'processing');
    assert.match((await voucher(processing)).body.msgEn, /status BANK_PROCESSING/);
    await sandbox(processing, 'failed');
    assert.match((await voucher(processing)).body.msgEn, /status FAILED/);
    assert.equal(
      await gw.gateway.store.read
        .selectFrom('vouchers')
        .select('token')
        .where('order_id', 'in', [pending, expired, processing])
        .executeTakeFirst(),
      undefined,
    );
  });

  it('says it in the merchant language', async () => {
    const portuguese = await gw.merchantWithKey({ language: 'pt-BR' });
    const response = await call(
      '/api/v3/bra/createCollectingOrder',
      { amount: '1.00', channelType: 'PIX', externalOrderId: unique('vc-pt') },
      portuguese.credentials,
    );
    const refused = await voucher(response.body.data.currencyOrderVo.orderId, portuguese.credentials);
    assert.equal(refused.body.code, '300');
    assert.match(refused.body.msg, /^sem comprovante: .*WAITING_PAYMENT/);
    assert.match(refused.body.msgEn, /^no voucher: /);
  });

  it("treats an unknown order, another merchant's order and a Kenya order as not found", async () => {
    const paid = await collect({});
    await sandbox(paid, 'paid');
    const kenya = await call('/api/v3/ken/createCollectingOrder', {
      amount: '1500',
      channelType: 'CHARGE',
      externalOrderId: unique('vc-ken'),
      phone: '254712345678',
      checkingPhone: '254712345123',
    });
    assert.equal(kenya.body.code, '200', kenya.body.msgEn);
    const cases: [string, Awaited<ReturnType<TestGateway['merchantWithKey']>>][] = [
      ['BC000000000000000000000000', merchant],
      [paid, other],
      [kenya.body.data.currencyOrderVo.orderId, merchant],
    ];
    for (const [orderId, caller] of cases) {
      const response = await voucher(orderId, caller.credentials);
      assert.equal(response.status, 400);
      assert.equal(response.body.code, '300');
      assert.match(response.body.msgEn, /^order not found/);
    }
  });

  it('validates the body: orderId required, no other members', async () => {
    const missing = await call(VOUCHER, {});
    assert.equal(missing.body.code, '300');
    assert.match(missing.body.msgEn, /orderId/);
    const extra = await call(VOUCHER, { orderId: 'BC1', externalOrderId: 'x' });
    assert.equal(extra.body.code, '300');
    assert.match(extra.body.msgEn, /unknown field: externalOrderId/);
    const long = await call(VOUCHER, { orderId: 'B'.repeat(65) });
    assert.equal(long.body.code, '300');
    assert.match(long.body.msgEn, /orderId must be at most 64 characters/);
  });

  it('refuses an unsigned call and a key without the query permission', async () => {
    const unsigned = await fetch(new URL(VOUCHER, gw.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json;charset=utf-8' },
      body: JSON.stringify({ orderId: 'BC1' }),
    });
    assert.equal(unsigned.status, 401);
    assert.equal(((await unsigned.json()) as { code: string }).code, '307');
    const collector = await gw.merchantWithKey({ permissions: ['bra.collection'] });
    const refused = await voucher('BC1', collector.credentials);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, '301');
  });

  it('answers 404 in plain text for an unknown or malformed token', async () => {
    for (const path of [
      `/vouchers/${'A'.repeat(32)}.pdf`,
      '/vouchers/short.pdf',
      `/vouchers/${'A'.repeat(32)}`,
      '/vouchers/..%2F..%2Fetc.pdf',
    ]) {
      const response = await fetch(new URL(path, gw.url));
      assert.equal(response.status, 404, path);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(await response.text(), 'voucher not found');
    }
  });
});
