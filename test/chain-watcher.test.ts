import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import { systemClock } from '../src/clock.js';
import { DepositWatcher, type DepositSource } from '../src/rails/chain/deposit-watcher.js';
import { evmDepositSource } from '../src/rails/chain/evm-deposits.js';
import { EvmRpcClient } from '../src/rails/chain/evm-rpc.js';
import { evmChecksumAddress } from '../src/rails/chain/addresses.js';
import type { ChainTransferRow } from '../src/rails/queries.js';
import { Store } from '../src/store/store.js';
import { createTestDatabase, databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { startEvmNode, type EvmNode } from './support/evm-node.js';

const CONFIRMATIONS = 3;

/**
 * The deposit watcher on a real local EVM node and the real store: deposits to watched addresses
 * reported once final and once only, across restarts, node failures, a second node and a
 * reorganisation that takes a deposit before it is final.
 */
describe(`Deposit watcher on a local EVM node (${databaseLabel})`, () => {
  let node: EvmNode;
  let client: EvmRpcClient;
  let store: Store;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  const registry = new Registry();
  const reports: ChainTransferRow[] = [];
  const watched: string[] = [];
  let failNext = 0;

  /** The node's source, failing its next `failNext` calls as a node that hiccups would. */
  const source = (): DepositSource => {
    const real = evmDepositSource(client, node.usdt);
    const flaky =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        if (failNext > 0) {
          failNext -= 1;
          throw new Error('the node did not answer');
        }
        return call(...args);
      };
    return {
      head: flaky(() => real.head()),
      block: flaky((number: bigint) => real.block(number)),
      transfers: flaky((range: { from: bigint; to: bigint }, to: readonly string[]) => real.transfers(range, to)),
    };
  };
  const watcher = (owner: string) =>
    new DepositWatcher(
      {
        store,
        clock: systemClock,
        logger: pino({ level: 'silent' }),
        source: source(),
        addresses: () => Promise.resolve(watched),
        report: (transfer) => {
          reports.push(transfer);
          return Promise.resolve();
        },
        registry,
      },
      {
        chain: 'ETH',
        confirmations: CONFIRMATIONS,
        batchBlocks: 4,
        leaseMs: 60_000,
        node: { id: owner },
        startBelowHead: 0,
      },
    );
  /** Runs until a run finds nothing to do. */
  const settle = async (w: DepositWatcher) => {
    for (let i = 0; i < 50; i += 1) if ((await w.run()) === 0) return;
    assert.fail('the watcher kept finding work');
  };
  const reportedHashes = () => reports.map((r) => r.tx_hash);
  const address = (n: number) => evmChecksumAddress(Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? n : 0xd0)));

  before(async () => {
    node = await startEvmNode({ chainId: 31337 });
    client = new EvmRpcClient({ chain: 'ETH', url: node.url, timeoutMs: 5_000 }, registry);
    dataDir = mkdtempSync(join(tmpdir(), 'cashgate-watch-'));
    database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
    store = Store.open({ databaseUrl: database?.url, dataDir });
    await store.migrate();
    const payer = node.accounts[1];
    assert.ok(payer, 'a funded payer');
    await node.mint(payer.address, 1_000_000_000n);
  });
  after(async () => {
    await store.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    await client.close();
    await node.close();
  });

  const deposit = async (to: string, units: bigint) => node.transferUsdt(node.accounts[1]?.privateKey ?? '', to, units);

  it('reports a deposit to a watched address once it is final, with its amount and sender; others never', async () => {
    const w = watcher('node-a');
    await settle(w);
    watched.push(address(1));
    const other = await deposit(address(99), 1n);
    const hash = await deposit(address(1), 2_500_000n);
    await settle(w);
    assert.deepEqual(reportedHashes(), [], 'one confirmation is not final');
    await node.mine(CONFIRMATIONS - 2);
    await settle(w);
    assert.deepEqual(reportedHashes(), [], `${CONFIRMATIONS - 1} confirmations are not final`);
    await node.mine(1);
    await settle(w);
    assert.deepEqual(reportedHashes(), [hash], `final at ${CONFIRMATIONS} confirmations`);
    const [report] = reports;
    assert.ok(report, 'the report');
    assert.equal(report.units, '2500000');
    assert.equal(report.to_address, address(1));
    assert.equal(report.from_address.toLowerCase(), node.accounts[1]?.address.toLowerCase());
    await node.mine(CONFIRMATIONS + 2);
    await settle(w);
    assert.ok(!reportedHashes().includes(other), 'an address nobody watches is never reported');
    assert.equal(reports.length, 1, 'reported once');
  });

  it('survives node failures and restarts without skipping or repeating a block, and one node watches at a time', async () => {
    watched.push(address(2));
    const before = reports.length;
    const hashes: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      hashes.push(await deposit(address(2), BigInt(1000 + i)));
      await node.mine(2);
    }
    // A second node sees the watch held and does nothing.
    assert.equal(await watcher('node-b').run(), 0, 'node-b does not take a held watch');
    // The node fails now and then; each run that fails is simply run again later.
    const restarted = watcher('node-a');
    for (let i = 0; i < 40; i += 1) {
      failNext = i % 3 === 0 ? 1 : 0;
      try {
        await restarted.run();
      } catch {
        // the next run goes on from the cursor
      }
    }
    failNext = 0;
    await node.mine(CONFIRMATIONS);
    await settle(watcher('node-a'));
    assert.deepEqual(reportedHashes().slice(before).sort(), [...hashes].sort(), 'each deposit once, none skipped');
  });

  it('forgets a deposit a reorganisation took before it was final, and reports what the new history holds', async () => {
    watched.push(address(3));
    const w = watcher('node-a');
    await settle(w);
    const snapshot = await node.snapshot();
    const vanished = await deposit(address(3), 7_000_000n);
    await settle(w);
    const seen = await store.read
      .selectFrom('chain_transfers')
      .select('state')
      .where('tx_hash', '=', vanished)
      .execute();
    assert.deepEqual(seen, [{ state: 'seen' }], 'seen, not final');
    await node.revert(snapshot);
    // Another history, longer than the old one: a different deposit, then blocks.
    const kept = await deposit(address(3), 8_000_000n);
    await node.mine(CONFIRMATIONS + 2);
    await settle(w);
    assert.ok(!reportedHashes().includes(vanished), 'the vanished deposit is never reported');
    assert.ok(reportedHashes().includes(kept), 'the new history’s deposit is');
    const gone = await store.read
      .selectFrom('chain_transfers')
      .select('state')
      .where('tx_hash', '=', vanished)
      .execute();
    assert.deepEqual(gone, [], 'forgotten');
    const metrics = await registry.metrics();
    assert.match(metrics, /cashgate_chain_reorgs_total\{chain="ETH",depth="within-finality"\} [1-9]/);
    assert.match(metrics, /cashgate_chain_watch_lag_blocks\{chain="ETH"\} 0/);
    assert.match(metrics, /cashgate_chain_deposits_reported_total\{chain="ETH"\} [1-9]/);
  });
});
