/**
 * Deposits detected per second by the EVM deposit watcher, on the local EVM node of the tests and
 * the embedded SQLite store: deposits to many watched addresses spread over blocks, then the
 * watcher catching up from before the first of them until every one is reported final. The floor,
 * measured in the same run, is the node answering the same reads bare: one `eth_getLogs` per 100
 * addresses over the whole range, no store, no checks.
 *
 * npm run bench:chain [-- deposits]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { systemClock } from '../src/clock.js';
import { evmChecksumAddress } from '../src/rails/chain/addresses.js';
import { DepositWatcher } from '../src/rails/chain/deposit-watcher.js';
import { evmDepositSource } from '../src/rails/chain/evm-deposits.js';
import { EvmRpcClient } from '../src/rails/chain/evm-rpc.js';
import { Store } from '../src/store/store.js';
import { startEvmNode } from '../test/support/evm-node.js';

const DEPOSITS = Number(process.argv[2] ?? 600);
const PER_BLOCK = 20;
const CONFIRMATIONS = 12;

const node = await startEvmNode({ chainId: 31337 });
const client = new EvmRpcClient({ chain: 'ETH', url: node.url, timeoutMs: 30_000 });
const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-bench-watch-'));
const store = Store.open({ databaseUrl: undefined, dataDir });
try {
  await store.migrate();
  const payer = node.accounts[1];
  if (payer === undefined) throw new Error('no funded account');
  await node.mint(payer.address, BigInt(DEPOSITS) * 2_000_000n);
  const addresses = Array.from({ length: DEPOSITS }, (_, i) =>
    evmChecksumAddress(Uint8Array.from({ length: 20 }, (_, b) => (b < 16 ? 0xd0 : (i >> ((19 - b) * 8)) & 0xff))),
  );
  const first = BigInt(await node.blockNumber()) + 1n;
  await node.setAutomine(false);
  for (let i = 0; i < DEPOSITS; i += 1) {
    await node.transferUsdt(payer.privateKey, addresses[i] ?? '', 1_000_000n + BigInt(i));
    if ((i + 1) % PER_BLOCK === 0) await node.mine();
  }
  await node.mine(CONFIRMATIONS + 1);
  await node.setAutomine(true);
  const head = BigInt(await node.blockNumber());

  // Floor: the same logs, read bare.
  const source = evmDepositSource(client, node.usdt);
  let floorFound = 0;
  const floorStarted = performance.now();
  for (let i = 0; i < addresses.length; i += 100)
    floorFound += (await source.transfers({ from: first, to: head }, addresses.slice(i, i + 100))).length;
  const floorMs = performance.now() - floorStarted;

  let reported = 0;
  const watcher = new DepositWatcher(
    {
      store,
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      source,
      addresses: () => Promise.resolve(addresses),
      report: () => {
        reported += 1;
        return Promise.resolve();
      },
    },
    {
      chain: 'ETH',
      confirmations: CONFIRMATIONS,
      batchBlocks: 100,
      leaseMs: 60_000,
      node: { id: 'bench' },
      startBelowHead: Number(head - first + 1n),
    },
  );
  const started = performance.now();
  while ((await watcher.run()) > 0);
  const watchMs = performance.now() - started;
  if (reported !== DEPOSITS || floorFound !== DEPOSITS)
    throw new Error(`expected ${DEPOSITS} deposits: the watcher reported ${reported}, the floor found ${floorFound}`);

  const rate = (ms: number) => (DEPOSITS / ms) * 1000;
  const blocks = Number(head - first + 1n);
  console.log(
    `\nEVM deposit watcher, local node, SQLite: ${DEPOSITS} deposits to ${DEPOSITS} watched addresses over ${blocks} blocks, ${CONFIRMATIONS} confirmations`,
  );
  console.log('case                                              deposits/s   ms total   ÷ floor');
  console.log(
    `floor: eth_getLogs of the range, bare               ${rate(floorMs).toFixed(0).padStart(8)} ${floorMs.toFixed(0).padStart(10)}     1.000`,
  );
  console.log(
    `watcher: read, check, record, report final          ${rate(watchMs).toFixed(0).padStart(8)} ${watchMs.toFixed(0).padStart(10)}     ${(floorMs / watchMs).toFixed(3)}`,
  );
} finally {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
  await client.close();
  await node.close();
}
