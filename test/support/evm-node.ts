/**
 * A real local EVM node for tests, run in-process with `ganache` (npm), with a 6-decimal test "USDT" ERC-20
 * (test/support/contracts/TestUSDT.sol) compiled by `solc` (npm, solc-js) at start-up and deployed by the first
 * funded account.
 *
 * The node listens on 127.0.0.1 on a free port and speaks plain HTTP JSON-RPC at `url`, so code under test talks to
 * it exactly as it would to any other node. The helpers here use the same URL. Transactions made by the helpers are
 * sent with `eth_sendTransaction` from accounts the node holds unlocked; a test that wants a transaction signed
 * outside the node builds it itself and broadcasts it with `eth_sendRawTransaction` through `rpc()`.
 *
 * Only node built-ins, `ganache` and `solc` are used.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ganache from 'ganache';

/**
 * Gas given to every token call the helpers send. It is set explicitly so that gas use never depends on the node's
 * defaults or on estimation, and a call that will revert (a blocked sender, say) is always mined with a failed
 * receipt (status 0x0) rather than refused before it is sent. A transfer to a new holder uses about 54,000.
 */
const TOKEN_CALL_GAS = 200_000n;

const SOURCE_PATH = fileURLToPath(new URL('./contracts/TestUSDT.sol', import.meta.url));

export interface EvmAccount {
  /** 0x-prefixed lower-case address */
  address: string;
  /** 0x-prefixed 32-byte private key */
  privateKey: string;
}

export interface EvmNodeOptions {
  /** Chain id reported by eth_chainId and used for transaction signatures (default 1337). */
  chainId?: number;
  /**
   * 0 (default) mines a block as soon as a transaction arrives, before eth_sendTransaction answers.
   * A positive value mines a block every `blockTimeMs` milliseconds instead, empty or not.
   */
  blockTimeMs?: number;
  /** Number of funded accounts (default 10), each with `accountBalanceEth` ether (default 1000). */
  accountCount?: number;
  accountBalanceEth?: number;
}

/** A transaction receipt as the node returns it (hex quantities), with the fields tests usually read. */
export interface EvmReceipt {
  transactionHash: string;
  blockHash: string;
  blockNumber: string;
  status: string;
  from: string;
  to: string | null;
  contractAddress: string | null;
  gasUsed: string;
  effectiveGasPrice: string;
  logs: EvmLog[];
}

export interface EvmLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
}

export interface EvmNode {
  /** HTTP JSON-RPC endpoint, e.g. http://127.0.0.1:41234 */
  url: string;
  chainId: number;
  /** Funded accounts the node holds unlocked; `accounts[0]` deployed the token and is its owner. */
  accounts: EvmAccount[];
  /** The TestUSDT contract address. */
  usdt: string;
  /** Any JSON-RPC call; throws NodeRpcError on a JSON-RPC error. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Mines `blocks` blocks (default 1), including whatever is pending, even while automine is off. */
  mine(blocks?: number): Promise<void>;
  /** Takes a snapshot of the whole chain state. An id can be reverted to once only. */
  snapshot(): Promise<string>;
  /** Goes back to a snapshot; this also drops every snapshot taken after it. Throws if the id is unknown or used. */
  revert(id: string): Promise<void>;
  blockNumber(): Promise<number>;
  /** Mints `amount` base units to `to` (owner call). Resolves to the transaction hash. */
  mint(to: string, amount: bigint): Promise<string>;
  /**
   * Sends `amount` base units from the account of `fromPrivateKey` to `to` (a payer's deposit). A key the node does
   * not hold yet is imported and unlocked first; that account needs ether for gas (see `setEthBalance`). Resolves to
   * the transaction hash as soon as the node accepts it: with automine on it is already mined, with it off it is
   * pending. A transfer from a blocked sender is mined with status 0x0.
   */
  transferUsdt(fromPrivateKey: string, to: string, amount: bigint): Promise<string>;
  /** Blocks or unblocks `address` as a sender (owner call). Resolves to the transaction hash. */
  setBlocked(address: string, blocked: boolean): Promise<string>;
  balanceOf(address: string): Promise<bigint>;
  /** Sets an account's ether balance directly, in wei. */
  setEthBalance(address: string, wei: bigint): Promise<void>;
  /**
   * Sets an account's next nonce directly. Useful before raw-transaction tests: the node treats a raw transaction
   * signed with nonce 0 as if it had no nonce and gives it the account's next free one, so a fresh key should be
   * moved to nonce 1 or more before testing same-nonce replacement or nonce errors.
   */
  setNonce(address: string, nonce: number): Promise<void>;
  /** The receipt of a transaction, or null while it is pending or unknown. */
  receipt(txHash: string): Promise<EvmReceipt | null>;
  /**
   * Turns mining on transaction arrival (or on the block timer) on or off. While off, sent transactions wait in the
   * mempool until `mine()` is called or automine is turned back on.
   */
  setAutomine(on: boolean): Promise<void>;
  /** Stops the node and frees the port. */
  close(): Promise<void>;
}

