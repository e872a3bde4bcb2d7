import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { isValidBoleto } from '@brazilian-utils/brazilian-utils';
import { hasError, isDynamicPix, isStaticPix, parsePix } from 'pix-utils';
import { verifyCallback } from '@cashgate/sdk';
import { SANDBOX_PIX_KEY } from '../src/config.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { startReceiver, type CallbackReceiver } from './support/receiver.js';

const COLLECT = '/api/v3/bra/createCollectingOrder';
let seq = 0;
const collection = (overrides: Record<string, unknown> = {}) => ({
  amount: '123.45',
  channelType: 'PIX',
  externalOrderId: `bra-col-${Date.now()}-${++seq}`,
  ...overrides,
});
const pixTransfer = (overrides: Record<string, unknown> = {}) => ({
  currencyAmount: '50.00',
  channelType: 'PIX',
  externalOrderId: `bra-pix-${Date.now()}-${++seq}`,
  personIdType: 'CPF',
  personId: '529.982.247-25',
  personName: 'Maria da Silva',
  accountType: 'EMAIL',
  accountId: 'maria@example.com.br',
  ...overrides,
});
const bankTransfer = (overrides: Record<string, unknown> = {}) => ({
  currencyAmount: '80.10',
  channelType: 'BANK',
  externalOrderId: `bra-bank-${Date.now()}-${++seq}`,
  personIdType: 'CNPJ',
  personId: '11.222.333/0001-81',
  personName: 'Loja Azul Ltda',
  accountType: 'CC',
  accountId: '12345-6',
  bankName: 'Banco do Brasil S.A.',
  agency: '1234',
  ...overrides,
});

/** Decodes a compact JWS and checks its RS256 signature with the published JWK, using node:crypto only. */
function verifyJws(jws: string, jwk: Record<string, unknown>): { header: any; payload: any } {
  const [header = '', payload = '', signature = ''] = jws.split('.');
  const key = createPublicKey({ key: jwk as never, format: 'jwk' });
  assert.ok(
    verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url')),
    'the JWS signature verifies',
  );
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString()),
  };
}

