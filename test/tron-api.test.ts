import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { privateKeyFromHex } from '../src/rails/chain/evm-tx.js';
import { TronApiClient, TronApiError, tronDepositSource } from '../src/rails/chain/tron-api.js';
import {
  buildTrc20Transfer,
  decodeTrc20Transfer,
  signTronTransaction,
  tronAddressOfKey,
  type TronBlockRef,
} from '../src/rails/chain/tron-tx.js';
import { freePort } from './support/fake-daraja.js';
import { MAINNET_USDT, startTronApi, type TronApiFake } from './support/tron-api-fake.js';

/**
 * The TRON API client, transaction builder and deposit source against the local TronGrid-compatible
 * API: what the TRON token sender and deposit watcher are built on.
 */

const API_KEY = 'cashgate-test-key';
const TRX = 1_000_000n;
const USDT = 1_000_000n;
let keySeed = 0x10;
/** A fresh key and its address. */
const wallet = (): { key: Uint8Array; address: string } => {
  const key = privateKeyFromHex(`0x${(keySeed++).toString(16).padStart(2, '0').repeat(32)}`);
  return { key, address: tronAddressOfKey(key) };
};

/** Asserts a promise rejects with a TronApiError of this kind (and code), and answers it. */
async function failsWith(promise: Promise<unknown>, kind: TronApiError['kind'], code?: string): Promise<TronApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TronApiError, `a TronApiError, not ${String(error)}`);
    assert.equal(error.kind, kind, error.message);
    if (code !== undefined) assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected a ${kind} TronApiError`);
}

describe('TRON API client and transactions on the local TronGrid-compatible API', () => {
  let fake: TronApiFake;
  let client: TronApiClient;
  const registry = new Registry();
  const hot = wallet();

  /** A signed TRC-20 transfer from `from`, made the way Cashgate's sender makes it. */
  const transfer = async (
    from: { key: Uint8Array; address: string },
    to: string,
    units: bigint,
    overrides: { refBlock?: TronBlockRef; expirationMs?: number; feeLimitSun?: bigint; signWith?: Uint8Array } = {},
  ) => {
    const head = await client.head();
    const tx = buildTrc20Transfer({
      owner: from.address,
      contract: fake.contract,
      to,
      units,
      refBlock: overrides.refBlock ?? head,
      expirationMs: overrides.expirationMs ?? 60_000,
      timestamp: head.timestamp,
      feeLimitSun: overrides.feeLimitSun ?? 50n * TRX,
    });
    // What is signed is read back first: the bytes say what the JSON says.
    const decoded = decodeTrc20Transfer(tx.rawDataHex);
    assert.deepEqual([decoded.owner, decoded.to, decoded.units], [from.address, to, units]);
    const signature = signTronTransaction(tx.txID, overrides.signWith ?? from.key);
    return { txID: tx.txID, raw_data: tx.rawData, raw_data_hex: tx.rawDataHex, signature: [signature] };
  };

  before(async () => {
    fake = await startTronApi({ apiKey: API_KEY });
    client = new TronApiClient({ url: fake.url, apiKey: API_KEY, timeoutMs: 2_000 }, registry);
    fake.fund(hot.address, 500n * TRX);
    fake.mint(hot.address, 1_000n * USDT);
  });
  after(async () => {
    await client.close();
    await fake.close();
  });

  it('reads the head, blocks, the token and accounts', async () => {
    assert.equal(fake.contract, MAINNET_USDT);
    const head = await client.head();
    assert.deepEqual(head, fake.head());
    const block = await client.block(head.number);
    assert.equal(block?.id, head.id);
    assert.equal(BigInt(`0x${head.id.slice(0, 16)}`), head.number, 'a blockID starts with its number');
    assert.equal(await client.block(head.number + 100n), undefined);
    assert.equal(await client.tokenDecimals(fake.contract), 6);
    assert.equal(await client.tokenBalance(fake.contract, hot.address), 1_000n * USDT);
    assert.equal(await client.balance(hot.address), 500n * TRX);
    const stranger = wallet().address;
    assert.equal(await client.balance(stranger), 0n, 'an account the chain does not have ({}) holds nothing');
    assert.equal(await client.tokenBalance(fake.contract, stranger), 0n);
    assert.deepEqual(await client.resources(hot.address), {
      energyLimit: 0n,
      energyUsed: 0n,
      freeNetLimit: 600n,
      freeNetUsed: 0n,
      netLimit: 0n,
      netUsed: 0n,
    });
    await failsWith(client.tokenDecimals(hot.address), 'rejected', 'CONTRACT_VALIDATE_ERROR');
    const calls = fake.calls('wallet/getnowblock');
    assert.ok(calls.length > 0 && calls.every((call) => call.apiKey === API_KEY), 'every call carries the API key');
  });

  it('broadcasts a signed transfer that is mined with SUCCESS and moves the tokens', async () => {
    const payee = wallet().address;
    const tx = await transfer(hot, payee, 25n * USDT);
    await client.broadcast(tx);
    assert.deepEqual(fake.pool(), [tx.txID]);
    assert.equal(await client.transactionInfo(tx.txID), undefined, 'no receipt before it is mined');
    const pending = await client.transaction(tx.txID);
    assert.equal(pending?.txID, tx.txID, 'the node knows the pending transaction');
    assert.equal(pending.rawDataHex, tx.raw_data_hex);
    const [block] = fake.mine();
    const info = await client.transactionInfo(tx.txID);
    assert.ok(info !== undefined, 'a receipt once mined');
    assert.equal(info.blockNumber, block?.number);
    assert.equal(info.blockTimestamp, block?.timestamp);
    assert.equal(info.result, 'SUCCESS');
    assert.equal(info.receiptResult, 'SUCCESS');
    // A new holder: 130,285 energy at 100 sun, all burnt; 345 bytes from the free 600.
    assert.equal(info.energyUsageTotal, 130_285n);
    assert.equal(info.fee, 13_028_500n);
    assert.equal(info.netUsage, 345n);
    assert.equal(info.netFee, 0n);
    assert.equal((await client.transaction(tx.txID))?.contractRet, 'SUCCESS');
    assert.equal(await client.tokenBalance(fake.contract, payee), 25n * USDT);
    assert.equal(await client.tokenBalance(fake.contract, hot.address), 975n * USDT);
    assert.equal(await client.balance(hot.address), 500n * TRX - 13_028_500n);
    assert.deepEqual(await client.transferLogs(info.blockNumber), [
      {
        txID: tx.txID,
        blockNumber: info.blockNumber,
        logIndex: 0,
        contract: fake.contract,
        from: hot.address,
        to: payee,
        units: 25n * USDT,
      },
    ]);

    // A second transfer the same day, to a holder: the free bandwidth is spent, TRX pays for it.
    const again = await transfer(hot, payee, 1n * USDT);
    await client.broadcast(again);
    fake.mine();
    const second = await client.transactionInfo(again.txID);
    assert.equal(second?.energyUsageTotal, 64_285n);
    assert.equal(second.netFee, 345_000n);
    assert.equal(second.fee, 6_428_500n + 345_000n);
    assert.equal((await client.resources(hot.address)).freeNetUsed, 345n);

    // /walletsolidity sees it once its block is 19 deep.
    assert.equal(await client.transactionInfo(tx.txID, { solidified: true }), undefined);
    fake.mine(18);
    assert.equal((await client.transactionInfo(tx.txID, { solidified: true }))?.result, 'SUCCESS');
  });

  it('refuses a transaction signed by another key (SIGERROR)', async () => {
    const tx = await transfer(hot, wallet().address, 1n, { signWith: wallet().key });
    const error = await failsWith(client.broadcast(tx), 'rejected', 'SIGERROR');
    assert.match(error.message, /Validate signature error: .* is signed by T\w+ but it is not contained of permission/);
    assert.deepEqual(fake.pool(), []);
  });

  it('refuses the same transaction twice (DUP_TRANSACTION_ERROR), pending or mined', async () => {
    const tx = await transfer(hot, wallet().address, 2n);
    await client.broadcast(tx);
    await failsWith(client.broadcast(tx), 'rejected', 'DUP_TRANSACTION_ERROR');
    fake.mine();
    const error = await failsWith(client.broadcast(tx), 'rejected', 'DUP_TRANSACTION_ERROR');
    assert.match(error.message, /Dup transaction/);
  });

  it('refuses a reference block the chain no longer has (TAPOS_ERROR)', async () => {
    const head = await client.head();
    const tx = await transfer(hot, wallet().address, 3n, { refBlock: head });
    fake.reorg(1);
    assert.notEqual((await client.block(head.number))?.id, head.id, 'the block was replaced');
    const error = await failsWith(client.broadcast(tx), 'rejected', 'TAPOS_ERROR');
    assert.match(error.message, /Tapos check error/);
    const forged = await transfer(hot, wallet().address, 3n, {
      refBlock: { ...head, id: `${head.id.slice(0, 16)}${'0'.repeat(48)}` },
    });
    await failsWith(client.broadcast(forged), 'rejected', 'TAPOS_ERROR');
  });

  it('refuses an expired transaction, or one expiring more than a day after the head', async () => {
    const tx = await transfer(hot, wallet().address, 4n, { expirationMs: 60_000 });
    fake.advanceTime(120_000);
    fake.mine();
    const error = await failsWith(client.broadcast(tx), 'rejected', 'TRANSACTION_EXPIRATION_ERROR');
    assert.match(error.message, /Transaction expired/);
    const head = await client.head();
    const far = await transfer(hot, wallet().address, 4n, {
      refBlock: { ...head, timestamp: head.timestamp + 2 * 3600_000 },
      expirationMs: 23 * 3600_000,
    });
    await failsWith(client.broadcast(far), 'rejected', 'TRANSACTION_EXPIRATION_ERROR');
  });

  it('records OUT_OF_ENERGY when the owner cannot pay, or the fee limit is too low', async () => {
    const poor = wallet();
    fake.fund(poor.address, 1n * TRX);
    fake.mint(poor.address, 10n * USDT);
    const payee = wallet().address;
    const tx = await transfer(poor, payee, 5n * USDT);
    await client.broadcast(tx);
    fake.mine();
    const info = await client.transactionInfo(tx.txID);
    assert.equal(info?.result, 'FAILED');
    assert.equal(info.receiptResult, 'OUT_OF_ENERGY');
    assert.match(info.resMessage ?? '', /Not enough energy/);
    // Its energy limit was its 1 TRX: 10,000 energy at 100 sun, all of it burnt.
    assert.equal(info.energyUsageTotal, 10_000n);
    assert.equal(info.fee, 1n * TRX);
    assert.equal(await client.balance(poor.address), 0n);
    assert.equal(await client.tokenBalance(fake.contract, poor.address), 10n * USDT, 'no token moved');
    assert.equal(await client.tokenBalance(fake.contract, payee), 0n);
    assert.deepEqual(await client.transferLogs(info.blockNumber), []);
    // Now it has neither free bandwidth left nor TRX: refused at the door.
    await failsWith(client.broadcast(await transfer(poor, payee, 1n)), 'rejected', 'BANDWITH_ERROR');

    // The hot wallet can pay, but a 1 TRX fee limit caps the energy at 10,000.
    const capped = await transfer(hot, payee, 1n, { feeLimitSun: 1n * TRX });
    await client.broadcast(capped);
    fake.mine();
    const cappedInfo = await client.transactionInfo(capped.txID);
    assert.equal(cappedInfo?.receiptResult, 'OUT_OF_ENERGY');
    assert.equal(cappedInfo.energyFee, 1n * TRX);
  });

  it('records REVERT when the sender is short of tokens', async () => {
    const empty = wallet();
    fake.fund(empty.address, 50n * TRX);
    const tx = await transfer(empty, wallet().address, 1n * USDT);
    await client.broadcast(tx);
    fake.mine();
    const info = await client.transactionInfo(tx.txID);
    assert.equal(info?.result, 'FAILED');
    assert.equal(info.receiptResult, 'REVERT');
    assert.equal(info.resMessage, 'REVERT opcode executed');
    assert.ok(info.fee > 0n && info.fee < 1n * TRX, `a revert costs what ran (${info.fee})`);
    assert.equal((await client.transaction(tx.txID))?.contractRet, 'REVERT');
  });

  it('refuses an owner the chain does not have (CONTRACT_VALIDATE_ERROR)', async () => {
    const ghost = wallet();
    fake.mint(ghost.address, 5n * USDT); // TRC-20 tokens do not make an account
    const error = await failsWith(
      client.broadcast(await transfer(ghost, hot.address, 1n)),
      'rejected',
      'CONTRACT_VALIDATE_ERROR',
    );
    assert.match(error.message, /account \[T\w+\] does not exist/);
  });

  it('finds deposits to the watched addresses, block by block', async () => {
    const source = tronDepositSource(client, fake.contract);
    const [a, b, other] = [wallet().address, wallet().address, wallet().address];
    const payer = wallet().address;
    fake.mint(payer, 100n * USDT);
    const from = (await source.head()) + 1n;
    const first = fake.deposit(payer, a, 5n * USDT);
    fake.deposit(payer, other, 7n * USDT);
    fake.mine();
    const third = fake.deposit(payer, b, 9n * USDT);
    fake.mine(2);
    const byCashgate = await transfer(hot, a, 2n * USDT);
    await client.broadcast(byCashgate);
    fake.mine();
    const to = await source.head();
    const found = await source.transfers({ from, to }, [a, b]);
    assert.deepEqual(
      found.map((t) => [t.txHash, t.from, t.to, t.units, t.logIndex]),
      [
        [first, payer, a, 5n * USDT, 0],
        [third, payer, b, 9n * USDT, 0],
        [byCashgate.txID, hot.address, a, 2n * USDT, 0],
      ],
    );
    for (const t of found)
      assert.equal(t.blockHash, (await source.block(t.blockNumber))?.hash, 'the blockID of its block');
    assert.deepEqual(await source.transfers({ from, to }, []), []);
    assert.deepEqual(await source.transfers({ from, to }, [wallet().address]), []);
  });

  it('loses a deposit to a reorganisation: the block ids change and the transfer is gone', async () => {
    const source = tronDepositSource(client, fake.contract);
    const payer = wallet().address;
    const watched = wallet().address;
    fake.mint(payer, 10n * USDT);
    fake.deposit(payer, watched, 3n * USDT);
    const [block] = fake.mine();
    assert.ok(block !== undefined, 'a block');
    const range = { from: block.number, to: block.number };
    assert.equal((await source.transfers(range, [watched])).length, 1);
    fake.reorg(1, { drop: true });
    assert.notEqual((await source.block(block.number))?.hash, block.id, 'another block at that height');
    assert.deepEqual(await source.transfers(range, [watched]), []);
    assert.equal(await client.tokenBalance(fake.contract, watched), 0n);

    // Put back in the pool instead, it is mined again at another height.
    const again = fake.deposit(payer, watched, 4n * USDT);
    const [first] = fake.mine();
    fake.reorg(1);
    assert.deepEqual(fake.pool(), [again]);
    const [later] = fake.mine();
    assert.ok(first !== undefined && later !== undefined, 'blocks');
    assert.deepEqual(
      (await source.transfers({ from: first.number, to: later.number }, [watched])).map((t) => [
        t.txHash,
        t.blockNumber,
      ]),
      [[again, later.number]],
    );
  });

  it('follows a lagging node: its head is behind, and a block without its receipts is not taken as empty', async () => {
    const source = tronDepositSource(client, fake.contract);
    const payer = wallet().address;
    const watched = wallet().address;
    fake.mint(payer, 10n * USDT);
    fake.deposit(payer, watched, 1n * USDT);
    const [block] = fake.mine();
    assert.ok(block !== undefined, 'a block');
    fake.lagBlocks(3);
    assert.equal((await client.head()).number, fake.head().number - 3n);
    fake.lagBlocks(1, { receipts: true });
    await assert.rejects(source.transfers({ from: block.number, to: block.number }, [watched]), /receipts of block/);
    fake.lagBlocks(0);
    assert.equal((await source.transfers({ from: block.number, to: block.number }, [watched])).length, 1);
  });

  it('sorts failures: 5xx and 429 unknown, a dropped answer unknown (yet acted on), a refused connection not-sent', async () => {
    fake.failNext('wallet/getnowblock', { status: 503 });
    await failsWith(client.head(), 'unknown');
    fake.failNext('/wallet/getnowblock', { status: 429 });
    await failsWith(client.head(), 'unknown');
    assert.equal((await client.head()).number, fake.head().number, 'the next call goes through');

    const tx = await transfer(hot, wallet().address, 6n);
    fake.dropNext('wallet/broadcasttransaction');
    await failsWith(client.broadcast(tx), 'unknown');
    assert.deepEqual(fake.pool(), [tx.txID], 'the node took it all the same');
    assert.equal((await client.transaction(tx.txID))?.txID, tx.txID);
    await failsWith(client.broadcast(tx), 'rejected', 'DUP_TRANSACTION_ERROR');
    fake.mine();

    const hasty = new TronApiClient({ url: fake.url, apiKey: API_KEY, timeoutMs: 200 });
    fake.delayNext('wallet/getnowblock', 600);
    await failsWith(hasty.head(), 'unknown');
    await hasty.close();

    const nowhere = new TronApiClient({ url: `http://127.0.0.1:${await freePort()}`, timeoutMs: 1_000 });
    await failsWith(nowhere.head(), 'not-sent');
    await nowhere.close();
  });

  it('is refused without the API key', async () => {
    const anonymous = new TronApiClient({ url: fake.url, timeoutMs: 1_000 });
    await failsWith(anonymous.head(), 'rejected', 'HTTP_401');
    await anonymous.close();
    const wrong = new TronApiClient({ url: fake.url, apiKey: 'not-the-key', timeoutMs: 1_000 });
    await failsWith(wrong.balance(hot.address), 'rejected', 'HTTP_401');
    await wrong.close();
  });

  it('serves TronGrid’s TRC-20 history of an account', async () => {
    const payer = wallet().address;
    const watched = wallet().address;
    fake.mint(payer, 10n * USDT);
    const first = fake.deposit(payer, watched, 1n * USDT);
    fake.mine();
    const second = fake.deposit(payer, watched, 2n * USDT);
    fake.mine();
    const get = async (query: string) => {
      const response = await fetch(`${fake.url}/v1/accounts/${watched}/transactions/trc20?${query}`, {
        headers: { 'TRON-PRO-API-KEY': API_KEY },
      });
      assert.equal(response.status, 200);
      return (await response.json()) as any;
    };
    const page = await get(`only_to=true&contract_address=${fake.contract}&limit=1`);
    assert.equal(page.success, true);
    assert.deepEqual(page.data, [
      {
        transaction_id: second,
        token_info: { symbol: 'USDT', address: fake.contract, decimals: 6, name: 'Tether USD' },
        block_timestamp: fake.head().timestamp,
        from: payer,
        to: watched,
        type: 'Transfer',
        value: '2000000',
      },
    ]);
    assert.equal(page.meta.page_size, 1);
    const next = await get(`only_to=true&limit=1&fingerprint=${page.meta.fingerprint}`);
    assert.deepEqual(
      next.data.map((row: any) => row.transaction_id),
      [first],
    );
    assert.deepEqual((await get('only_from=true')).data, []);
    assert.equal((await get('only_confirmed=true')).data.length, 0, 'not solidified yet');
  });

  it('counts calls by path and outcome', async () => {
    const text = await registry.metrics();
    assert.match(
      text,
      /cashgate_chain_rpc_requests_total\{chain="TRON",method="wallet\/broadcasttransaction",outcome="ok"\} \d+/,
    );
    assert.match(
      text,
      /cashgate_chain_rpc_requests_total\{chain="TRON",method="wallet\/broadcasttransaction",outcome="rejected-SIGERROR"\} 1/,
    );
    assert.match(
      text,
      /cashgate_chain_rpc_requests_total\{chain="TRON",method="wallet\/getnowblock",outcome="unknown"\} \d+/,
    );
  });
});
