import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { systemClock } from '../src/clock.js';
import { audit } from '../src/ledger/audit.js';
import { feeFor } from '../src/ledger/fees.js';
import { InsufficientBalanceError, type TransferMoney } from '../src/ledger/ledger.js';
import { amountField } from '../src/ledger/amount-field.js';
import { CURRENCIES, formatMinor, parseDecimal, type Currency } from '../src/money.js';
import { LedgerService } from '../src/ledger/service.js';
import { ApiError } from '../src/http/failures.js';
import { Store } from '../src/store/store.js';
import { createTestDatabase, databaseLabel, TEST_DATABASE_URL } from './support/database.js';

describe('money', () => {
  it('reads plain decimal amounts exactly, as strings or numbers', () => {
    assert.equal(parseDecimal('10.50', 2), 1050n);
    assert.equal(parseDecimal(10.5, 2), 1050n);
    assert.equal(parseDecimal('0.01', 2), 1n);
    assert.equal(parseDecimal('1500', 0), 1500n);
    assert.equal(parseDecimal('90071992547409.93', 2), 9007199254740993n, 'beyond the float range, exact from text');
    assert.equal(parseDecimal('-3.2', 2, { signed: true }), -320n);
  });
  for (const bad of ['1e3', '1.005', '-1', '+1', ' ', '', '1,00', '.5', '5.', 'NaN', '0x10', '１']) {
    it(`refuses ${JSON.stringify(bad)} as a 2-decimal amount`, () => assert.equal(parseDecimal(bad, 2), undefined));
  }
  it('refuses numbers that JSON gave in exponent form and non-numbers', () => {
    assert.equal(parseDecimal(1e21, 2), undefined);
    assert.equal(parseDecimal(true, 2), undefined);
    assert.equal(parseDecimal(null, 2), undefined);
    assert.equal(parseDecimal('1.5', 0), undefined, 'KES amounts are whole shillings');
  });
  it('formats minor units back to decimal text', () => {
    assert.equal(formatMinor(1050n, 2), '10.50');
    assert.equal(formatMinor(5n, 2), '0.05');
    assert.equal(formatMinor(-5n, 2), '-0.05');
    assert.equal(formatMinor(1500n, 0), '1500');
  });
  it('names the field and the rule of a bad amount', () => {
    assert.throws(
      () => amountField('currencyAmount', '12.345', 'BRL'),
      (error: unknown) =>
        error instanceof ApiError &&
        error.failure.kind === 'invalid_field' &&
        error.failure.field === 'currencyAmount' &&
        error.failure.rule.rule === 'amount',
    );
    assert.throws(() => amountField('amount', '0', 'KES'), ApiError, 'an amount is greater than zero');
  });
  it('computes fees in minor units: percent half up, plus fixed, at least the minimum, at most the amount', () => {
    assert.equal(feeFor(10_000n, { percentBps: 150, fixed: 0n, minimum: 0n }), 150n);
    assert.equal(feeFor(333n, { percentBps: 150, fixed: 0n, minimum: 0n }), 5n, '4.995 rounds half up to 5');
    assert.equal(feeFor(10_000n, { percentBps: 100, fixed: 30n, minimum: 0n }), 130n);
    assert.equal(feeFor(100n, { percentBps: 100, fixed: 0n, minimum: 50n }), 50n);
    assert.equal(feeFor(20n, { percentBps: 0, fixed: 0n, minimum: 50n }), 20n, 'never more than the amount');
  });
});