/** A JSON-RPC error the node answered to one of the helpers' calls. */
class NodeRpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message} (code ${code})`);
    this.name = 'NodeRpcError';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Compiling the contract
// ---------------------------------------------------------------------------------------------------------------

interface CompiledContract {
  abi: unknown[];
  /** 0x-prefixed creation bytecode */
  bytecode: string;
  /** function signature (e.g. "transfer(address,uint256)") to 4-byte selector hex without 0x */
  methodIdentifiers: Record<string, string>;
  /** sha256 of the Solidity source that was compiled */
  sourceSha256: string;
  solcVersion: string;
}

let compiled: Promise<CompiledContract> | undefined;

/**
 * Compiles TestUSDT.sol with solc-js (standard JSON input), once per process. The EVM version is pinned to london
 * because the node runs london rules: solc's default target is much newer, and its code uses opcodes (PUSH0) that
 * london lacks, so the deployment would be mined with status 0x0.
 */
function compileTestUsdt(): Promise<CompiledContract> {
  compiled ??= (async () => {
    // Loaded lazily: solc-js is a ~9 MB compiler build that takes a moment to load.
    const { default: solc } = await import('solc');
    const source = readFileSync(SOURCE_PATH, 'utf8');
    const input = {
      language: 'Solidity',
      sources: { 'TestUSDT.sol': { content: source } },
      settings: {
        evmVersion: 'london',
        optimizer: { enabled: true, runs: 200 },
        outputSelection: { '*': { TestUSDT: ['abi', 'evm.bytecode.object', 'evm.methodIdentifiers'] } },
      },
    };
    const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
      errors?: { severity: string; formattedMessage: string }[];
      contracts?: Record<
        string,
        Record<
          string,
          { abi: unknown[]; evm: { bytecode: { object: string }; methodIdentifiers: Record<string, string> } }
        >
      >;
    };
    const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
    if (errors.length > 0)
      throw new Error(`TestUSDT.sol did not compile:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
    const contract = output.contracts?.['TestUSDT.sol']?.['TestUSDT'];
    if (!contract) throw new Error('solc produced no TestUSDT contract');
    return {
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      methodIdentifiers: contract.evm.methodIdentifiers,
      sourceSha256: createHash('sha256').update(source).digest('hex'),
      solcVersion: solc.version(),
    };
  })();
  return compiled;
}

// ---------------------------------------------------------------------------------------------------------------
// Small ABI helpers (only address, uint256 and bool arguments are needed here)
// ---------------------------------------------------------------------------------------------------------------

const word = (hexNo0x: string) => hexNo0x.padStart(64, '0');
const encodeAddress = (address: string) => word(address.toLowerCase().replace(/^0x/, ''));
const encodeUint = (value: bigint) => {
  if (value < 0n) throw new RangeError('uint256 cannot be negative');
  return word(value.toString(16));
};
const toQuantity = (value: bigint | number) => `0x${value.toString(16)}`;

// ---------------------------------------------------------------------------------------------------------------
// The node
// ---------------------------------------------------------------------------------------------------------------

