import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Interface, Wallet } from 'ethers';
import { LIVE_CHAIN_ENV, liveChainMerchant } from './support/chain-live.js';
import { databaseLabel } from './support/database.js';
import { QUERY_TO_WALLET, TO_WALLET } from './support/exchange.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { startEvmNode, type EvmNode } from './support/evm-node.js';
import { startTronApi, type TronApiFake } from './support/tron-api-fake.js';
import { startReceiver, until, type CallbackReceiver } from './support/receiver.js';

const CONFIRMATIONS = 3;
let seq = 0;
const ext = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

/** A fresh payee address, never seen by the node. */
const payee = () => Wallet.createRandom().address;

/**
 * Fiat → USDT on a real local EVM node (ganache, a 6-decimal test USDT compiled by solc) with
 * CHAIN_RAIL=live: the server's token sender pays from its hot wallet, through the public API.
 */
describe(`USDT live on an EVM chain: the token sender (${databaseLabel})`, () => {
  let node: EvmNode;
  let tron: TronApiFake;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const hotKey = `0x${randomBytes(32).toString('hex')}`;
  const hot = new Wallet(hotKey).address;
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  const query = async (orderId: string, externalOrderId: string) =>
    (await call(QUERY_TO_WALLET, { orderId, externalOrderId })).body.data as Record<string, unknown>;
  const callbacksFor = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>).filter((b) => b.orderId === orderId);
  const create = async (amount: number, addressTo: string, chainType = 'ETH') => {
    const externalOrderId = ext('xf');
    const response = await call(TO_WALLET, {
      addressTo,
      chainType,
      tokenType: 'USDT',
      currencyAmount: amount,
      currencyType: 'BRL',
      externalOrderId,
    });
    return { externalOrderId, response };
  };
  let balance: Awaited<ReturnType<typeof liveChainMerchant>>['balance'];
  let chainView: Awaited<ReturnType<typeof liveChainMerchant>>['chainView'];

  before(async () => {
    node = await startEvmNode({ chainId: 1337 });
    // TRON is not exercised here, but CHAIN_RAIL=live always watches it.
    tron = await startTronApi();
    await node.setEthBalance(hot, 10n ** 18n);
    // The local node treats a raw transaction with nonce 0 as nonce-less: the wallet starts at 1.
    await node.setNonce(hot, 1);
    await node.mint(hot, 1_000_000_000n); // 1,000 USDT
    gw = await startTestGateway({
      env: {
        ...LIVE_CHAIN_ENV,
        TRON_API_URL: tron.url,
        ETH_RPC_URL: node.url,
        ETH_USDT_CONTRACT: node.usdt,
        ETH_CHAIN_ID: '1337',
        ETH_CONFIRMATIONS: String(CONFIRMATIONS),
        EVM_HOT_WALLET_KEY: hotKey,
        CHAIN_SEND_STUCK_AFTER_MS: '1000',
        CHAIN_SEND_MAX_PER_ORDER_USDT: '500',
      },
    });
    receiver = await startReceiver();
    ({ merchant, balance, chainView } = await liveChainMerchant(gw, receiver, '100000.00'));
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await receiver.close();
    await node.close();
    await tron.close();
    assert.deepEqual(breaches, [], 'the ledger audit finds nothing');
  });

  it('sends the tokens after taking the fiat, and completes once the transfer is final', async () => {
    const to = payee();
    const before = await balance();
    const { externalOrderId, response } = await create(50, to);
    assert.equal(response.body.code, '200', JSON.stringify(response.body));
    const orderId = response.body.data.orderId as string;
    // Taken, signed, broadcast and mined (the node mines each transaction at once): waiting for confirmations.
    await until(async () => assert.equal((await query(orderId, externalOrderId)).orderStatus, 4, 'token sent'));
    assert.equal(await node.balanceOf(to), 10_000_000n, '50 BRL at 5.00 is 10 USDT');
    await node.mine(CONFIRMATIONS);
    await until(async () => assert.equal((await query(orderId, externalOrderId)).orderStatus, 8, 'complete'));
    const data = await query(orderId, externalOrderId);
    const receipt = await node.receipt(String(data.tradeHash));
    assert.ok(receipt !== null, 'tradeHash is a mined transaction');
    assert.equal(receipt.status, '0x1', 'tradeHash is the mined transfer');
    assert.equal(receipt.from.toLowerCase(), hot.toLowerCase(), 'sent from the hot wallet');
    await until(() => assert.equal(callbacksFor(orderId).at(-1)?.orderStatus, 8, 'callback of the completion'));
    const after = await balance();
    assert.equal(
      BigInt(before.available.replace('.', '')) - BigInt(after.available.replace('.', '')),
      5000n,
      'the fiat was taken',
    );
  });

  it('will not start against a node of another chain than the one sends are signed for', async () => {
    await assert.rejects(
      startTestGateway({
        env: {
          ...LIVE_CHAIN_ENV,
          TRON_API_URL: tron.url,
          ETH_RPC_URL: node.url,
          ETH_USDT_CONTRACT: node.usdt,
          ETH_CHAIN_ID: '1',
        },
      }),
      /ETH_CHAIN_ID is 1, but ETH_RPC_URL serves chain 1337/,
    );
  });

  it('refuses at creation a chain without its endpoint, and a send above the per-order ceiling', async () => {
    const bsc = await create(50, payee(), 'BSC');
    assert.equal(bsc.response.body.code, '300');
    assert.match(bsc.response.body.msgEn, /chainType BSC cannot send tokens.*BSC_RPC_URL/);
    const big = await create(5_000, payee());
    assert.equal(big.response.body.code, '300');
    assert.match(big.response.body.msgEn, /currencyAmount is too large: it buys 1000 USDT, above the 500 USDT/);
  });

  it('fails the order early when the hot wallet lacks the tokens; later sends take nonces past one Cashgate did not sign', async () => {
    // The operator sweeps the wallet down to 5 USDT with a transaction of its own.
    await node.transferUsdt(hotKey, payee(), (await node.balanceOf(hot)) - 5_000_000n);
    const before = await balance();
    const { externalOrderId, response } = await create(50, payee());
    const orderId = response.body.data.orderId as string;
    await until(async () => assert.equal((await query(orderId, externalOrderId)).orderStatus, 32, 'failed'));
    const failed = await query(orderId, externalOrderId);
    assert.match(
      failed.errorMsgEn as string,
      /the tokens were not sent: the hot wallet holds 5 USDT, the send needs 10 USDT; the fiat was returned/,
    );
    assert.deepEqual(await balance(), before, 'the fiat was released whole');
    await node.mint(hot, 100_000_000n);
    const to = payee();
    const next = await create(50, to);
    const nextId = next.response.body.data.orderId as string;
    await until(async () => assert.equal((await query(nextId, next.externalOrderId)).orderStatus, 4, 'token sent'));
    await node.mine(CONFIRMATIONS);
    await until(async () => assert.equal((await query(nextId, next.externalOrderId)).orderStatus, 8, 'complete'));
    assert.equal(await node.balanceOf(to), 10_000_000n, 'paid');
  });

  it('replaces a send the chain does not mine in time with the same nonce and higher fees; the mined one decides', async () => {
    await node.setAutomine(false);
    try {
      const to = payee();
      const { externalOrderId, response } = await create(25, to);
      const orderId = response.body.data.orderId as string;
      await until(async () => assert.equal((await query(orderId, externalOrderId)).orderStatus, 4, 'token sent'));
      const first = (await chainView(orderId)).send;
      // Nothing is mined: after CHAIN_SEND_STUCK_AFTER_MS the sender signs a replacement.
      await until(async () => assert.equal((await chainView(orderId)).send.attempts.length, 2, 'replaced'), 15_000);
      const { send } = await chainView(orderId);
      const [a, b] = send.attempts;
      assert.equal(a.nonce, b.nonce, 'the same nonce');
      assert.ok(BigInt(b.maxFeePerGas) * 10n >= BigInt(a.maxFeePerGas) * 11n, 'maxFeePerGas raised by a tenth or more');
      assert.ok(
        BigInt(b.maxPriorityFeePerGas) * 10n >= BigInt(a.maxPriorityFeePerGas) * 11n,
        'the tip raised by a tenth or more',
      );
      assert.equal(first.txHash, a.txHash, 'the first transaction was the one signed before');
      await until(async () => assert.ok((await chainView(orderId)).send.attempts[1].broadcastAt !== null, 'broadcast'));
      await node.mine(1 + CONFIRMATIONS);
      await until(async () => assert.equal((await query(orderId, externalOrderId)).orderStatus, 8, 'complete'));
      const data = await query(orderId, externalOrderId);
      assert.equal(data.tradeHash, b.txHash, 'tradeHash is the replacement, the one mined');
      assert.equal(await node.receipt(a.txHash), null, 'the replaced transaction was never mined');
      assert.equal(await node.balanceOf(to), 5_000_000n, 'paid once');
      const view = await chainView(orderId);
      assert.equal(view.send.state, 'confirmed');
      assert.deepEqual(
        view.send.attempts.map((x: { outcome: string }) => x.outcome),
        ['replaced', 'mined'],
      );
    } finally {
      await node.setAutomine(true);
    }
  });

  it('fails the order when its transfer reverts on chain, and returns the fiat', async () => {
    await node.setAutomine(false);
    const before = await balance();
    try {
      const { externalOrderId, response } = await create(25, payee());
      const orderId = response.body.data.orderId as string;
      await until(async () => assert.equal((await query(orderId, externalOrderId)).orderStatus, 4, 'token sent'));
      // The token's owner blocks the hot wallet in the same block, ahead of the send (a higher tip).
      const data = new Interface(['function setBlocked(address,bool)']).encodeFunctionData('setBlocked', [hot, true]);
      const gwei = 10n ** 9n;
      await node.rpc('eth_sendTransaction', [
        {
          from: node.accounts[0]?.address,
          to: node.usdt,
          data,
          gas: '0x30d40',
          maxFeePerGas: `0x${(500n * gwei).toString(16)}`,
          maxPriorityFeePerGas: `0x${(400n * gwei).toString(16)}`,
        },
      ]);
      await node.mine(1 + CONFIRMATIONS);
      await until(async () => assert.equal((await query(orderId, externalOrderId)).orderStatus, 32, 'failed'));
      const failed = await query(orderId, externalOrderId);
      assert.match(
        failed.errorMsgEn as string,
        /failed on the chain \(the token transfer reverted\); the fiat was returned/,
      );
      assert.equal((await node.receipt(String(failed.tradeHash)))?.status, '0x0', 'tradeHash is the reverted transfer');
      assert.deepEqual(await balance(), before, 'the fiat is back, fee included');
      assert.equal((await chainView(orderId)).send.state, 'failed');
    } finally {
      await node.setBlocked(hot, false);
      await node.setAutomine(true);
    }
  });
});