describe(`Brazil collections and transfers (${databaseLabel})`, () => {
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const call = (path: string, body: unknown, credentials = merchant.credentials) =>
    signedCall(gw.url, credentials, { path, body }, gw.clock.now());
  const sandbox = (orderId: string, event: string, extra: Record<string, unknown> = {}) =>
    gw.sandbox(orderId, event, extra);

  before(async () => {
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', CALLBACK_POLL_INTERVAL_MS: '50' } });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey({ language: 'pt-BR' });
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: receiver.url });
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  it('creates a PIX collection whose payParam is a valid static BR Code for the amount', async () => {
    const body = collection({ userInfoType: 'CPF', userInfoNo: '52998224725', userInfoName: 'Maria' });
    const response = await call(COLLECT, body);
    assert.equal(response.body.code, '200', response.body.msgEn);
    const data = response.body.data;
    assert.deepEqual(Object.keys(data).sort(), [
      'cashierCurrencyAmount',
      'cashierExpireTime',
      'cashierId',
      'cashierUrl',
      'currency',
      'currencyOrderVo',
      'isCreateOrder',
      'payType',
      'payTypeCode',
      'returnUrl',
      'userInfoName',
      'userInfoNo',
      'userInfoType',
    ]);
    assert.deepEqual(
      [data.payType, data.payTypeCode, data.isCreateOrder, data.currency, data.cashierCurrencyAmount],
      [101, 'PIX', true, 'BRL', '123.45'],
    );
    assert.deepEqual([data.userInfoType, data.userInfoNo, data.userInfoName], ['CPF', '52998224725', 'Maria']);
    const vo = data.currencyOrderVo;
    assert.deepEqual(Object.keys(vo).sort(), [
      'amount',
      'currency',
      'externalOrderId',
      'orderId',
      'orderStatus',
      'orderStatusCode',
      'orderTime',
      'payParam',
      'payType',
      'tradeNote',
    ]);
    assert.equal(vo.orderStatusCode, 1);
    assert.ok(Number.isSafeInteger(vo.orderTime));
    const pix = parsePix(vo.payParam);
    assert.ok(!hasError(pix), `pix-utils accepts the BR Code: ${JSON.stringify(pix)}`);
    assert.ok(isStaticPix(pix));
    assert.equal(pix.pixKey, SANDBOX_PIX_KEY);
    assert.equal(pix.transactionAmount, 123.45);
    assert.equal(pix.txid, vo.orderId.slice(0, 25));
  });

  it('creates a PIX_DYNAMIC collection whose location answers a signed API Pix cob', async () => {
    const response = await call(COLLECT, collection({ channelType: 'PIX_DYNAMIC', amount: 10, remark: 'Pedido 7' }));
    assert.equal(response.body.code, '200', response.body.msgEn);
    const vo = response.body.data.currencyOrderVo;
    assert.equal(response.body.data.payType, 103);
    const pix = parsePix(vo.payParam);
    assert.ok(!hasError(pix) && isDynamicPix(pix), JSON.stringify(pix));
    const location = new URL(`http://${pix.url}`);
    assert.match(location.pathname, /^\/pix\/v2\/[0-9a-f]{24}$/);
    assert.ok(!pix.url.startsWith('http'), 'tag 26.25 carries the location without a scheme');
    const jws = await (await fetch(new URL(location.pathname, gw.url))).text();
    const jwks = (await (await fetch(new URL('/pix/jwks.json', gw.url))).json()) as { keys: Record<string, unknown>[] };
    const { header, payload } = verifyJws(jws, jwks.keys[0] ?? {});
    assert.equal(header.alg, 'RS256');
    assert.equal(header.kid, jwks.keys[0]?.kid);
    assert.equal(payload.txid, vo.orderId);
    assert.match(payload.txid, /^[a-zA-Z0-9]{26,35}$/);
    assert.deepEqual(payload.valor, { original: '10.00' });
    assert.equal(payload.status, 'ATIVA');
    assert.equal(payload.chave, SANDBOX_PIX_KEY);
    assert.equal(payload.solicitacaoPagador, 'Pedido 7');
    assert.equal((await fetch(new URL('/pix/v2/000000000000000000000000', gw.url))).status, 404);
  });

  it('creates a BOLETO collection with a valid linha digitável for the amount, due in three days', async () => {
    const response = await call(
      COLLECT,
      collection({ channelType: 'BOLETO', amount: '1500.00', userInfoType: 'CNPJ', userInfoNo: '12ABC34501DE35' }),
    );
    assert.equal(response.body.code, '200', response.body.msgEn);
    const line = response.body.data.currencyOrderVo.payParam as string;
    assert.match(line, /^\d{47}$/);
    assert.ok(isValidBoleto(line), 'an independent validator accepts the linha digitável');
    assert.equal(line.slice(0, 3), '341');
    assert.equal(line.slice(-10), '0000150000', 'the amount in centavos');
    assert.equal(response.body.data.payType, 109);
    assert.ok(response.body.data.cashierExpireTime > gw.clock.now() + 2 * 86_400_000);
  });

  for (const [overrides, field, rule] of [
    [{ amount: '10.001' }, 'amount', /2 decimal places/],
    [{ amount: '0.00' }, 'amount', /from 0.01 to/],
    [{ amount: '100000000.00', channelType: 'BOLETO' }, 'amount', /to 99999999.99/],
    [{ amount: '10000000000.00' }, 'amount', /to 9999999999.99/],
    [{ channelType: 'CARD' }, 'channelType', /PIX, PIX_DYNAMIC, BOLETO/],
    [{ userInfoType: 'CPF', userInfoNo: '12345678900' }, 'userInfoNo', /valid CPF/],
    [{ userInfoType: 'CNPJ', userInfoNo: '11444777000162' }, 'userInfoNo', /valid CNPJ/],
    [{ userInfoNo: '52998224725' }, 'userInfoType', /together/],
    [{ externalOrderId: '' }, 'externalOrderId', /at least 1/],
  ] as const) {
    it(`refuses a collection with ${JSON.stringify(overrides)} naming ${field}`, async () => {
      const response = await call(COLLECT, collection(overrides));
      assert.equal(response.body.code, '300');
      assert.match(response.body.msgEn, new RegExp(`^${field} `));
      assert.match(response.body.msgEn, rule);
      assert.notEqual(response.body.msg, response.body.msgEn, 'msg is in the merchant language (pt-BR)');
    });
  }

  it('pays a collection and answers the query with the extra members and desc: null', async () => {
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/bra.collection.PIX`, {
      reason: 'test fee',
      percentBps: 150,
      fixed: '0.10',
    });
    const body = collection({ amount: '200.00' });
    const created = (await call(COLLECT, body)).body.data.currencyOrderVo;
    const waiting = receiver.received.length;
    assert.equal((await sandbox(created.orderId, 'paid')).body.orderStatus, 2);
    const [got] = (await receiver.waitFor(waiting + 1)).slice(waiting);
    assert.ok(got);
    const payload = JSON.parse(got.body);
    assert.equal(payload.payParam, created.payParam, 'the payment callback carries the BR Code');
    assert.deepEqual(
      [payload.orderFee, payload.orderActualAmount, payload.orderStatusCode, payload.payType],
      ['3.10', '200.00', 2, 101],
    );
    assert.ok(verifyCallback(merchant.credentials.secretKey, payload, got.headers as never));

    const query = await call('/api/v3/bra/query/collectingOrder', {
      externalOrderId: body.externalOrderId,
      orderId: created.orderId,
    });
    assert.ok(
      Object.hasOwn(query.body, 'desc') && (query.body as { desc?: unknown }).desc === null,
      'desc: null in the Brazil collection query',
    );
    const [record] = query.body.data;
    assert.deepEqual(
      [
        record.requestType,
        record.businessId,
        record.userType,
        record.operatorId,
        record.expansionParam,
        record.orderEntryAmount,
        record.orderStatusCode,
      ],
      [1, merchant.merchantId, 1, 0, created.payParam, '196.90', 'PAYMENT_SUCCESS'],
    );
    assert.equal(record.channelOrderId, created.orderId.slice(0, 25), 'the Pix txid the rail knows it by');
    const other = await call('/api/v3/ken/query/collectingOrder', {
      externalOrderId: body.externalOrderId,
      orderId: created.orderId,
    });
    assert.match(other.body.msgEn, /order not found/, 'a Brazil order is not found in the Kenya area');
    assert.ok(!Object.hasOwn(other.body, 'desc'));
  });

  it('runs PIX transfers on both equivalent paths as one kind of order', async () => {
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '1000.00',
      reason: 'float',
    });
    const body = pixTransfer();
    const first = await call('/api/v3/bra/createTransferOrder', body);
    assert.equal(first.body.code, '200', first.body.msgEn);
    assert.deepEqual(Object.keys(first.body.data).sort(), [
      'currencyType',
      'externalOrderId',
      'orderId',
      'orderStatus',
    ]);
    const again = await call('/api/v3/bra/pix/createTransferOrder', body);
    assert.equal(
      again.body.data.orderId,
      first.body.data.orderId,
      'the same externalOrderId names the same transfer on either path',
    );
    const orderId = first.body.data.orderId as string;
    await sandbox(orderId, 'processing');
    const waiting = receiver.received.length;
    await sandbox(orderId, 'succeeded');
    const [got] = (await receiver.waitFor(waiting + 1)).slice(waiting);
    assert.ok(got);
    const payload = JSON.parse(got.body);
    assert.deepEqual(Object.keys(payload).sort(), [
      'accountNo',
      'accountType',
      'currencyType',
      'errorMsg',
      'errorMsgEn',
      'externalOrderId',
      'markStatus',
      'orderAmount',
      'orderFee',
      'orderId',
      'orderPayTime',
      'orderStatus',
      'orderStatusCode',
      'orderTime',
      'payType',
      'payTypeName',
      'tradeNote',
      'userInfoName',
      'userInfoNo',
      'userInfoType',
    ]);
    assert.deepEqual(
      [
        payload.payType,
        payload.orderStatusCode,
        payload.userInfoNo,
        payload.userInfoType,
        payload.accountType,
        payload.accountNo,
        typeof payload.markStatus,
      ],
      [201, 8, '52998224725', 'CPF', 'EMAIL', 'maria@example.com.br', 'number'],
    );
    const [record] = (await call('/api/v3/bra/query/transferOrder', { externalOrderId: body.externalOrderId, orderId }))
      .body.data;
    assert.deepEqual(
      [record.orderStatus, record.payTypeCode, record.accountName, typeof record.orderFee],
      [8, 'PIX', 'Maria da Silva', 'string'],
    );
  });

  for (const [accountType, accountId] of [
    ['CPF', '12345678900'],
    ['CNPJ', '11444777000162'],
    ['PHONE', '11999998888'],
    ['EMAIL', 'not-an-email'],
    ['EVP', 'not-a-uuid'],
  ] as const) {
    it(`refuses a PIX transfer to the ${accountType} key ${accountId}`, async () => {
      const response = await call('/api/v3/bra/createTransferOrder', pixTransfer({ accountType, accountId }));
      assert.equal(response.body.code, '300');
      assert.match(response.body.msgEn, /^accountId must be/);
    });
  }

  for (const [overrides, field] of [
    [{ personId: '111.111.111-11' }, 'personId'],
    [{ bankName: 'Banco Imaginário S.A.' }, 'bankName'],
    [{ agency: '12345' }, 'agency'],
    [{ accountId: '12a45' }, 'accountId'],
    [{ accountType: 'CPF' }, 'accountType'],
    [{ personName: 'x'.repeat(256) }, 'personName'],
  ] as const) {
    it(`refuses a bank transfer with ${JSON.stringify(overrides).slice(0, 40)} naming ${field}`, async () => {
      const response = await call('/api/v3/bra/bank/createTransferOrder', bankTransfer(overrides));
      assert.equal(response.body.code, '300');
      assert.match(response.body.msgEn, new RegExp(`^${field} `));
    });
  }

  it('freezes a bank transfer and releases it when the bank rejects it', async () => {
    const balance = async () =>
      (
        await signedCall(
          gw.url,
          merchant.credentials,
          { method: 'GET', path: '/api/v3/bra/query/balance' },
          gw.clock.now(),
        )
      ).body.data[0];
    const start = await balance();
    const created = await call('/api/v3/bra/bank/createTransferOrder', bankTransfer());
    assert.equal(created.body.code, '200', created.body.msgEn);
    assert.equal((await balance()).accountFreezeAmount, '80.10');
    const rejected = await sandbox(created.body.data.orderId, 'bank_rejected');
    assert.equal(rejected.body.orderStatus, 4);
    assert.deepEqual(await balance(), start);
    const released = (
      await call('/api/v3/bra/query/transferOrder', {
        externalOrderId: created.body.data.externalOrderId,
        orderId: created.body.data.orderId,
      })
    ).body.data[0];
    assert.deepEqual([released.orderFee, released.orderEntryAmount], ['0.00', '0.00'], 'nothing charged once released');
    const [record] = (
      await call('/api/v3/bra/query/transferOrder', {
        externalOrderId: created.body.data.externalOrderId,
        orderId: created.body.data.orderId,
      })
    ).body.data;
    assert.equal(record.errorMsgEn, 'the receiving bank rejected the transfer');
    assert.equal(record.errorMsg, 'o banco recebedor rejeitou a transferência', 'errorMsg in the merchant language');
  });

  it('refuses a transfer beyond the BRL balance', async () => {
    const poor = await gw.merchantWithKey();
    const response = await call('/api/v3/bra/bank/createTransferOrder', bankTransfer(), poor.credentials);
    assert.match(response.body.msgEn, /insufficient balance: the transfer needs 80.10 BRL/);
  });
});
