import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { LOST_WEBHOOK_GRACE_MS } from '../src/mexico/spei-live.js';
import { buildClabe } from '../src/rails/stp/clabe.js';
import { databaseLabel } from './support/database.js';
import { freePort } from './support/fake-daraja.js';
import { startFakeStp, STP_TEST, stpGatewayEnv, stpTestKeys, type FakeStp } from './support/fake-stp.js';
import { mexicanMerchant, openAndChoose } from './support/checkout-form.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, sleep, startReceiver, until, type CallbackReceiver } from './support/receiver.js';

describe('SPEI through STP: configuration', () => {
  it('refuses MEXICO_SPEI_RAIL=stp at start-up naming each missing variable; the sandbox stays the default', () => {
    assert.throws(
      () => loadConfig({ MEXICO_SPEI_RAIL: 'stp' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        ['STP_EMPRESA', 'STP_PRIVATE_KEY', 'STP_CLABE_PREFIX'].every((name) =>
          error.problems.some((p) => p.startsWith(`${name}:`)),
        ),
    );
    assert.throws(
      () => loadConfig({ MEXICO_OXXO_RAIL: 'stripe', STRIPE_SECRET_KEY: 'sk_test_x' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.some((p) => p.startsWith('STRIPE_WEBHOOK_SECRET:')) &&
        !error.problems.some((p) => p.startsWith('STRIPE_SECRET_KEY:')),
    );
    assert.throws(
      () => loadConfig({ STP_CLABE_PREFIX: '6461231234' }),
      (error: unknown) => error instanceof ConfigError && error.problems.some((p) => p.startsWith('STP_CLABE_PREFIX')),
    );
    const keys = stpTestKeys();
    const dir = mkdtempSync(join(tmpdir(), 'cashgate-stp-key-'));
    writeFileSync(join(dir, 'key.pem'), keys.privateKeyPem);
    assert.throws(
      () =>
        loadConfig({
          MEXICO_SPEI_RAIL: 'stp',
          STP_EMPRESA: 'CASHGATE',
          STP_PRIVATE_KEY: join(dir, 'key.pem'),
          STP_PRIVATE_KEY_PASSPHRASE: 'wrong',
          STP_CLABE_PREFIX: STP_TEST.clabePrefix,
        }),
      (error: unknown) =>
        error instanceof ConfigError && error.problems.some((p) => p.startsWith('STP_PRIVATE_KEY_PASSPHRASE')),
    );
    const config = loadConfig({});
    assert.equal(config.mexico.spei.rail, 'sandbox');
    assert.equal(config.mexico.oxxo.rail, 'sandbox');
    assert.equal(config.mexico.oxxo.expiresAfterDays, 3);
  });
});

/** A hop between STP and the gateway that can lose the gateway's answer on its way back (as a crash would). */
async function startLossyHop(
  target: () => string,
): Promise<{ url: string; loseNext: () => void; close(): Promise<void> }> {
  let lose = 0;
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (c: Buffer) => chunks.push(c));
    incoming.on('end', () => {
      const forward = httpRequest(
        target(),
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (answer) => {
          const back: Buffer[] = [];
          answer.on('data', (c: Buffer) => back.push(c));
          answer.on('end', () => {
            if (lose > 0) {
              lose -= 1;
              outgoing.destroy();
              return;
            }
            outgoing.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
            outgoing.end(Buffer.concat(back));
          });
        },
      );
      forward.on('error', () => outgoing.destroy());
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    loseNext: () => (lose += 1),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe(`SPEI through STP (${databaseLabel})`, () => {
  let stp: FakeStp;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let hop: Awaited<ReturnType<typeof startLossyHop>>;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let env: Record<string, string>;
  let port: number;
  /** Gateways whose node was replaced: their data directory is removed at the end. */
  const replaced: TestGateway[] = [];

  const webhook = (path: string) => `http://127.0.0.1:${port}/rails/stp/${gw.gateway.mexico.spei?.token ?? ''}/${path}`;

  before(async () => {
    const keys = stpTestKeys();
    const dir = mkdtempSync(join(tmpdir(), 'cashgate-stp-'));
    writeFileSync(join(dir, 'stp.pem'), keys.privateKeyPem);
    stp = await startFakeStp({
      publicKey: keys.publicKey,
      empresa: STP_TEST.empresa,
      webhookRetryMs: 100,
      maxWebhookTries: 4,
    });
    port = await freePort();
    env = {
      ...stpGatewayEnv(stp, port, join(dir, 'stp.pem')),
      MEXICO_RECONCILE_INTERVAL_MS: '200',
      KEY_ACTIVATION_DELAY_MS: '0',
      RAIL_POLL_INTERVAL_MS: '100',
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
      CALLBACK_POLL_INTERVAL_MS: '50',
    };
    gw = await startTestGateway({ env });
    hop = await startLossyHop(() => webhook('abono'));
    stp.abonoWebhookUrl = hop.url;
    stp.orderWebhookUrl = webhook('cambio-estado');
    receiver = await startReceiver();
    merchant = await mexicanMerchant(gw, receiver.url);
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await stp.idle();
    await gw.close();
    await stp.close();
    await hop.close();
    await receiver.close();
    for (const first of replaced) rmSync(first.dataDir, { recursive: true, force: true });
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  /** A Mexican aggregate cashier where the payer chose SPEI: the order and its CLABE. */
  const speiOrder = async (amount: string, create: Record<string, unknown> = {}) => {
    const { order } = await openAndChoose(gw, merchant.credentials, { amount, method: 'SPEI' }, create);
    return { id: order.id, clabe: (JSON.parse(order.details) as { clabe: string }).clabe };
  };
  const statusOf = async (orderId: string) => (await gw.gateway.orders.find(orderId))?.status;
  const callbacksOf = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((b) => b.orderId === orderId);
  const abonoRows = (clabe: string) =>
    gw.gateway.store.read.selectFrom('spei_abonos').selectAll().where('clabe', '=', clabe).execute();
  const collectionJournals = (orderId: string) =>
    gw.gateway.store.read
      .selectFrom('ledger_journals')
      .select('kind')
      .where('order_id', '=', orderId)
      .where('kind', '=', 'collection.paid')
      .execute();

  it('the exact amount: confirmar after STP confirmed it; the order is paid in pesos with the sender on it; one callback', async () => {
    const order = await speiOrder('250.00');
    const abono = await stp.sendAbono({
      cuentaBeneficiario: order.clabe,
      monto: '250.00',
      nombreOrdenante: 'Luis Pérez',
      cuentaOrdenante: '072691004495711499',
      institucionOrdenante: '40072',
    });
    assert.equal(abono.outcome, 'confirmed', JSON.stringify(abono.replies));
    assert.deepEqual(abono.replies.at(-1)?.body, { mensaje: 'confirmar' });
    assert.equal(await statusOf(order.id), 2);
    const consulted = stp.requests.filter(
      (r) => r.operation === 'consultaOrden' && r.body?.claveRastreo === abono.claveRastreo,
    );
    assert.ok(consulted.length >= 1, 'STP was asked before anything changed');
    await until(() => assert.equal(callbacksOf(order.id).length, 1));
    const [callback] = callbacksOf(order.id);
    assert.ok(callback !== undefined);
    assert.equal(callback.currencyType, 'MXN');
    assert.equal(callback.payType, 102);
    assert.equal(callback.orderActualAmount, '250.00');
    const paid = JSON.parse((await gw.gateway.orders.find(order.id))?.details ?? '{}') as Record<string, string>;
    assert.equal(paid.payerBank, 'BANORTE');
    assert.equal(paid.payerAccount, '072691004495711499');
    assert.equal(paid.claveRastreo, abono.claveRastreo);
    const messages = await gw.admin('GET', `/admin/v1/orders/${order.id}/rail-messages`);
    assert.ok(JSON.stringify(messages.body).includes('abono'));
    assert.ok(!JSON.stringify(messages.body).includes('072691004495711499'), 'the sender’s account is masked');
  });

  it('more under dynamicAmountNotify 1 completes with the amount received; less under 2 is returned (causa 13) and nothing is credited', async () => {
    const loose = await speiOrder('100.00');
    const more = await stp.sendAbono({ cuentaBeneficiario: loose.clabe, monto: '130.00' });
    assert.equal(more.outcome, 'confirmed');
    await until(() => assert.equal(callbacksOf(loose.id)[0]?.orderActualAmount, '130.00'));
    assert.equal(callbacksOf(loose.id)[0]?.markStatus, 1);

    const strict = await speiOrder('100.00', { dynamicAmountNotify: 2 });
    const less = await stp.sendAbono({ cuentaBeneficiario: strict.clabe, monto: '99.99' });
    assert.equal(less.outcome, 'returned');
    assert.deepEqual(less.replies.at(-1)?.body, { mensaje: 'devolver', id: 13 });
    assert.equal(await statusOf(strict.id), 1, 'still waiting');
    assert.equal((await collectionJournals(strict.id)).length, 0, 'nothing credited');
    const exact = await stp.sendAbono({ cuentaBeneficiario: strict.clabe, monto: '100.00' });
    assert.equal(exact.outcome, 'confirmed');
    assert.equal(await statusOf(strict.id), 2);
  });

  it('a transfer to an ended order’s CLABE is returned (causa 3), to an unknown CLABE too (causa 1); the operator sees both', async () => {
    const order = await speiOrder('80.00');
    assert.equal((await stp.sendAbono({ cuentaBeneficiario: order.clabe, monto: '80.00' })).outcome, 'confirmed');
    const late = await stp.sendAbono({ cuentaBeneficiario: order.clabe, monto: '80.00' });
    assert.equal(late.outcome, 'returned');
    assert.deepEqual(late.replies.at(-1)?.body, { mensaje: 'devolver', id: 3 });
    const unknown = await stp.sendAbono({
      cuentaBeneficiario: buildClabe(STP_TEST.clabePrefix, 9_999_999),
      monto: '5.00',
    });
    assert.deepEqual(unknown.replies.at(-1)?.body, { mensaje: 'devolver', id: 1 });
    assert.equal((await collectionJournals(order.id)).length, 1, 'credited once');
    const listed = await gw.admin('GET', '/admin/v1/spei/unmatched');
    const ids = (listed.body.transfers as { id: string; payerAccount: string | null }[]).map((t) => t.id);
    assert.ok(ids.includes(late.id) && ids.includes(unknown.id), JSON.stringify(listed.body));
  });

  it('a duplicate abono is answered the same and credited once', async () => {
    const order = await speiOrder('45.00');
    const abono = await stp.sendAbono({ cuentaBeneficiario: order.clabe, monto: '45.00', duplicate: true });
    const answers = abono.replies.filter((r) => r.status === 200).map((r) => r.body);
    assert.equal(answers.length, 2);
    assert.deepEqual(answers[0], answers[1]);
    assert.equal((await collectionJournals(order.id)).length, 1);
    assert.equal((await abonoRows(order.clabe)).length, 1);
    await sleep(300);
    assert.equal(callbacksOf(order.id).length, 1);
  });

  it('a forged abono (one STP does not know) is refused and changes nothing', async () => {
    const order = await speiOrder('999.00');
    const forged = await fetch(webhook('abono'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 987654321,
        fechaOperacion: Number(new Date().toISOString().slice(0, 10).replace(/-/g, '')),
        institucionOrdenante: 40012,
        claveRastreo: 'FORGED123456',
        monto: 999.0,
        cuentaBeneficiario: order.clabe,
        empresa: STP_TEST.empresa,
      }),
    });
    assert.equal(forged.status, 403);
    assert.equal(await statusOf(order.id), 1);
    assert.equal((await abonoRows(order.clabe)).length, 0, 'nothing recorded');
    const wrongToken = await fetch(webhook('abono').replace(/\/rails\/stp\/[^/]+\//, '/rails/stp/nope/'), {
      method: 'POST',
      body: '{}',
    });
    assert.equal(wrongToken.status, 404);
  });

  it('an answer lost after the decision was recorded, and the node replaced: the redelivery gets the same answer; nothing is both kept and returned', async () => {
    const order = await speiOrder('60.00');
    const unknownClabe = buildClabe(STP_TEST.clabePrefix, 9_999_998);
    // Each first answer is lost on its way back, as if the node died right after recording it.
    hop.loseNext();
    const credited = stp.sendAbono({ cuentaBeneficiario: order.clabe, monto: '60.00' });
    await until(async () => assert.equal((await abonoRows(order.clabe)).length, 1));
    const returnedFirst = await credited;
    hop.loseNext();
    const returned = await stp.sendAbono({ cuentaBeneficiario: unknownClabe, monto: '7.00' });
    // A new node on the same database answers the deliveries STP goes on making.
    const first = gw;
    await first.gateway.close();
    replaced.push(first);
    gw = await startTestGateway({ env, sameDatabaseAs: first });
    await stp.redeliver(returnedFirst.id);
    await stp.redeliver(returned.id);
    assert.equal(stp.abonos.get(returnedFirst.id)?.outcome, 'confirmed');
    assert.equal(stp.abonos.get(returned.id)?.outcome, 'returned');
    assert.equal(await statusOf(order.id), 2);
    assert.equal((await collectionJournals(order.id)).length, 1);
    const rows = await abonoRows(unknownClabe);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.decision ?? 'none', 'devolver');
    assert.equal(rows[0]?.return_state, null, 'STP returns it: Cashgate sends no return of its own');
  });

  it('a lost webhook is found by reconciliation: STP holds the transfer, the waiting order is paid, and a later delivery is answered confirmar', async () => {
    const order = await speiOrder('321.00');
    const lost = await stp.sendAbono({ cuentaBeneficiario: order.clabe, monto: '321.00', lost: true });
    await sleep(600);
    assert.equal(await statusOf(order.id), 1, 'within the grace, the webhook is still awaited');
    gw.clock.advance(LOST_WEBHOOK_GRACE_MS + 1000);
    await eventually(async () => ((await statusOf(order.id)) === 2 ? true : undefined), 10_000, 'reconciled');
    await until(() => assert.equal(callbacksOf(order.id).length, 1));
    await stp.redeliver(lost.id);
    assert.equal(stp.abonos.get(lost.id)?.outcome, 'confirmed');
    assert.equal((await collectionJournals(order.id)).length, 1);
  });

  it('a transfer STP held for an unknown CLABE is returned by Cashgate itself (registra with a derived clave de rastreo), once', async () => {
    const clabe = buildClabe(STP_TEST.clabePrefix, 9_999_990);
    const lost = await stp.sendAbono({
      cuentaBeneficiario: clabe,
      monto: '12.34',
      cuentaOrdenante: '002010077777777771',
      institucionOrdenante: '40002',
      nombreOrdenante: 'Rosa Díaz',
      lost: true,
    });
    gw.clock.advance(LOST_WEBHOOK_GRACE_MS + 1000);
    await until(async () => assert.equal((await abonoRows(clabe)).length, 1), 10_000);
    // STP settles it once Cashgate's later answer (confirmar: it keeps it to return it) arrives.
    await stp.redeliver(lost.id);
    assert.equal(stp.abonos.get(lost.id)?.outcome, 'confirmed');
    await until(async () => assert.equal((await abonoRows(clabe))[0]?.return_state, 'settled'), 15_000);
    const sent = stp.requests.filter((r) => r.operation === 'registra' && r.status === 200);
    const ours = sent.filter((r) => r.body?.cuentaBeneficiario === '002010077777777771');
    assert.equal(ours.length, 1, 'returned once');
    assert.equal(ours[0]?.body?.monto, 12.34);
    const rows = await abonoRows(clabe);
    assert.match(String(rows[0]?.return_rastreo), /^CGD[0-9A-F]{20}$/);
  });

  it('counts abonos by answer and disposition, and STP calls by operation and outcome, at /metrics', async () => {
    const text = await (await fetch(new URL('/metrics', gw.url))).text();
    assert.match(text, /cashgate_spei_abonos_total\{answer="confirmar",disposition="credited"\} \d+/);
    // This node replaced the first one mid-suite: what it decided, and the redeliveries it answered from the record.
    assert.match(text, /cashgate_spei_abonos_total\{answer="repeat",disposition="\w+"\} \d+/);
    assert.match(text, /cashgate_stp_requests_total\{operation="consultaOrden",outcome="ok"\} \d+/);
    assert.match(text, /cashgate_spei_abono_seconds_count \d+/);
  });
});
