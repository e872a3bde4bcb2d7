/**
 * An operator assigns an incoming Pix that no order took to a merchant's waiting Pix collection
 * order (POST /admin/v1/pix/received/{e2eid}/assign), on the live API Pix against the fake PSP:
 * below APPROVAL_THRESHOLD at once, at or above it through a second operator's approval (the
 * balance adjustments' approvals, of kind payment_assignment); refusals change nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Role } from '../src/access/permissions.js';
import { databaseLabel } from './support/database.js';
import { freePort } from './support/fake-daraja.js';
import { apiPixTestEnv, PSP_TEST, startFakePsp, type FakePsp } from './support/fake-psp.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { adminCall } from './support/process.js';
import { startReceiver, until, type CallbackReceiver } from './support/receiver.js';

const COLLECT = '/api/v3/bra/createCollectingOrder';
const PASSWORD = 'a long operator password';

/** The environment of a gateway on the local PSP, its webhook reaching it on `port`, with short waits. */
const apiPixEnv = (psp: Pick<FakePsp, 'url'>, port: number): Record<string, string> => ({
  ...apiPixTestEnv(psp, port),
  APPROVAL_THRESHOLD: 'BRL:100',
});

describe(`assigning an unmatched Pix to an order (${databaseLabel})`, () => {
  let psp: FakePsp;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const tokens: Record<string, string> = {};
  let seq = 0;

  const operator = async (role: Role, email: string) => {
    await gw.gateway.operators.create({ email, role, password: PASSWORD });
    tokens[email] = (await gw.gateway.operators.createToken({ email })).token;
  };
  const as = (email: string, method: string, path: string, body?: unknown) =>
    adminCall(gw, tokens[email] ?? '', method, path, body);
  const collect = async (amount: string) => {
    const response = await signedCall(
      gw.url,
      merchant.credentials,
      { path: COLLECT, body: { amount, channelType: 'PIX', externalOrderId: `assign-${Date.now()}-${++seq}` } },
      gw.clock.now(),
    );
    assert.equal(response.body.code, '200', response.body.msgEn);
    return response.body.data.currencyOrderVo.orderId as string;
  };
  const order = async (orderId: string) => {
    const found = await gw.gateway.orders.find(orderId);
    assert.ok(found !== undefined);
    return found;
  };
  const received = async (e2eid: string) => {
    const row = await gw.gateway.store.read
      .selectFrom('pix_received')
      .selectAll()
      .where('e2eid', '=', e2eid)
      .executeTakeFirst();
    assert.ok(row !== undefined);
    return row;
  };
  /** A payer's Pix to the key naming no charge: unmatched once Cashgate has confirmed it. */
  const unmatchedPix = async (valor: string) => {
    const pix = await psp.payKey(PSP_TEST.pixKey, valor, { payer: { cpf: '52998224725', nome: 'José Pagador' } });
    await psp.idle();
    await until(async () => assert.equal((await received(pix.endToEndId as string)).disposition, 'unmatched'));
    return pix.endToEndId as string;
  };
  const callbacksFor = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((json) => json.orderId === orderId);
  /** The journals of an order, each as its kind and entries (account kind, amount), in order. */
  const journalsOf = async (orderId: string) => {
    const rows = await gw.gateway.store.read
      .selectFrom('ledger_entries')
      .innerJoin('ledger_journals', 'ledger_journals.id', 'ledger_entries.journal_id')
      .select(['ledger_journals.kind', 'ledger_entries.account_code', 'ledger_entries.amount'])
      .where('ledger_journals.order_id', '=', orderId)
      .orderBy('ledger_journals.created_at')
      .orderBy('ledger_journals.kind')
      .orderBy('ledger_entries.account_code')
      .execute();
    return rows.map((r) => [r.kind, r.account_code.replace(/^[^/]+\//, ''), r.amount]);
  };
  const journalKindsAbout = async (e2eid: string) =>
    (
      await gw.gateway.store.read
        .selectFrom('ledger_journals')
        .select('kind')
        .where('memo', 'like', `%${e2eid}%`)
        .orderBy('created_at')
        .execute()
    ).map((j) => j.kind);
  const auditRows = () => gw.gateway.store.read.selectFrom('audit_log').selectAll().orderBy('seq').execute();
  const nothingChanged = async (e2eid: string, orderId: string) => {
    const row = await received(e2eid);
    assert.equal(row.disposition, 'unmatched');
    assert.equal(row.approval_id, null);
    assert.equal(row.order_id, null);
    assert.equal((await order(orderId)).status, 1, 'the order still waits');
    assert.deepEqual(await journalKindsAbout(e2eid), ['pix.unmatched.received']);
  };

  before(async () => {
    psp = await startFakePsp({ webhookRetryMs: 100 });
    const port = await freePort();
    gw = await startTestGateway({ env: apiPixEnv(psp, port) });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: `${receiver.url}/cb` });
    await operator('finance', 'alice@ops.example');
    await operator('finance', 'bob@ops.example');
    await operator('viewer', 'vera@ops.example');
    // The reconciliation worker registers the webhook with the PSP.
    await until(() => assert.equal(psp.webhooks.size, 1));
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    const system = await gw.gateway.store.read
      .selectFrom('ledger_accounts')
      .select(['code', 'balance'])
      .where('code', 'in', ['system/BRL/pix_returns', 'system/BRL/pix_unmatched'])
      .execute();
    for (const account of system) assert.ok(account.balance >= 0, `${account.code} is ${account.balance}`);
    await gw.close();
    await psp.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  it('below the threshold pays a waiting order at once, exactly as a matched Pix pays one', async () => {
    // A matched Pix pays an order of the same amount, for comparison.
    const matched = await collect('25.00');
    await psp.pay((await order(matched)).channel_order_id ?? '');
    await until(async () => assert.equal((await order(matched)).status, 2));
    await until(() => assert.equal(callbacksFor(matched).length, 1));

    const e2eid = await unmatchedPix('25.00');
    const orderId = await collect('25.00');
    const txid = (await order(orderId)).channel_order_id ?? '';
    const listed = await as('vera@ops.example', 'GET', '/admin/v1/pix/received?disposition=unmatched');
    assert.ok(listed.body.pix.some((p: any) => p.e2eid === e2eid && p.approvalId === null));

    const res = await as('alice@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId,
      reason: 'the payer paid this order with a wrong txid',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.approval, null, 'done at once');
    assert.equal(res.body.orderStatus, 2);
    assert.equal(res.body.e2eid, e2eid);
    assert.equal(res.body.disposition, 'credited');
    assert.equal(res.body.orderId, orderId);
    assert.equal(res.body.amount, '25.00');
    assert.equal(res.body.assignedBy, 'alice@ops.example');
    assert.equal(res.body.assignedReason, 'the payer paid this order with a wrong txid');
    assert.equal(res.body.payerDocument, '529••••••25', 'masked as the list masks it');

    const paid = await order(orderId);
    assert.equal(paid.status, 2);
    assert.equal(paid.actual_amount, 2500);
    assert.equal((JSON.parse(paid.details) as Record<string, string>).endToEndId, e2eid);
    const row = await received(e2eid);
    assert.equal(row.disposition, 'credited');
    assert.equal(row.order_id, orderId);
    assert.equal(row.assigned_by, 'alice@ops.example');
    assert.equal(row.assigned_reason, 'the payer paid this order with a wrong txid');
    assert.ok(row.assigned_at !== null);

    // Its ledger entries are a matched Pix's; the Pix's money came back from pix_unmatched first.
    const strip = (rows: unknown[][]) => rows.map(([kind, code, amount]) => [kind, code, amount]);
    assert.ok(
      (await journalsOf(matched)).some((j) => j[0] === 'collection.paid'),
      'the matched order’s entries',
    );
    assert.deepEqual(
      strip(await journalsOf(orderId)).filter((j) => j[0] !== 'pix.unmatched.assigned'),
      strip(await journalsOf(matched)),
    );
    assert.deepEqual(await journalKindsAbout(e2eid), ['pix.unmatched.received', 'pix.unmatched.assigned']);
    // One callback, as the matched order's.
    await until(() => assert.equal(callbacksFor(orderId).length, 1));
    const [assignedCallback] = callbacksFor(orderId);
    const [matchedCallback] = callbacksFor(matched);
    assert.deepEqual(Object.keys(assignedCallback ?? {}).sort(), Object.keys(matchedCallback ?? {}).sort());
    for (const field of ['orderStatus', 'orderStatusCode', 'orderActualAmount', 'orderAmount', 'markStatus'])
      assert.equal(assignedCallback?.[field], matchedCallback?.[field], field);
    // The order no longer waits: its charge is removed at the PSP, so nobody pays it twice.
    await until(() => assert.equal(psp.cobs.get(txid)?.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR'));

    // Paid once: the Pix is credited now, and neither assigned nor returned again.
    const again = await as('bob@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId,
      reason: 'once more',
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'pix_not_assignable');
    assert.match(again.body.error.message, /e2eid: it is credited: only an unmatched Pix/);
    const returned = await as('bob@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/return`, { reason: 'x' });
    assert.equal(returned.status, 409);
    assert.equal((await order(orderId)).actual_amount, 2500);
    assert.equal(callbacksFor(orderId).length, 1);

    const record = (await auditRows()).find((r) => r.action === 'payment.assign' && r.target_id === e2eid);
    assert.ok(record !== undefined, 'audited payment.assign');
    assert.equal(record.actor_email, 'alice@ops.example');
    assert.equal(record.target_type, 'payment');
    assert.equal(record.reason, 'the payer paid this order with a wrong txid');
    const changes = JSON.parse(record.changes ?? '{}') as Record<string, any>;
    assert.equal(changes.after.orderId, orderId);
    assert.equal(changes.after.disposition, 'credited');
  });

  it('refuses an amount that differs and an order that is not waiting, naming the field and the rule; nothing changes', async () => {
    const e2eid = await unmatchedPix('30.00');
    const other = await collect('31.00');
    const mismatch = await as('alice@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId: other,
      reason: 'close enough',
    });
    assert.equal(mismatch.status, 409);
    assert.equal(mismatch.body.error.code, 'pix_not_assignable');
    assert.match(
      mismatch.body.error.message,
      /amount: the Pix is 30\.00 BRL and order \S+ asks for 31\.00 BRL: a Pix is assigned only to an order of exactly its amount; return it instead; nothing was changed/,
    );
    await nothingChanged(e2eid, other);

    const expired = await collect('30.00');
    await gw.gateway.orders.applyEvent(expired, 'expired', { source: 'test' });
    const late = await as('alice@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId: expired,
      reason: 'paid a little late',
    });
    assert.equal(late.status, 409);
    assert.equal(late.body.error.code, 'pix_not_assignable');
    assert.match(
      late.body.error.message,
      /orderId: order \S+ is not waiting for a payment \(status 3 expired\): only an order waiting for its payment \(status 1 pending\) can be paid/,
    );
    const stillUnmatched = await received(e2eid);
    assert.equal(stillUnmatched.disposition, 'unmatched');
    assert.equal((await order(expired)).status, 3);

    const unknown = await as('alice@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId: 'ord_does_not_exist',
      reason: 'typo',
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'order_not_found');
    const noPix = await as(
      'alice@ops.example',
      'POST',
      '/admin/v1/pix/received/E00000000202611241200zzzzzzzzzzz/assign',
      {
        orderId: other,
        reason: 'typo',
      },
    );
    assert.equal(noPix.status, 404);
    assert.equal(noPix.body.error.code, 'pix_not_found');
    const noReason = await as('alice@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId: other,
    });
    assert.equal(noReason.status, 400);
    assert.match(noReason.body.error.message, /reason/);

    // A viewer may not: 403, recorded as access.denied.
    const denied = await as('vera@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId: other,
      reason: 'just looking',
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'forbidden');
    assert.equal(denied.body.error.permission, 'payments.assign');
    const refusal = (await auditRows()).find(
      (r) =>
        r.action === 'access.denied' && r.actor_email === 'vera@ops.example' && (r.target_id ?? '').includes(e2eid),
    );
    assert.ok(refusal !== undefined, 'access.denied recorded');
    assert.equal(refusal.target_id, `POST /admin/v1/pix/received/${e2eid}/assign`);
    await nothingChanged(e2eid, other);
    assert.equal(
      (await auditRows()).filter((r) => r.action.startsWith('payment.assign') && r.target_id === e2eid).length,
      0,
      'a refused assignment leaves no payment.assign record',
    );
  });

  it('at or above the threshold waits for another operator, who approves it: the order is paid then', async () => {
    const e2eid = await unmatchedPix('150.00');
    const orderId = await collect('150.00');
    const res = await as('alice@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId,
      reason: 'customer sent the receipt, case 77',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.orderStatus, 1, 'not paid yet');
    assert.equal(res.body.disposition, 'unmatched');
    const approval = res.body.approval as Record<string, any>;
    assert.equal(approval.kind, 'payment_assignment');
    assert.equal(approval.state, 'pending');
    assert.equal(approval.e2eid, e2eid);
    assert.equal(approval.orderId, orderId);
    assert.equal(approval.merchantId, merchant.merchantId);
    assert.equal(approval.amount, '150.00');
    assert.equal(approval.currency, 'BRL');
    assert.equal(approval.requestedBy, 'alice@ops.example');
    assert.match(
      approval.action,
      new RegExp(`assign the received payment ${e2eid} \\(150\\.00 BRL\\) to order ${orderId}`),
    );
    assert.equal(res.body.approvalId, approval.approvalId);
    assert.equal((await order(orderId)).status, 1);
    assert.deepEqual(await journalKindsAbout(e2eid), ['pix.unmatched.received'], 'no money moved');

    // The list of approvals shows both kinds, each with what it would do.
    const adjustment = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '500.00',
      reason: 'float for payouts',
    });
    assert.equal(adjustment.body.state, 'pending');
    const pending = await as('vera@ops.example', 'GET', '/admin/v1/approvals?state=pending');
    assert.equal(pending.status, 200);
    const mine = pending.body.approvals.find((a: any) => a.approvalId === approval.approvalId);
    assert.equal(mine?.kind, 'payment_assignment');
    assert.equal(mine?.orderId, orderId);
    const credit = pending.body.approvals.find((a: any) => a.approvalId === adjustment.body.approval.approvalId);
    assert.equal(credit?.kind, 'balance_adjustment');
    assert.equal(credit?.e2eid, null);
    assert.match(credit?.action ?? '', /^credit 500\.00 BRL to the available balance of merchant /);
    const onlyAssignments = await as('vera@ops.example', 'GET', '/admin/v1/approvals?kind=payment_assignment');
    assert.ok(onlyAssignments.body.approvals.every((a: any) => a.kind === 'payment_assignment'));
    const listedPix = await as('vera@ops.example', 'GET', '/admin/v1/pix/received?disposition=unmatched');
    assert.equal(listedPix.body.pix.find((p: any) => p.e2eid === e2eid)?.approvalId, approval.approvalId);

    // While it waits, the Pix is neither returned nor assigned again.
    const returned = await as('bob@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/return`, {
      reason: 'return it',
    });
    assert.equal(returned.status, 409);
    assert.match(returned.body.error.message, new RegExp(`waits for approval ${approval.approvalId}`));
    const twice = await as('bob@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId,
      reason: 'again',
    });
    assert.equal(twice.status, 409);
    assert.equal(twice.body.error.code, 'pix_assignment_pending');
    assert.match(twice.body.error.message, new RegExp(`held by approval ${approval.approvalId}`));

    // The requester cannot approve their own; another finance operator does.
    const own = await as('alice@ops.example', 'POST', `/admin/v1/approvals/${approval.approvalId}/approve`, {});
    assert.equal(own.status, 403);
    assert.equal(own.body.error.code, 'approval_own');
    const byViewer = await as('vera@ops.example', 'POST', `/admin/v1/approvals/${approval.approvalId}/approve`, {});
    assert.equal(byViewer.status, 403);
    assert.equal((await order(orderId)).status, 1);
    const approved = await as('bob@ops.example', 'POST', `/admin/v1/approvals/${approval.approvalId}/approve`, {
      reason: 'receipt checked',
    });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(approved.body.approval.state, 'approved');
    assert.equal(approved.body.approval.decidedBy, 'bob@ops.example');
    assert.equal(approved.body.approval.kind, 'payment_assignment');

    const paid = await order(orderId);
    assert.equal(paid.status, 2);
    assert.equal(paid.actual_amount, 15000);
    const row = await received(e2eid);
    assert.equal(row.disposition, 'credited');
    assert.equal(row.order_id, orderId);
    assert.equal(row.approval_id, approval.approvalId, 'the approval that carried it out');
    assert.equal(row.assigned_by, 'alice@ops.example');
    assert.deepEqual(await journalKindsAbout(e2eid), ['pix.unmatched.received', 'pix.unmatched.assigned']);
    assert.ok(
      (await journalsOf(orderId)).some((j) => j[0] === 'collection.paid'),
      'credited to the merchant',
    );
    await until(() => assert.equal(callbacksFor(orderId).length, 1));
    assert.equal(callbacksFor(orderId)[0]?.orderStatusCode, 2);
    const decidedAgain = await as(
      'vera@ops.example',
      'GET',
      `/admin/v1/approvals?state=approved&kind=payment_assignment`,
    );
    assert.ok(decidedAgain.body.approvals.some((a: any) => a.approvalId === approval.approvalId));

    const again = await as('bob@ops.example', 'POST', `/admin/v1/approvals/${approval.approvalId}/approve`, {});
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'approval_decided');
    assert.equal(callbacksFor(orderId).length, 1);

    const records = (await auditRows()).filter((r) => r.target_id === e2eid || r.target_id === approval.approvalId);
    assert.deepEqual(
      records.map((r) => [r.action, r.actor_email]),
      [
        ['payment.assign.request', 'alice@ops.example'],
        ['balance.adjust.approve', 'bob@ops.example'],
      ],
    );
    const request = JSON.parse(records[0]?.changes ?? '{}') as Record<string, any>;
    assert.equal(request.after.kind, 'payment_assignment');
    assert.equal(request.after.approvalId, approval.approvalId);
    assert.equal(request.after.orderId, orderId);
    assert.equal(records[0]?.reason, 'customer sent the receipt, case 77');
    const decision = JSON.parse(records[1]?.changes ?? '{}') as Record<string, any>;
    assert.deepEqual(decision.before, { state: 'pending', kind: null, merchantId: null, e2eid: null, orderId: null });
    assert.equal(decision.after.state, 'approved');
    assert.equal(decision.after.kind, 'payment_assignment');
    assert.equal(decision.after.orderId, orderId);
    assert.equal(records[1]?.reason, 'receipt checked');
  });

  it('assigns a Pix whose return failed, its money taken back from pix_returns', async () => {
    const e2eid = await unmatchedPix('12.00');
    psp.scriptRefund(e2eid, { status: 'NAO_REALIZADO', motivo: 'Conta do pagador encerrada' });
    const asked = await as('bob@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/return`, { reason: 'return' });
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    await until(async () => assert.equal((await received(e2eid)).disposition, 'return_failed'));
    const orderId = await collect('12.00');
    const res = await as('bob@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId,
      reason: 'the payer’s account is closed; the merchant confirms the order',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.disposition, 'credited');
    assert.equal((await order(orderId)).status, 2);
    assert.deepEqual(await journalKindsAbout(e2eid), [
      'pix.unmatched.received',
      'pix.unmatched.returning',
      'pix.return.assigned',
    ]);
    await until(() => assert.equal(callbacksFor(orderId).length, 1));
  });

  it('leaves the Pix unmatched and returnable when the request is rejected; an approval the order can no longer take stays pending', async () => {
    const e2eid = await unmatchedPix('200.00');
    const orderId = await collect('200.00');
    const requested = await as('alice@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId,
      reason: 'looks like this order',
    });
    const approvalId = requested.body.approval.approvalId as string;
    const rejected = await as('bob@ops.example', 'POST', `/admin/v1/approvals/${approvalId}/reject`, {
      reason: 'the payer asked for it back',
    });
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    assert.equal(rejected.body.approval.state, 'rejected');
    await nothingChanged(e2eid, orderId);
    const record = (await auditRows()).find((r) => r.action === 'balance.adjust.reject' && r.target_id === approvalId);
    assert.equal((JSON.parse(record?.changes ?? '{}') as Record<string, any>).after.kind, 'payment_assignment');

    // Assignable again; the order then expires before the approval: refused, and it stays pending.
    const second = await as('alice@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/assign`, {
      orderId,
      reason: 'second look',
    });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    const secondId = second.body.approval.approvalId as string;
    await gw.gateway.orders.applyEvent(orderId, 'expired', { source: 'test' });
    const tooLate = await as('bob@ops.example', 'POST', `/admin/v1/approvals/${secondId}/approve`, {});
    assert.equal(tooLate.status, 409);
    assert.equal(tooLate.body.error.code, 'pix_not_assignable');
    assert.match(tooLate.body.error.message, /orderId: order \S+ is not waiting for a payment \(status 3 expired\)/);
    const stillPending = await as('bob@ops.example', 'GET', '/admin/v1/approvals?state=pending');
    assert.ok(stillPending.body.approvals.some((a: any) => a.approvalId === secondId));
    assert.equal((await received(e2eid)).approval_id, secondId);
    const released = await as('bob@ops.example', 'POST', `/admin/v1/approvals/${secondId}/reject`, {
      reason: 'the order expired',
    });
    assert.equal(released.status, 200);

    // Returnable: the operator returns it to its payer.
    const returned = await as('bob@ops.example', 'POST', `/admin/v1/pix/received/${e2eid}/return`, {
      reason: 'returned to the payer',
    });
    assert.equal(returned.status, 200, JSON.stringify(returned.body));
    await until(async () => assert.equal((await received(e2eid)).disposition, 'returned'));
    assert.deepEqual(await journalKindsAbout(e2eid), [
      'pix.unmatched.received',
      'pix.unmatched.returning',
      'pix.return.sent',
    ]);
  });
});
