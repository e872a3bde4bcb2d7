import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { EvmRpcClient, EvmRpcError } from '../src/rails/chain/evm-rpc.js';
import {
  addressOf,
  addressTopic,
  erc20Transfer,
  privateKeyFromHex,
  signEip1559,
  topicAddress,
  TRANSFER_TOPIC,
  type Eip1559Transaction,
} from '../src/rails/chain/evm-tx.js';
import { freePort } from './support/fake-daraja.js';
import { startEvmNode, type EvmNode } from './support/evm-node.js';

/**
 * The EVM client and transaction signer against a real local EVM node with a 6-decimal test USDT:
 * what the token sender and the deposit watcher are built on.
 */
describe('EVM client and transactions on a local node', () => {
  let node: EvmNode;
  let client: EvmRpcClient;
  const registry = new Registry();
  // A hot wallet of its own (not one the node holds): funded with gas and tokens by the test.
  const hotKey = privateKeyFromHex(`0x${'5c'.repeat(31)}01`);
  const hot = addressOf(hotKey);
  let nextNonce = 1n;

  /** An ERC-20 transfer from the hot wallet, signed here, with the node's fees or the ones given. */
  const transferTx = async (
    to: string,
    units: bigint,
    fees?: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
    nonce = nextNonce,
  ): Promise<Eip1559Transaction> => {
    const head = await client.block('latest');
    const priority = fees?.maxPriorityFeePerGas ?? (await client.maxPriorityFee());
    return {
      chainId: await client.chainId(),
      nonce,
      maxPriorityFeePerGas: priority,
      maxFeePerGas: fees?.maxFeePerGas ?? 2n * (head?.baseFeePerGas ?? 1_000_000_000n) + priority,
      gasLimit: 100_000n,
      to: node.usdt,
      value: 0n,
      data: erc20Transfer(to, units),
    };
  };

  before(async () => {
    node = await startEvmNode({ chainId: 31337 });
    client = new EvmRpcClient({ chain: 'ETH', url: node.url, timeoutMs: 5_000 }, registry);
    await node.setEthBalance(hot, 10n ** 18n);
    // The local node takes a raw transaction signed with nonce 0 as one with no nonce: start at 1.
    await node.setNonce(hot, 1);
    await node.mint(hot, 1_000_000_000n);
  });
  after(async () => {
    await client.close();
    await node.close();
  });

  it('reads the chain, the head and the token’s decimals and balances', async () => {
    assert.equal(await client.chainId(), 31337n);
    assert.equal(await client.tokenDecimals(node.usdt), 6);
    assert.equal(await client.tokenBalance(node.usdt, hot), 1_000_000_000n);
    assert.equal(await client.balance(hot), 10n ** 18n);
    const head = await client.block('latest');
    assert.ok(head !== undefined && head.number === (await client.blockNumber()), 'the head block');
    assert.equal(await client.block(head.number + 1000n), undefined, 'no block beyond the head');
    assert.equal(await client.nonce(hot, 'latest'), 1n);
  });

  it('broadcasts a signed transfer whose hash is known before it is sent, and finds its Transfer log', async () => {
    const payee = node.accounts[3]?.address ?? '';
    const signed = signEip1559(await transferTx(payee, 12_500_000n), hotKey);
    assert.equal(await client.sendRaw(signed.raw), signed.hash, 'the node knows it by the hash computed here');
    nextNonce += 1n;
    const receipt = await client.receipt(signed.hash);
    assert.equal(receipt?.status, 1);
    assert.equal(await client.tokenBalance(node.usdt, payee), 12_500_000n);
    const logs = await client.logs({
      address: node.usdt,
      topics: [TRANSFER_TOPIC, null, addressTopic(payee)],
      from: receipt.blockNumber,
      to: receipt.blockNumber,
    });
    assert.equal(logs.length, 1);
    const [log] = logs;
    assert.ok(log, 'the transfer’s log');
    assert.equal(log.transactionHash, signed.hash);
    assert.equal(topicAddress(log.topics[1] ?? ''), hot);
    assert.equal(BigInt(log.data), 12_500_000n);
    // Sending the same signed transaction again is refused, and changes nothing.
    await assert.rejects(client.sendRaw(signed.raw), (error: unknown) => {
      assert.ok(error instanceof EvmRpcError && error.kind === 'rpc', String(error));
      return true;
    });
    assert.equal(await client.tokenBalance(node.usdt, payee), 12_500_000n);
  });

  it('replaces a stuck transfer with the same nonce and higher fees: only one is ever mined', async () => {
    const payee = node.accounts[4]?.address ?? '';
    await node.setAutomine(false);
    try {
      const low = { maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
      const stuck = signEip1559(await transferTx(payee, 3_000_000n, low), hotKey);
      await client.sendRaw(stuck.raw);
      assert.equal(await client.receipt(stuck.hash), undefined, 'pending');
      assert.equal(await client.knows(stuck.hash), true);
      // (Not `eth_getTransactionCount(…, 'pending')`: nodes differ on whether it counts their pool, which is
      // one reason the sender keeps its nonces in its own database.)
      // Less than 10 % more is refused as underpriced.
      const timid = signEip1559(
        await transferTx(payee, 3_000_000n, {
          maxFeePerGas: low.maxFeePerGas + 1n,
          maxPriorityFeePerGas: low.maxPriorityFeePerGas + 1n,
        }),
        hotKey,
      );
      await assert.rejects(
        client.sendRaw(timid.raw),
        (error: unknown) => error instanceof EvmRpcError && error.kind === 'rpc',
      );
      const bumped = signEip1559(
        await transferTx(payee, 3_000_000n, { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_500_000_000n }),
        hotKey,
      );
      await client.sendRaw(bumped.raw);
      await node.mine();
      assert.equal((await client.receipt(bumped.hash))?.status, 1);
      assert.equal(await client.receipt(stuck.hash), undefined, 'the replaced one is never mined');
      assert.equal(await client.tokenBalance(node.usdt, payee), 3_000_000n, 'paid once');
      nextNonce += 1n;
    } finally {
      await node.setAutomine(true);
    }
  });

  it('reports a reverted transfer by its receipt', async () => {
    const payee = node.accounts[5]?.address ?? '';
    await node.setBlocked(hot, true);
    try {
      const signed = signEip1559(await transferTx(payee, 1_000_000n), hotKey);
      await client.sendRaw(signed.raw);
      nextNonce += 1n;
      assert.equal((await client.receipt(signed.hash))?.status, 0);
      assert.equal(await client.tokenBalance(node.usdt, payee), 0n);
    } finally {
      await node.setBlocked(hot, false);
    }
  });

  it('sees a reorganisation as another hash at the same height, and the vanished transfer’s log gone', async () => {
    const payee = node.accounts[6]?.address ?? '';
    const payer = node.accounts[7];
    assert.ok(payer !== undefined, 'a funded payer');
    await node.mint(payer.address, 5_000_000n);
    const snapshot = await node.snapshot();
    const deposit = await node.transferUsdt(payer.privateKey, payee, 5_000_000n);
    const height = (await client.receipt(deposit))?.blockNumber ?? 0n;
    const before = await client.block(height);
    await node.revert(snapshot);
    // Another history: a different transaction at that height.
    await node.mint(payer.address, 1n);
    await node.mine(2);
    const afterReorg = await client.block(height);
    assert.ok(before !== undefined && afterReorg !== undefined, 'the height exists in both histories');
    assert.notEqual(afterReorg.hash, before.hash, 'same height, another block');
    const logs = await client.logs({
      address: node.usdt,
      topics: [TRANSFER_TOPIC, null, addressTopic(payee)],
      from: 0n,
      to: height + 2n,
    });
    assert.equal(logs.length, 0, 'the deposit vanished');
    assert.equal(await client.receipt(deposit), undefined);
  });

  it('sorts failures by what they mean: refused by the node, never sent, unknown, invalid; and counts them', async () => {
    await assert.rejects(client.call('eth_noSuchMethod', []), (error: unknown) => {
      assert.ok(error instanceof EvmRpcError && error.kind === 'rpc' && error.code !== undefined, String(error));
      return true;
    });
    const closed = new EvmRpcClient(
      { chain: 'BSC', url: `http://127.0.0.1:${await freePort()}`, timeoutMs: 1_000 },
      registry,
    );
    await assert.rejects(closed.blockNumber(), (error: unknown) => {
      assert.ok(error instanceof EvmRpcError && error.kind === 'not-sent', String(error));
      return true;
    });
    await closed.close();
    // A gateway that failed (whatever its body), a throttle, a timeout: the outcome is unknown.
    // An answer that is not JSON-RPC, or does not read as what was asked: invalid.
    const answers: [number, string][] = [
      [503, '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"upstream unavailable"}}'],
      [429, 'slow down'],
      [200, '<html>not json</html>'],
      [200, '{"jsonrpc":"2.0","id":1,"result":"0x"}'],
      [200, '{"jsonrpc":"2.0","id":99,"error":{"code":-32000,"message":"another request"}}'],
    ];
    let next = 0;
    const stub = createServer((request, response) => {
      const [status, body] = answers[next++] ?? [200, ''];
      if (request.url === '/hang') return;
      response.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((done) => stub.listen(0, '127.0.0.1', done));
    const port = (stub.address() as AddressInfo).port;
    const stubbed = new EvmRpcClient({ chain: 'BSC', url: `http://127.0.0.1:${port}`, timeoutMs: 300 }, registry);
    const kinds: string[] = [];
    for (const call of [
      () => stubbed.sendRaw('0x02'),
      () => stubbed.sendRaw('0x02'),
      () => stubbed.blockNumber(),
      () => stubbed.tokenDecimals(node.usdt),
      () => stubbed.blockNumber(),
    ])
      kinds.push(
        await call().then(
          () => 'ok',
          (error: unknown) => (error instanceof EvmRpcError ? error.kind : 'other'),
        ),
      );
    assert.deepEqual(kinds, ['unknown', 'unknown', 'invalid', 'invalid', 'invalid']);
    const hanging = new EvmRpcClient({ chain: 'BSC', url: `http://127.0.0.1:${port}/hang`, timeoutMs: 200 }, registry);
    await assert.rejects(
      hanging.sendRaw('0x02'),
      (error: unknown) => error instanceof EvmRpcError && error.kind === 'unknown',
    );
    await Promise.all([stubbed.close(), hanging.close()]);
    stub.closeAllConnections();
    await new Promise((done) => stub.close(done));
    const metrics = await registry.metrics();
    assert.match(
      metrics,
      /cashgate_chain_rpc_requests_total\{chain="ETH",method="eth_sendRawTransaction",outcome="ok"\} [1-9]/,
    );
    assert.match(metrics, /cashgate_chain_rpc_requests_total\{chain="ETH",method="eth_noSuchMethod",outcome="rpc-/);
    assert.match(
      metrics,
      /cashgate_chain_rpc_requests_total\{chain="BSC",method="eth_blockNumber",outcome="not-sent"\} 1/,
    );
  });
});
