import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { processMerchant, startCrashRig, type CrashRig } from './support/crash-rig.js';
import { databaseLabel } from './support/database.js';
import { startEvmNode, type EvmNode } from './support/evm-node.js';
import { startTronApi, type TronApiFake } from './support/tron-api-fake.js';
import { QUERY_TO_WALLET, TO_WALLET } from './support/exchange.js';
import { ADMIN_TOKEN, signedCall } from './support/gateway.js';
import { adminCall, type ServerProcess } from './support/process.js';
import { startReceiver, until, type CallbackReceiver } from './support/receiver.js';
import { startRpcProxy, type RpcProxy } from './support/rpc-proxy.js';

const CONFIRMATIONS = 2;

/**
 * The token sender killed (SIGKILL) at its two dangerous moments, on a local EVM node behind a relay
 * that swallows the broadcast: after the transaction was signed and stored but before the node had
 * it, and after the node took it but before the sender heard so. The successor asks the node first
 * and sends the stored transaction itself: the payee is paid once, with one nonce, one callback.
 */
describe(`USDT live: the token sender survives crashes (${databaseLabel})`, () => {
  let node: EvmNode;
  let tron: TronApiFake;
  let proxy: RpcProxy;
  let rig: CrashRig;
  let receiver: CallbackReceiver;
  let server: ServerProcess;
  let merchant: Awaited<ReturnType<typeof processMerchant>>;
  const hotKey = `0x${randomBytes(32).toString('hex')}`;
  const hot = new Wallet(hotKey).address;
  let env: Record<string, string>;
  let seq = 0;

  const call = (path: string, body: unknown) =>
    signedCall(server.url, merchant.credentials, { path, body }, Date.now());
  const status = async (orderId: string, externalOrderId: string) =>
    (await call(QUERY_TO_WALLET, { orderId, externalOrderId })).body.data?.orderStatus as number | undefined;
  const nonce = async () => BigInt(await node.rpc<string>('eth_getTransactionCount', [hot, 'latest']));

  before(async () => {
    node = await startEvmNode({ chainId: 1337 });
    // TRON is not exercised here, but CHAIN_RAIL=live always watches it.
    tron = await startTronApi();
    proxy = await startRpcProxy(node.url);
    rig = await startCrashRig('chain-crash');
    receiver = await startReceiver();
    await node.setEthBalance(hot, 10n ** 18n);
    await node.setNonce(hot, 1);
    await node.mint(hot, 1_000_000_000n);
    env = {
      ...rig.env,
      CHAIN_RAIL: 'live',
      TRON_API_URL: tron.url,
      ETH_RPC_URL: proxy.url,
      ETH_USDT_CONTRACT: node.usdt,
      ETH_CHAIN_ID: '1337',
      ETH_CONFIRMATIONS: String(CONFIRMATIONS),
      EVM_HOT_WALLET_KEY: hotKey,
      CHAIN_POLL_INTERVAL_MS: '200',
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
      CALLBACK_POLL_INTERVAL_MS: '100',
    };
    server = await rig.start(env);
    merchant = await processMerchant(server, { callbackUrl: receiver.url, currency: 'BRL', amount: '10000.00' });
    await adminCall(server, ADMIN_TOKEN, 'PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.00', sell: '5.00' });
  });
  after(async () => {
    await rig.close();
    await proxy.close();
    await receiver.close();
    await node.close();
    await tron.close();
  });

  for (const moment of [
    { name: 'after signing, before the node had the transaction', forward: false },
    { name: 'after the node took the transaction, before the sender heard', forward: true },
  ]) {
    it(`a crash ${moment.name}: the successor sends that same transaction, once`, async () => {
      const to = Wallet.createRandom().address;
      const externalOrderId = `crash-${Date.now()}-${++seq}`;
      const startNonce = await nonce();
      const caught = proxy.hold('eth_sendRawTransaction', { forward: moment.forward });
      const created = await call(TO_WALLET, {
        addressTo: to,
        chainType: 'ETH',
        tokenType: 'USDT',
        currencyAmount: 50,
        currencyType: 'BRL',
        externalOrderId,
      });
      assert.equal(created.body.code, '200', JSON.stringify(created.body));
      const orderId = created.body.data.orderId as string;
      await caught;
      await rig.crash(server);
      const crashedAt = Date.now();
      assert.equal(await node.balanceOf(to), moment.forward ? 10_000_000n : 0n, 'what reached the node');
      server = await rig.start(env);
      await until(async () => assert.equal(await status(orderId, externalOrderId), 4, 'token sent'), 20_000);
      await node.mine(CONFIRMATIONS);
      await until(async () => assert.equal(await status(orderId, externalOrderId), 8, 'complete'), 20_000);
      assert.equal(await node.balanceOf(to), 10_000_000n, 'paid once');
      // The successor asked the node about the stored transaction before it broadcast anything again.
      const hash = (await adminCall(server, ADMIN_TOKEN, 'GET', `/admin/v1/orders/${orderId}/chain`)).body.send
        .txHash as string;
      const sends = proxy.calls.filter((c) => c.method === 'eth_sendRawTransaction' && c.at > crashedAt);
      const firstLookup = proxy.calls.find(
        (c) => c.method === 'eth_getTransactionReceipt' && c.params[0] === hash && c.at > crashedAt,
      );
      assert.ok(firstLookup !== undefined, 'the successor looked the transaction up');
      assert.ok(
        sends.every((c) => c.at >= firstLookup.at),
        'no broadcast before the lookup',
      );
      assert.equal(sends.length, moment.forward ? 0 : 1, 'broadcast again only when the node lacked it');
      assert.equal(await nonce(), startNonce + 1n, 'one transaction of the hot wallet');
      const view = await adminCall(server, ADMIN_TOKEN, 'GET', `/admin/v1/orders/${orderId}/chain`);
      assert.equal(view.body.send.attempts.length, 1, 'one transaction signed');
      await until(() => {
        const callbacks = receiver.received
          .map((r) => JSON.parse(r.body) as { orderId: string; orderStatus: number })
          .filter((b) => b.orderId === orderId);
        assert.deepEqual(
          callbacks.map((b) => b.orderStatus),
          [8],
          'one callback, of the completion',
        );
      });
    });
  }
});