describe(`ledger (${databaseLabel})`, () => {
  let store: Store;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let service: LedgerService;
  let merchantSeq = 0;

  const newMerchant = async () => {
    const id = `mch_ledger_${++merchantSeq}_${Date.now()}`;
    const now = systemClock.now();
    await store.transact((tx) =>
      tx
        .insertInto('merchants')
        .values({ id, name: id, language: 'en', callback_url: null, created_at: now, updated_at: now })
        .execute(),
    );
    return id;
  };
  const clean = async () => {
    const results = await audit(store.read);
    const breaches = results.flatMap((r) => r.breaches);
    assert.deepEqual(breaches, [], 'the audit finds no breach');
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cashgate-ledger-'));
    database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
    store = Store.open({ databaseUrl: database?.url, dataDir });
    await store.migrate();
    service = new LedgerService(store, systemClock);
  });
  after(async () => {
    await store.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses an unbalanced journal and writes nothing', async () => {
    const merchantId = await newMerchant();
    await assert.rejects(
      store.transact((tx) =>
        service.ledger.post(tx, {
          kind: 'broken',
          currency: 'BRL',
          merchantId,
          entries: [{ account: { merchantId, kind: 'available' }, amount: 100n }],
        }),
      ),
      /unbalanced/,
    );
    assert.deepEqual(await service.balances(store.read, merchantId, ['BRL']), [
      { currency: 'BRL', available: 0n, frozen: 0n, awaitingSettlement: 0n },
    ]);
  });

  it('refuses a transfer freeze beyond the available balance and changes nothing', async () => {
    const merchantId = await newMerchant();
    await service.adjust(merchantId, { currency: 'BRL', amount: '100.00', reason: 'top-up' });
    const transfer: TransferMoney = { merchantId, currency: 'BRL', orderId: 'ord_x', amount: 9_950n, fee: 51n };
    await assert.rejects(
      store.transact((tx) => service.ledger.freezeForTransfer(tx, transfer)),
      InsufficientBalanceError,
    );
    const [balance] = await service.balances(store.read, merchantId, ['BRL']);
    assert.deepEqual(balance, { currency: 'BRL', available: 10_000n, frozen: 0n, awaitingSettlement: 0n });
    await clean();
  });

  it('concurrent freezes never overdraw the balance', async () => {
    const merchantId = await newMerchant();
    await service.adjust(merchantId, { currency: 'KES', amount: '1000', reason: 'top-up' });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        store.transact((tx) =>
          service.ledger.freezeForTransfer(tx, {
            merchantId,
            currency: 'KES',
            orderId: `ord_${i}`,
            amount: 90n,
            fee: 10n,
          }),
        ),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 10);
    assert.ok(results.every((r) => r.status === 'fulfilled' || r.reason instanceof InsufficientBalanceError));
    const [balance] = await service.balances(store.read, merchantId, ['KES']);
    assert.deepEqual(balance, { currency: 'KES', available: 0n, frozen: 1000n, awaitingSettlement: 0n });
    await clean();
  });

  it('keeps every invariant through random sequences of collections, settlements and transfers', async () => {
    type Step =
      | { op: 'collect'; amount: number; feeBps: number }
      | { op: 'settle' }
      | { op: 'transfer'; amount: number; fee: number; outcome: 'paid' | 'released' | 'pending' }
      | { op: 'adjust'; amount: number };
    const step = fc.oneof(
      fc.record({
        op: fc.constant('collect' as const),
        amount: fc.integer({ min: 1, max: 5_000_000 }),
        feeBps: fc.integer({ min: 0, max: 1_000 }),
      }),
      fc.record({ op: fc.constant('settle' as const) }),
      fc.record({
        op: fc.constant('transfer' as const),
        amount: fc.integer({ min: 1, max: 3_000_000 }),
        fee: fc.integer({ min: 0, max: 500 }),
        outcome: fc.constantFrom('paid' as const, 'released' as const, 'pending' as const),
      }),
      fc.record({
        op: fc.constant('adjust' as const),
        amount: fc.integer({ min: -2_000_000, max: 2_000_000 }).filter((n) => n !== 0),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 12 }),
        fc.constantFrom<Currency>('BRL', 'KES'),
        async (steps, currency) => {
          const merchantId = await newMerchant();
          // The model: what each balance must be, computed independently with plain bigint sums.
          const model = { available: 0n, frozen: 0n, awaiting: 0n };
          let seq = 0;
          for (const s of steps as Step[]) {
            const orderId = `ord_${merchantId}_${++seq}`;
            if (s.op === 'collect') {
              const amount = BigInt(s.amount);
              const fee = feeFor(amount, { percentBps: s.feeBps, fixed: 0n, minimum: 0n });
              await store.transact((tx) =>
                service.ledger.creditCollection(tx, { merchantId, currency, orderId, amount, fee, settleAt: 0 }),
              );
              model.awaiting += amount - fee;
            } else if (s.op === 'settle') {
              await service.settleDue(10_000);
              model.available += model.awaiting;
              model.awaiting = 0n;
            } else if (s.op === 'adjust') {
              const amount = BigInt(s.amount);
              try {
                await service.adjust(merchantId, {
                  currency,
                  amount: formatMinor(amount, CURRENCIES[currency]),
                  reason: 'random',
                });
                model.available += amount;
              } catch {
                assert.ok(model.available + amount < 0n, 'only an overdraft is refused');
              }
            } else {
              const t: TransferMoney = { merchantId, currency, orderId, amount: BigInt(s.amount), fee: BigInt(s.fee) };
              try {
                await store.transact(async (tx) => {
                  await service.ledger.freezeForTransfer(tx, t);
                });
              } catch (error) {
                assert.ok(error instanceof InsufficientBalanceError);
                assert.ok(model.available < t.amount + t.fee, 'only a shortfall is refused');
                continue;
              }
              model.available -= t.amount + t.fee;
              model.frozen += t.amount + t.fee;
              if (s.outcome === 'paid') {
                await store.transact((tx) => service.ledger.completeTransfer(tx, t));
                model.frozen -= t.amount + t.fee;
              } else if (s.outcome === 'released') {
                await store.transact((tx) => service.ledger.releaseTransfer(tx, t));
                model.frozen -= t.amount + t.fee;
                model.available += t.amount + t.fee;
              }
            }
            const [balance] = await service.balances(store.read, merchantId, [currency]);
            assert.deepEqual(balance, {
              currency,
              available: model.available,
              frozen: model.frozen,
              awaitingSettlement: model.awaiting,
            });
            await clean();
          }
        },
      ),
      { numRuns: TEST_DATABASE_URL === undefined ? 60 : 25 },
    );
  });
});