export async function startEvmNode(options: EvmNodeOptions = {}): Promise<EvmNode> {
  const chainId = options.chainId ?? 1337;
  const blockTimeMs = options.blockTimeMs ?? 0;
  const contract = await compileTestUsdt();

  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId, hardfork: 'london' },
    // blockTime is in seconds (fractions allowed); 0 means mine on each transaction.
    // "eager" instamine mines the block before eth_sendTransaction answers, so receipts are there at once.
    miner: { blockTime: blockTimeMs / 1000, instamine: 'eager' },
    wallet: {
      deterministic: true,
      totalAccounts: options.accountCount ?? 10,
      defaultBalance: options.accountBalanceEth ?? 1000,
    },
  });
  await server.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${server.address().port}`;

  const accounts: EvmAccount[] = Object.entries(server.provider.getInitialAccounts()).map(([address, a]) => ({
    address: address.toLowerCase(),
    privateKey: a.secretKey,
  }));
  const owner = accounts[0];
  if (!owner) throw new Error('the node has no accounts');

  let nextId = 1;
  async function rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    const body = (await response.json()) as { result?: T; error?: { code: number; message: string; data?: unknown } };
    if (body.error) throw new NodeRpcError(method, body.error.code, body.error.message, body.error.data);
    return body.result as T;
  }

  const selector = (signature: string) => {
    const id = contract.methodIdentifiers[signature];
    if (!id) throw new Error(`TestUSDT has no function ${signature}`);
    return `0x${id}`;
  };

  /** Addresses (by private key) already known to the node as unlocked accounts. */
  const unlocked = new Map<string, string>(accounts.map((a) => [a.privateKey.toLowerCase(), a.address]));
  async function addressOfKey(privateKey: string): Promise<string> {
    const key = privateKey.toLowerCase().startsWith('0x') ? privateKey.toLowerCase() : `0x${privateKey.toLowerCase()}`;
    const known = unlocked.get(key);
    if (known) return known;
    // The node derives the address itself; the empty passphrase and duration 0 keep the account unlocked for good.
    const address = (await rpc<string>('personal_importRawKey', [key, ''])).toLowerCase();
    await rpc('personal_unlockAccount', [address, '', 0]);
    unlocked.set(key, address);
    return address;
  }

  const sendFrom = (from: string, fields: Record<string, string>) =>
    rpc<string>('eth_sendTransaction', [{ from, ...fields }]);

  // Deploy the token from the owner account.
  const deployHash = await sendFrom(owner.address, { data: contract.bytecode, gas: toQuantity(3_000_000) });
  if (blockTimeMs > 0) await rpc('evm_mine', []);
  const deployReceipt = await rpc<EvmReceipt | null>('eth_getTransactionReceipt', [deployHash]);
  if (deployReceipt?.status !== '0x1' || !deployReceipt.contractAddress) {
    await server.close();
    throw new Error(`TestUSDT deployment failed: ${JSON.stringify(deployReceipt)}`);
  }
  const usdt = deployReceipt.contractAddress.toLowerCase();

  const callToken = (from: string, data: string) => sendFrom(from, { to: usdt, data, gas: toQuantity(TOKEN_CALL_GAS) });

  let closed = false;
  return {
    url,
    chainId,
    accounts,
    usdt,
    rpc,
    async mine(blocks = 1) {
      for (let i = 0; i < blocks; i++) await rpc('evm_mine', []);
    },
    snapshot: () => rpc<string>('evm_snapshot', []),
    async revert(id) {
      const ok = await rpc<boolean>('evm_revert', [id]);
      if (!ok) throw new Error(`evm_revert(${id}) failed: unknown or already used snapshot id`);
    },
    async blockNumber() {
      return Number(BigInt(await rpc<string>('eth_blockNumber', [])));
    },
    mint: (to, amount) =>
      callToken(owner.address, selector('mint(address,uint256)') + encodeAddress(to) + encodeUint(amount)),
    async transferUsdt(fromPrivateKey, to, amount) {
      const from = await addressOfKey(fromPrivateKey);
      return callToken(from, selector('transfer(address,uint256)') + encodeAddress(to) + encodeUint(amount));
    },
    setBlocked: (address, blocked) =>
      callToken(
        owner.address,
        selector('setBlocked(address,bool)') + encodeAddress(address) + word(blocked ? '1' : '0'),
      ),
    async balanceOf(address) {
      const data = selector('balanceOf(address)') + encodeAddress(address);
      return BigInt(await rpc<string>('eth_call', [{ to: usdt, data }, 'latest']));
    },
    async setEthBalance(address, wei) {
      await rpc('evm_setAccountBalance', [address, toQuantity(wei)]);
    },
    async setNonce(address, nonce) {
      await rpc('evm_setAccountNonce', [address, toQuantity(nonce)]);
    },
    receipt: (txHash) => rpc<EvmReceipt | null>('eth_getTransactionReceipt', [txHash]),
    async setAutomine(on) {
      await rpc(on ? 'miner_start' : 'miner_stop', []);
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
}
