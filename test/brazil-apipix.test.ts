import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, afterEach, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { MAX_BACKGROUND_HANDOVERS } from '../src/orders/service.js';
import { ApiPixClient, PixError } from '../src/rails/pix/api-pix-client.js';
import { brCodeValue, crc16ccitt, parseBrCode } from '../src/rails/pix/br-code.js';
import { consoleSignIn } from './support/console.js';
import { processMerchant, startCrashRig, type CrashRig } from './support/crash-rig.js';
import { databaseLabel } from './support/database.js';
import { freePort } from './support/fake-daraja.js';
import { apiPixTestEnv, PSP_TEST, startFakePsp, type FakePsp } from './support/fake-psp.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { sleep, startReceiver, until, type CallbackReceiver } from './support/receiver.js';

const COLLECT = '/api/v3/bra/createCollectingOrder';
const PIX_TRANSFER = '/api/v3/bra/createTransferOrder';
const BANK_TRANSFER = '/api/v3/bra/bank/createTransferOrder';

describe('API Pix configuration', () => {
  it('refuses BRAZIL_RAIL=apipix at start-up, naming each missing variable; the sandbox stays the default', () => {
    assert.throws(
      () => loadConfig({ BRAZIL_RAIL: 'apipix', PIX_PSP_CLIENT_ID: 'id' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        for (const name of ['PIX_PSP_BASE_URL', 'PIX_PSP_CLIENT_SECRET', 'PIX_PSP_CERT', 'PIX_PSP_KEY', 'PIX_KEY'])
          assert.ok(
            error.problems.some((p) => p.startsWith(`${name}:`)),
            `${name} is named: ${error.message}`,
          );
        assert.ok(!error.problems.some((p) => p.startsWith('PIX_PSP_CLIENT_ID:')));
        return true;
      },
    );
    assert.equal(loadConfig({}).brazil.rail, 'sandbox');
  });

  it('resolves the token and send addresses against the base, and refuses a certificate file that holds none', () => {
    const env = {
      BRAZIL_RAIL: 'apipix',
      PIX_PSP_BASE_URL: 'https://pix.example.com/api/v2/',
      PIX_PSP_CLIENT_ID: 'id',
      PIX_PSP_CLIENT_SECRET: 'secret-value',
      PIX_PSP_CERT: PSP_TEST.certPath,
      PIX_PSP_KEY: PSP_TEST.keyPath,
      PIX_KEY: PSP_TEST.pixKey,
    };
    const config = loadConfig(env).brazil;
    assert.ok(config.rail === 'apipix');
    assert.equal(config.apiPix.baseUrl, 'https://pix.example.com/api/v2');
    assert.equal(config.apiPix.tokenUrl, 'https://pix.example.com/api/v2/oauth/token');
    assert.equal(config.apiPix.sendBaseUrl, 'https://pix.example.com');
    assert.throws(
      () => loadConfig({ ...env, PIX_PSP_CERT: PSP_TEST.keyPath }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /PIX_PSP_CERT=".*": must be the path of a readable PEM file holding a certificate/);
        assert.doesNotMatch(error.message, /secret-value/);
        return true;
      },
    );
  });

  it('cannot reach the PSP without the client certificate the PSP trusts (mTLS)', async () => {
    const psp = await startFakePsp();
    try {
      const client = new ApiPixClient(
        {
          baseUrl: `${psp.url}/v2`,
          sendBaseUrl: psp.url,
          tokenUrl: `${psp.url}/oauth/token`,
          clientId: PSP_TEST.clientId,
          clientSecret: PSP_TEST.clientSecret,
          certPem: readFileSync(PSP_TEST.rogueCertPath, 'utf8'),
          keyPem: readFileSync(PSP_TEST.rogueKeyPath, 'utf8'),
          caPem: readFileSync(PSP_TEST.caPath, 'utf8'),
          timeoutMs: 2000,
        },
        Date.now,
      );
      await assert.rejects(
        client.api('cob-get', 'GET', '/cob/abcdefghijklmnopqrstuvwxyz12'),
        (error: unknown) => error instanceof PixError,
      );
      await client.close();
    } finally {
      await psp.close();
    }
  });
});

