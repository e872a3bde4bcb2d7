import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleSignIn, createConsoleUser, type ConsoleClient } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { TO_FIAT, TO_WALLET, TRON_FROM } from './support/exchange.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

const EVM_TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const HOT = '0x1111111111111111111111111111111111111111';
const hash = (digit: string) => `0x${digit.repeat(64)}`;

/** The order page's "On chain" panel (its title in the page's language), or undefined when the page has none. */
function chainPanel(page: string, title: string): string | undefined {
  const start = page.indexOf(`<div class="panel"><h2>${title}</h2>`);
  if (start < 0) return undefined;
  const ends = ['<div class="panel">', '<section class="panel"', '</main>']
    .map((tag) => page.indexOf(tag, start + 1))
    .filter((i) => i > 0);
  const end = Math.min(...ends);
  return page.slice(start, end);
}

/**
 * The order page's "On chain" panel, fed with the rows the live chain rail keeps (written straight
 * to the store: this gateway runs the sandbox chain rail).
 */
describe(`console: an order's on-chain records (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let consoleEn: ConsoleClient;
  const ids = { send: '', deposit: '', bare: '', depositAddress: '' };
  let seq = 0;
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  const buy = async (chainType: string, addressTo: string) => {
    const response = await call(TO_WALLET, {
      addressTo,
      chainType,
      tokenType: 'USDT',
      currencyAmount: 50,
      currencyType: 'BRL',
      externalOrderId: `chain-${Date.now()}-${++seq}`,
    });
    assert.equal(response.body.code, '200', JSON.stringify(response.body));
    return response.body.data as { orderId: string };
  };

  before(async () => {
    gw = await startTestGateway({ workers: false });
    merchant = await gw.merchantWithKey();
    assert.equal((await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.00', sell: '5.00' })).status, 200);
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '1000.00',
      reason: 'test funds',
    });
    ids.send = (await buy('BSC', EVM_TO)).orderId;
    ids.bare = (await buy('ETH', EVM_TO)).orderId;
    const sold = await call(TO_FIAT, {
      tokenAmount: '10.5',
      chainType: 'TRON',
      addressFrom: TRON_FROM,
      currencyType: 'BRL',
      tokenType: 'USDT',
      externalOrderId: `chain-${Date.now()}-${++seq}`,
    });
    assert.equal(sold.body.code, '200', JSON.stringify(sold.body));
    ids.deposit = sold.body.data.orderId as string;
    ids.depositAddress = sold.body.data.addressTo as string;

    const now = gw.clock.now();
    await gw.gateway.store.transact(async (tx) => {
      await tx
        .insertInto('chain_sends')
        .values({
          order_id: ids.send,
          chain: 'BSC',
          to_address: EVM_TO,
          units: '12345000000000000000',
          state: 'failed',
          from_address: HOT,
          nonce: 7,
          tx_hash: hash('b'),
          block_number: 4242,
          block_hash: hash('c'),
          confirmations: 9,
          failure: 'the transfer reverted: <script>alert(1)</script>',
          signed_at: now - 60_000,
          created_at: now - 61_000,
          updated_at: now,
        })
        .execute();
      const attempt = { order_id: ids.send, chain: 'BSC', nonce: 7, raw: '0x00', expires_at: null };
      await tx
        .insertInto('chain_send_attempts')
        .values([
          {
            ...attempt,
            tx_hash: hash('a'),
            max_fee: '3000000000',
            priority_fee: '1000000000',
            created_at: now - 60_000,
            broadcast_at: now - 59_000,
            outcome: 'replaced',
          },
          {
            ...attempt,
            tx_hash: hash('b'),
            max_fee: '6000000000',
            priority_fee: '2000000000',
            created_at: now - 30_000,
            broadcast_at: now - 29_000,
            outcome: 'reverted: <b>transfer amount exceeds balance</b>',
          },
        ])
        .execute();
      const transfer = { chain: 'TRON', to_address: ids.depositAddress, from_address: TRON_FROM, log_index: 0 };
      await tx
        .insertInto('chain_transfers')
        .values([
          {
            ...transfer,
            tx_hash: 'd'.repeat(64),
            units: '10500000',
            block_number: 100,
            block_hash: 'e'.repeat(64),
            state: 'reported',
            seen_at: now - 20_000,
            reported_at: now - 10_000,
          },
          {
            ...transfer,
            tx_hash: 'f'.repeat(64),
            units: '1',
            block_number: 103,
            block_hash: '9'.repeat(64),
            state: 'seen',
            seen_at: now - 5_000,
            reported_at: null,
          },
        ])
        .execute();
    });
    consoleEn = await consoleSignIn(gw, merchant.merchantId);
  });
  after(() => gw.close());

  it('shows a send: its state in words, wallets, amount in USDT, deciding transaction and every one signed', async () => {
    const page = await consoleEn.get(`/console/orders/${ids.send}`);
    assert.equal(page.status, 200, 'the order page');
    const panel = chainPanel(page.text, 'On chain');
    assert.ok(panel !== undefined, 'the page has an "On chain" panel');
    assert.ok(panel.includes('<span class="badge bad">Failed</span>'), `the state in words: ${panel}`);
    assert.ok(panel.includes(`<code>${HOT}</code>`), 'the hot wallet it was sent from');
    assert.ok(panel.includes(`<code>${EVM_TO}</code>`), 'the destination');
    assert.ok(panel.includes('12.345 USDT'), 'the amount with BSC’s 18 decimals');
    assert.ok(panel.includes(`<dd><code>${hash('b')}</code></dd>`), 'the deciding transaction');
    assert.ok(panel.includes('<dd>4242</dd>') && panel.includes('<dd>9</dd>'), 'its block and confirmations');
    assert.ok(
      panel.includes('the transfer reverted: &lt;script&gt;alert(1)&lt;/script&gt;'),
      'the failure reason, escaped',
    );
    assert.ok(!page.text.includes('<script>alert(1)'), 'nothing of the record is markup');
    assert.ok(panel.includes('Transactions signed'), 'the transactions signed');
    const rows = [
      ...panel.matchAll(/<tr><td class="mono">(0x[0-9a-f]{64})<\/td><td>([^<]+)<\/td><td>(.*?)<\/td><\/tr>/g),
    ];
    assert.deepEqual(
      rows.map((r) => r[1]),
      [hash('a'), hash('b')],
      'every transaction signed, oldest first',
    );
    assert.ok(
      rows.every((r) => r[2]?.endsWith(' UTC')),
      'when each was signed',
    );
    assert.ok(rows[0]?.[3]?.includes('Replaced by a later transaction'), 'the first was replaced');
    assert.ok(
      rows[1]?.[3]?.includes('Reverted: &lt;b&gt;transfer amount exceeds balance&lt;/b&gt;'),
      'the second reverted, with its reason escaped',
    );
    assert.ok(!panel.includes('Deposits received'), 'a send has no deposits');
  });

  it('shows deposits: hash, sender, amount, block, and whether each is final', async () => {
    const page = await consoleEn.get(`/console/orders/${ids.deposit}`);
    const panel = chainPanel(page.text, 'On chain');
    assert.ok(panel !== undefined, 'the page has an "On chain" panel');
    assert.ok(!panel.includes('Token send'), 'a deposit order has no send');
    const rows = [...panel.matchAll(/<tr><td>[^<]+<\/td><td class="mono">(\w+)<\/td>(.*?)<\/tr>/g)];
    assert.equal(rows.length, 2, `both transfers: ${panel}`);
    const [final, waiting] = rows.map((r) => r[2] ?? '');
    assert.equal(rows[0]?.[1], 'd'.repeat(64), 'the first transfer’s hash');
    assert.ok(final?.includes(`<td class="mono">${TRON_FROM}</td>`), 'its sender');
    assert.ok(final?.includes('10.5 USDT') && final.includes('>100<'), 'its amount and block');
    assert.ok(final?.includes('<span class="badge ok">Final</span>'), 'it is final');
    assert.equal(rows[1]?.[1], 'f'.repeat(64), 'the second transfer’s hash');
    assert.ok(waiting?.includes('0.000001 USDT') && waiting.includes('>103<'), 'one base unit, and its block');
    assert.ok(waiting?.includes('<span class="badge wait">Waiting for confirmations</span>'), 'it is not final yet');
  });

  it('speaks Portuguese and Spanish', async () => {
    for (const [language, title, failed, reverted, final] of [
      ['pt-BR', 'Na blockchain', 'Falhou', 'Revertida: ', 'Definitivo'],
      ['es', 'En la cadena', 'Falló', 'Revertida: ', 'Definitivo'],
    ] as const) {
      const client = await consoleSignIn(
        gw,
        merchant.merchantId,
        await createConsoleUser(gw, merchant.merchantId, { language }),
      );
      const send = chainPanel((await client.get(`/console/orders/${ids.send}`)).text, title);
      assert.ok(send !== undefined, `${language}: the panel, titled ${title}`);
      assert.ok(send.includes(`<span class="badge bad">${failed}</span>`), `${language}: the state in words`);
      assert.ok(send.includes(reverted), `${language}: the outcome in words`);
      assert.ok(send.includes('12.345 USDT'), `${language}: the amount`);
      const deposit = chainPanel((await client.get(`/console/orders/${ids.deposit}`)).text, title);
      assert.ok(deposit?.includes(`<span class="badge ok">${final}</span>`), `${language}: a final deposit`);
    }
  });

  it('shows no panel for an order with nothing on chain', async () => {
    const page = await consoleEn.get(`/console/orders/${ids.bare}`);
    assert.equal(page.status, 200, 'the order page');
    assert.equal(chainPanel(page.text, 'On chain'), undefined, 'no "On chain" panel');
  });

  it('answers the admin route with the same records, its response schema naming them', async () => {
    const view = (await gw.admin('GET', `/admin/v1/orders/${ids.send}/chain`)).body;
    assert.equal(view.send.units, '12345000000000000000', 'base units as decimal text');
    assert.deepEqual(
      view.send.attempts.map((a: { txHash: string; outcome: string | null }) => [a.txHash, a.outcome]),
      [
        [hash('a'), 'replaced'],
        [hash('b'), 'reverted: <b>transfer amount exceeds balance</b>'],
      ],
      'its attempts',
    );
    assert.deepEqual((await gw.admin('GET', `/admin/v1/orders/${ids.bare}/chain`)).body, { send: null, deposits: [] });
    const deposits = (await gw.admin('GET', `/admin/v1/orders/${ids.deposit}/chain`)).body.deposits;
    assert.deepEqual(
      deposits.map((d: { state: string; reportedAt: number | null }) => d.state),
      ['reported', 'seen'],
      'its deposits',
    );
    const document = (await (await fetch(new URL('/openapi.json', gw.url))).json()) as any;
    const named =
      document.paths['/admin/v1/orders/{orderId}/chain'].get.responses['200'].content['application/json'].schema;
    const schema = document.components.schemas[named.$ref.replace('#/components/schemas/', '')];
    assert.deepEqual(Object.keys(schema.properties), ['send', 'deposits'], 'the response names its members');
    assert.deepEqual(schema.required, ['send', 'deposits'], 'both always present');
    const send = schema.properties.send.anyOf.find((s: { type?: string }) => s.type === 'object');
    assert.ok(send?.properties?.attempts?.items?.properties?.outcome !== undefined, 'a send lists its attempts');
    assert.ok(
      schema.properties.deposits.items.properties.state.anyOf.some((s: { const?: string }) => s.const === 'reported'),
      'a deposit’s states are named',
    );
  });
});