describe(`Brazil on API Pix (${databaseLabel})`, () => {
  let psp: FakePsp;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  let seq = 0;
  const collect = async (overrides: Record<string, unknown> = {}) => {
    const body = {
      amount: '125.50',
      channelType: 'PIX',
      externalOrderId: `pix-${Date.now()}-${++seq}`,
      remark: 'Pedido 42',
      ...overrides,
    };
    const response = await call(COLLECT, body);
    assert.equal(response.body.code, '200', response.body.msgEn);
    return { body, orderId: response.body.data.currencyOrderVo.orderId as string, data: response.body.data };
  };
  const order = async (orderId: string) => {
    const found = await gw.gateway.orders.find(orderId);
    assert.ok(found !== undefined);
    return found;
  };
  const txidOf = async (orderId: string) => (await order(orderId)).channel_order_id ?? '';
  /** A Pix transfer to an e-mail key; its order id once the create was answered 200. */
  const sendToKey = async (amount: string, key: string, name: string) => {
    const created = await call(PIX_TRANSFER, {
      currencyAmount: amount,
      channelType: 'PIX',
      externalOrderId: `send-${Date.now()}-${++seq}`,
      personIdType: 'CPF',
      personId: '52998224725',
      personName: name,
      accountType: 'EMAIL',
      accountId: key,
    });
    assert.equal(created.body.code, '200', created.body.msgEn);
    return created.body.data.orderId as string;
  };
  const callbacksFor = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((json) => json.orderId === orderId);

  before(async () => {
    psp = await startFakePsp({ webhookRetryMs: 100 });
    const port = await freePort();
    gw = await startTestGateway({ env: apiPixTestEnv(psp, port) });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: `${receiver.url}/cb` });
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '100000',
      reason: 'float for payouts',
    });
    // The reconciliation worker registers the webhook with the PSP.
    await until(() => assert.equal(psp.webhooks.size, 1));
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    // Balanced journals are not enough: no return may be posted twice, nor a Pix system account go negative.
    const system = await gw.gateway.store.read
      .selectFrom('ledger_accounts')
      .select(['code', 'balance'])
      .where('code', 'in', ['system/BRL/pix_returns', 'system/BRL/pix_unmatched'])
      .execute();
    for (const account of system) assert.ok(account.balance >= 0, `${account.code} is ${account.balance}`);
    const sent = await gw.gateway.store.read
      .selectFrom('ledger_journals')
      .select('memo')
      .where('kind', '=', 'pix.return.sent')
      .execute();
    const returned = sent.map((j) => /^Pix (\S+)/.exec(j.memo ?? '')?.[1]);
    assert.equal(new Set(returned).size, returned.length, 'each return posted once');
    await gw.close();
    await psp.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  it('registers its webhook under an unguessable path of its public address', () => {
    const [key, url] = [...psp.webhooks.entries()][0] ?? [];
    assert.equal(key, PSP_TEST.pixKey);
    assert.match(url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/rails\/pix\/[0-9a-f]{32}$/);
  });

  it('makes each PIX collection a charge at the PSP and answers with the PSP’s code; a webhook confirmed by GET /pix pays it', async () => {
    const created = await collect({ userInfoType: 'CPF', userInfoNo: '529.982.247-25', userInfoName: 'Maria Souza' });
    const txid = await txidOf(created.orderId);
    assert.match(txid, /^[a-zA-Z0-9]{26,35}$/);
    const cob = psp.cobs.get(txid);
    assert.ok(cob !== undefined, 'the charge exists at the PSP');
    assert.equal(cob.valor.original, '125.50');
    assert.equal(cob.chave, PSP_TEST.pixKey);
    assert.deepEqual(cob.devedor, { cpf: '52998224725', nome: 'Maria Souza' });
    assert.equal(cob.solicitacaoPagador, 'Pedido 42');
    assert.ok(cob.calendario.expiracao > 0);
    const payParam = created.data.currencyOrderVo.payParam as string;
    assert.equal(payParam, cob.pixCopiaECola, 'the merchant gets the PSP’s copy-and-paste code');
    assert.equal(payParam.slice(-4), crc16ccitt(payParam.slice(0, -4)));
    assert.equal(brCodeValue(parseBrCode(payParam), '26', '00'), 'br.gov.bcb.pix');
    const repeat = await call(COLLECT, created.body);
    assert.equal(repeat.body.data.currencyOrderVo.payParam, payParam, 'an identical repeat gets the same code');
    assert.equal(psp.requests.filter((r) => r.endpoint === 'cob-put').length >= 1, true);

    const pix = await psp.pay(txid, { payer: { cpf: '52998224725', nome: 'Maria Souza' } });
    await psp.idle();
    await until(async () => assert.equal((await order(created.orderId)).status, 2));
    const paid = await order(created.orderId);
    const details = JSON.parse(paid.details) as Record<string, string>;
    assert.equal(details.endToEndId, pix.endToEndId, 'the PSP’s end-to-end id is the order’s');
    assert.equal(details.payerName, 'Maria Souza', 'the payer the PSP named is kept');
    assert.equal(paid.actual_amount, 12550);
    assert.ok(
      psp.requests.some((r) => r.endpoint === 'pix-get' && r.path.endsWith(pix.endToEndId)),
      'the webhook was confirmed with GET /pix/{e2eid}',
    );
    await until(() => assert.equal(callbacksFor(created.orderId).length, 1));
    const messages = await gw.admin('GET', `/admin/v1/orders/${created.orderId}/rail-messages`);
    const endpoints = messages.body.messages.map((m: { endpoint: string }) => m.endpoint);
    assert.ok(endpoints.includes('cob-put') && endpoints.includes('webhook-pix') && endpoints.includes('pix-get'));
    assert.doesNotMatch(JSON.stringify(messages.body), /52998224725/, 'documents are masked');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /cashgate_pix_psp_requests_total\{operation="cob-put",outcome="ok"\} \d+/);
    assert.match(metrics, /cashgate_pix_webhooks_total\{kind="pix",result="confirmed"\} \d+/);
  });

  it('never trusts a webhook body: a forged Pix changes nothing and is answered 200', async () => {
    const created = await collect();
    const txid = await txidOf(created.orderId);
    const webhook = [...psp.webhooks.values()][0] ?? '';
    const forged = await fetch(`${webhook}/pix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        pix: [
          { endToEndId: 'E00000000202611241200abcdefghijk', txid, valor: '125.50', horario: new Date().toISOString() },
        ],
      }),
    });
    assert.equal(forged.status, 200);
    await sleep(300);
    assert.equal((await order(created.orderId)).status, 1, 'the order still waits for its payment');
    const wrongPath = await fetch(`${webhook.replace(/[0-9a-f]{32}$/, '0'.repeat(32))}/pix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"pix":[]}',
    });
    assert.equal(wrongPath.status, 404);
  });

  it('credits a Pix once however often and in whatever order its webhook comes', async () => {
    const first = await collect({ amount: '6.10' });
    const second = await collect({ amount: '6.20' });
    const firstPix = await psp.pay(await txidOf(first.orderId), { webhook: 'twice' });
    await psp.idle();
    const before = psp.webhookDeliveries.length;
    const secondPix = await psp.pay(await txidOf(second.orderId));
    await psp.idle();
    // The first payment's webhook again, after the second's: late, repeated, out of order.
    const index = psp.webhookDeliveries.findIndex((d) => JSON.stringify(d.body).includes(firstPix.endToEndId));
    assert.ok(index >= 0 && index < before, 'the first webhook was delivered');
    assert.equal(await psp.redeliver(index), 200);
    await until(async () => {
      assert.equal((await order(first.orderId)).status, 2);
      assert.equal((await order(second.orderId)).status, 2);
    });
    await sleep(300);
    assert.equal((await order(first.orderId)).actual_amount, 610, 'credited once');
    assert.equal((await order(second.orderId)).actual_amount, 620);
    assert.equal(callbacksFor(first.orderId).length, 1, 'one callback');
    const received = await gw.gateway.store.read
      .selectFrom('pix_received')
      .select('e2eid')
      .where('e2eid', 'in', [firstPix.endToEndId, secondPix.endToEndId])
      .execute();
    assert.equal(received.length, 2);
    const journals = await gw.gateway.store.read
      .selectFrom('ledger_journals')
      .select('id')
      .where('order_id', '=', first.orderId)
      .where('kind', '=', 'collection.paid')
      .execute();
    assert.equal(journals.length, 1, 'one ledger posting');
  });

  it('finds a Pix whose webhook was lost by listing received Pix', async () => {
    const created = await collect({ channelType: 'PIX_DYNAMIC', amount: '10.00' });
    const txid = await txidOf(created.orderId);
    await psp.pay(txid, { webhook: 'skip' });
    await until(async () => assert.equal((await order(created.orderId)).status, 2));
    assert.ok(psp.requests.some((r) => r.endpoint === 'pix-list'));
  });

  it('returns a second Pix for a paid order to its payer, with the money in and out of the ledger', async () => {
    const created = await collect({ amount: '7.89' });
    const txid = await txidOf(created.orderId);
    await psp.pay(txid);
    await until(async () => assert.equal((await order(created.orderId)).status, 2));
    const second = await psp.pay(txid, { force: true });
    await until(() =>
      assert.ok(
        psp.requests.some((r) => r.endpoint === 'devolucao-put' && r.path.includes(second.endToEndId)),
        'a refund was asked for',
      ),
    );
    await until(async () => {
      const rows = await gw.gateway.store.read
        .selectFrom('pix_received')
        .selectAll()
        .where('e2eid', '=', second.endToEndId)
        .execute();
      assert.equal(rows[0]?.disposition, 'returned');
    });
    assert.equal((await order(created.orderId)).actual_amount, 789, 'only the first Pix was credited');
    // The merchant sees both Pix on the order's console page, and the returned one among its returns.
    const staff = await consoleSignIn(gw, merchant.merchantId);
    const page = await staff.get(`/console/orders/${created.orderId}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /Pix received/);
    assert.ok(page.text.includes(second.endToEndId) && page.text.includes('Returned to the payer'), 'the return');
    assert.ok(page.text.includes('Credited to the order'), 'the first Pix');
    const returns = await staff.get('/console/pix-returns');
    assert.equal(returns.status, 200);
    assert.ok(returns.text.includes(second.endToEndId) && returns.text.includes(created.orderId));
    assert.ok((await staff.get('/console/orders')).text.includes('href="/console/pix-returns"'), 'linked');
    const listed = await gw.admin('GET', '/admin/v1/pix/received?disposition=returned');
    assert.ok(listed.body.pix.some((p: { e2eid: string }) => p.e2eid === second.endToEndId));
  });

  it('keeps a Pix that no charge asked for for the operator, and returns it on request; a failed return is asked for again', async () => {
    const pix = await psp.payKey(PSP_TEST.pixKey, '21.00', { payer: { cpf: '52998224725', nome: 'José Pagador' } });
    await psp.idle();
    const unmatched = async () =>
      ((await gw.admin('GET', '/admin/v1/pix/received?disposition=unmatched')).body.pix as Record<string, any>[]).find(
        (p) => p.e2eid === pix.endToEndId,
      );
    await until(async () => assert.ok((await unmatched()) !== undefined, 'listed as unmatched'));
    const row = (await unmatched()) ?? {};
    assert.equal(row.amount, '21.00');
    assert.equal(row.orderId, null);
    assert.equal(row.payerDocument, '529••••••25', 'the payer’s document is masked');
    const journals = await gw.gateway.store.read
      .selectFrom('ledger_journals')
      .select('kind')
      .where('memo', 'like', `%${pix.endToEndId}%`)
      .execute();
    assert.deepEqual(
      journals.map((j) => j.kind),
      ['pix.unmatched.received'],
      'the money is in the ledger, nobody’s yet',
    );
    assert.equal(psp.requests.filter((r) => r.path.includes(`${pix.endToEndId}/devolucao`)).length, 0, 'not returned');

    // The operator has it returned; the payer's institution does not take it back.
    psp.scriptRefund(pix.endToEndId, { status: 'NAO_REALIZADO', motivo: 'Conta do pagador encerrada' });
    const [asked, twin] = await Promise.all([
      gw.admin('POST', `/admin/v1/pix/received/${pix.endToEndId}/return`, { reason: 'returned to the payer' }),
      gw.admin('POST', `/admin/v1/pix/received/${pix.endToEndId}/return`, { reason: 'returned to the payer' }),
    ]).then((both) => both.sort((a, b) => a.status - b.status));
    assert.equal(twin.status, 409, 'two requests at once return it once');
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    assert.ok(['returning', 'return_failed'].includes(asked.body.disposition));
    const firstRefund = asked.body.refundId as string;
    const state = async () => {
      const found = await gw.gateway.store.read
        .selectFrom('pix_received')
        .selectAll()
        .where('e2eid', '=', pix.endToEndId)
        .executeTakeFirst();
      assert.ok(found !== undefined);
      return found;
    };
    await until(async () => assert.equal((await state()).disposition, 'return_failed'));
    assert.equal((await state()).reason, 'Conta do pagador encerrada');
    psp.scriptRefund(pix.endToEndId, { status: 'DEVOLVIDO' });
    const again = await gw.admin('POST', `/admin/v1/pix/received/${pix.endToEndId}/return`, {
      reason: 'returned to the payer',
    });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.notEqual(again.body.refundId, firstRefund, 'a new refund id: the failed one is spent at the PSP');
    await until(async () => assert.equal((await state()).disposition, 'returned'));
    const kinds = await gw.gateway.store.read
      .selectFrom('ledger_journals')
      .select('kind')
      .where('memo', 'like', `%${pix.endToEndId}%`)
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      kinds.map((j) => j.kind),
      ['pix.unmatched.received', 'pix.unmatched.returning', 'pix.return.sent'],
    );
    const done = await gw.admin('POST', `/admin/v1/pix/received/${pix.endToEndId}/return`, {
      reason: 'returned to the payer',
    });
    assert.equal(done.status, 409);
    assert.match(done.body.error.message, /cannot be returned: it is returned/);
    const unknown = await gw.admin('POST', '/admin/v1/pix/received/E00000000202611241200zzzzzzzzzzz/return', {
      reason: 'returned to the payer',
    });
    assert.equal(unknown.status, 404);
    const badFilter = await gw.admin('GET', '/admin/v1/pix/received?disposition=credited');
    assert.equal(badFilter.status, 400);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /cashgate_pix_returns_total\{result="failed"\} [1-9]/);
    assert.match(metrics, /cashgate_pix_returns_total\{result="returned"\} [1-9]/);
  });

  it('takes the aggregate cashier’s Pix through the PSP: an amount its rules refuse is returned, the exact one pays', async () => {
    const opened = await call('/api/v3/polymerize/createCollectingOrder', {
      externalOrderId: `chk-${Date.now()}`,
      dynamicAmountNotify: 2,
    });
    assert.equal(opened.body.code, '200', opened.body.msgEn);
    const chosen = await fetch(new URL(new URL(opened.body.data as string).pathname, gw.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ amount: '20.00', method: 'PIX' }).toString(),
      redirect: 'manual',
    });
    assert.equal(chosen.status, 303);
    const cashierId = /^\/cashier\/([^?]+)/.exec(chosen.headers.get('location') ?? '')?.[1] ?? '';
    const made = await gw.gateway.orders.findByCashier(cashierId);
    assert.ok(made !== undefined);
    await until(async () => assert.match(await txidOf(made.id), /^[a-zA-Z0-9]{26,35}$/));
    const txid = await txidOf(made.id);
    assert.equal(psp.cobs.get(txid)?.valor.original, '20.00', 'a charge at the PSP');
    const page = await (await fetch(new URL(`/cashier/${cashierId}`, gw.url))).text();
    const code = psp.cobs.get(txid)?.pixCopiaECola as string | undefined;
    assert.ok(code !== undefined && code.length > 20 && page.includes(code), 'the payer is shown the PSP’s code');

    const short = await psp.pay(txid, { valor: '19.00' });
    await until(() =>
      assert.ok(
        psp.requests.some((r) => r.endpoint === 'devolucao-put' && r.path.includes(short.endToEndId)),
        'a refund was asked for',
      ),
    );
    assert.equal((await order(made.id)).status, 1, 'refused: the order still waits');
    const exact = await psp.pay(txid, { force: true });
    await until(async () => assert.equal((await order(made.id)).status, 2));
    const details = JSON.parse((await order(made.id)).details) as Record<string, string>;
    assert.equal(details.endToEndId, exact.endToEndId, 'the PSP’s end-to-end id');
    await until(() => assert.equal(callbacksFor(made.id).length, 1));
  });

  it('removes the charge of an expired order at the PSP, and returns a Pix that arrives late', async () => {
    const created = await collect({ amount: '3.00' });
    const txid = await txidOf(created.orderId);
    await gw.gateway.orders.applyEvent(created.orderId, 'expired', { source: 'test' });
    await until(() => assert.equal(psp.cobs.get(txid)?.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR'));
    const late = await psp.pay(txid, { force: true });
    await until(() =>
      assert.ok(
        psp.requests.some((r) => r.endpoint === 'devolucao-put' && r.path.includes(late.endToEndId)),
        'a refund was asked for',
      ),
    );
    assert.equal((await order(created.orderId)).status, 3, 'the order stays expired');
  });

  it('asks for the charge before making it again when the PSP’s answer was lost', async () => {
    psp.failNext('cob-put', 'timeout-after');
    const created = await collect({ amount: '4.00' });
    assert.equal(created.data.currencyOrderVo.payParam, '', 'the answer was lost: no code yet');
    await until(async () => {
      const repeat = await call(COLLECT, created.body);
      assert.notEqual(repeat.body.data.currencyOrderVo.payParam, '');
    });
    assert.ok(
      psp.requests.some((r) => r.endpoint === 'cob-get'),
      'the PSP was asked first',
    );
    assert.equal([...psp.cobs.values()].filter((c) => c.valor.original === '4.00').length, 1, 'one charge');
  });

  it('sends a transfer by Pix key through the send extension and settles it on the PSP’s confirmed result', async () => {
    const orderId = await sendToKey('50.00', 'fornecedor@example.com', 'João Fornecedor');
    await until(async () => assert.equal((await order(orderId)).status, 8));
    const sent = [...psp.sent.values()].find((s) => s.favorecido?.chave === 'fornecedor@example.com');
    assert.ok(sent !== undefined);
    assert.equal(sent.valor, '50.00');
    assert.equal(sent.pagador.chave, PSP_TEST.pixKey);
    assert.ok(
      psp.requests.some((r) => r.endpoint === 'send-get'),
      'the result was confirmed by a status query',
    );
  });

  it('fails a transfer the PSP did not make, with its reason, and releases the money', async () => {
    psp.scriptSend('recusado@example.com', { status: 'NAO_REALIZADO', motivo: 'Conta destino encerrada' });
    const orderId = await sendToKey('12.00', 'recusado@example.com', 'Ana');
    await until(async () => assert.equal((await order(orderId)).status, 16));
    assert.equal((await order(orderId)).error_msg_en, 'Conta destino encerrada', 'the PSP’s reason is the errorMsg');
    assert.equal((await order(orderId)).fee, 0, 'amount and fee are released');
  });

  it('sends a transfer to an account by ISPB, branch and account, and asks before sending again after a lost answer', async () => {
    psp.failNext('send-put', 'timeout-after');
    const body = {
      currencyAmount: '9.00',
      channelType: 'BANK',
      externalOrderId: `ted-${Date.now()}`,
      personIdType: 'CPF',
      personId: '52998224725',
      personName: 'Maria Souza',
      accountType: 'CC',
      accountId: '12345-6',
      bankName: 'Banco do Brasil S.A.',
      agency: '1234',
    };
    const created = await call(BANK_TRANSFER, body);
    assert.equal(created.body.code, '200', created.body.msgEn);
    const orderId = created.body.data.orderId as string;
    await until(async () => assert.equal((await order(orderId)).status, 8));
    const sends = [...psp.sent.values()].filter((s) => s.favorecido?.contaBanco?.agencia === '1234');
    assert.equal(sends.length, 1, 'sent once');
    assert.equal(sends[0]?.favorecido.contaBanco.codigoBanco, '00000000');
    assert.ok(psp.requests.some((r) => r.endpoint === 'send-get'));
  });

  it('makes a transfer’s create wait for its own send once too many sends are under way', async () => {
    // The PSP takes the first sends slowly (eight seconds each, long enough that they are still
    // under way when the next create comes even on a machine busy with other work; they hold every
    // connection to it, so the last of them end after about sixteen): their creates answer before
    // the PSP has taken them. Past the limit of sends under way, a create waits until the PSP took
    // its own (status 2).
    psp.delayNext('send-put', 8_000, MAX_BACKGROUND_HANDOVERS);
    const first = await Promise.all(
      Array.from({ length: MAX_BACKGROUND_HANDOVERS }, (_, i) => sendToKey('1.00', `lote${i}@example.com`, 'Lote')),
    );
    const waited = await sendToKey('1.00', 'lote-extra@example.com', 'Lote');
    assert.equal((await order(waited)).status, 2, 'past the limit, the create waited for the PSP to take its send');
    await until(async () => {
      for (const id of [...first, waited]) assert.equal((await order(id)).status, 8, `${id} was paid`);
    }, 40_000);
  });

  it('says plainly that boletos are not yet live', async () => {
    const response = await call(COLLECT, {
      amount: '10.00',
      channelType: 'BOLETO',
      externalOrderId: `b-${Date.now()}`,
    });
    assert.equal(response.body.code, '300');
    assert.match(response.body.msgEn, /channelType BOLETO is not yet live/);
  });
});

describe(`API Pix across a crash (${databaseLabel})`, () => {
  let psp: FakePsp;
  let receiver: CallbackReceiver;
  let rig: CrashRig;

  before(async () => {
    psp = await startFakePsp({ webhookRetryMs: 100 });
    receiver = await startReceiver();
    rig = await startCrashRig('apipix-crash');
  });
  afterEach(() => rig.killAll());
  after(async () => {
    await psp.close();
    await receiver.close();
    await rig.close();
  });

  it('makes the charge and sends the payout exactly once when the node dies while the PSP holds its answers', async () => {
    const port = await freePort();
    const env = { ...apiPixTestEnv(psp, port), PIX_PSP_TIMEOUT_MS: '20000', ...rig.env };
    const first = await rig.start(env);
    const { credentials } = await processMerchant(first, {
      callbackUrl: `${receiver.url}/cb`,
      currency: 'BRL',
      amount: '1000',
    });
    // The PSP makes the charge and takes the send, and holds both answers: the node dies meanwhile.
    psp.failNext('cob-put', 'timeout-after');
    psp.failNext('send-put', 'timeout-after');
    const collect = {
      amount: '33.10',
      channelType: 'PIX',
      externalOrderId: `crash-pix-${Date.now()}`,
    };
    const payee = `crash-${Date.now()}@example.com`;
    const transfer = {
      currencyAmount: '44.20',
      channelType: 'PIX',
      externalOrderId: `crash-send-${Date.now()}`,
      personIdType: 'CPF',
      personId: '52998224725',
      personName: 'Ana Recebedora',
      accountType: 'EMAIL',
      accountId: payee,
    };
    const sign = (server: { url: string }, path: string, body: unknown) =>
      signedCall(server.url, credentials, { path, body }, Date.now());
    const inFlight = [sign(first, COLLECT, collect).catch(() => undefined)];
    const sent = await sign(first, PIX_TRANSFER, transfer);
    assert.equal(sent.body.code, '200', sent.body.msgEn);
    const chargesOf = () => [...psp.cobs.values()].filter((c) => c.valor.original === '33.10');
    const sendsOf = () => [...psp.sent.values()].filter((s) => s.favorecido?.chave === payee);
    await until(() => {
      assert.equal(chargesOf().length, 1);
      assert.equal(sendsOf().length, 1);
    });
    await rig.crash(first);
    await Promise.all(inFlight);

    const second = await rig.start(env);
    // The collection's charge is found at the PSP (asked for before being made again) and its code
    // answered; the payout is found by its idEnvio and settles. Nothing is made or sent twice.
    let payParam = '';
    await until(async () => {
      const repeat = await sign(second, COLLECT, collect);
      payParam = (repeat.body.data?.currencyOrderVo?.payParam as string | undefined) ?? '';
      assert.notEqual(payParam, '');
    }, 20_000);
    assert.equal(payParam, chargesOf()[0]?.pixCopiaECola);
    const txid = (chargesOf()[0]?.txid as string | undefined) ?? '';
    await psp.pay(txid);
    await until(() => {
      const outcomes = receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      assert.ok(
        outcomes.some((o) => o.externalOrderId === collect.externalOrderId && o.orderStatus === 'PAYMENT_SUCCESS'),
        'the collection was paid',
      );
      assert.ok(
        outcomes.some((o) => o.externalOrderId === transfer.externalOrderId && o.orderStatus === 'SUCCESS'),
        'the transfer was made',
      );
    }, 20_000);
    await sleep(500);
    assert.equal(chargesOf().length, 1, 'one charge');
    assert.equal(sendsOf().length, 1, 'one send');
    const askedToSend = psp.requests.filter((r) => r.endpoint === 'send-put' && r.body?.favorecido?.chave === payee);
    assert.equal(askedToSend.length, 1, 'the send was asked about, never sent blindly again');
  });
});
