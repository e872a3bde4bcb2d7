/**
 * The EVM hot wallet (Ethereum, BSC) as the token sender uses it: ERC-20 `transfer` calls signed as
 * EIP-1559 transactions with the operator's key, fees read from the node and capped by a ceiling.
 *
 * Fees: `maxPriorityFeePerGas` is the node's suggestion (`eth_maxPriorityFeePerGas`),
 * `maxFeePerGas` twice the latest base fee plus that tip (room for six full blocks of base-fee
 * rises), both capped at the ceiling. A replacement offers at least 12.5 % more of both (nodes
 * want 10 %), or the fees of the moment if higher, still capped: at the ceiling it cannot be
 * replaced and waits. Gas: the node's estimate plus a fifth.
 */
import { EvmRpcError, type EvmRpcClient } from './evm-rpc.js';
import { addressOf, erc20Transfer, signEip1559 } from './evm-tx.js';
import { BroadcastRejected, type HotWallet, type SendFate, type SignedSend } from './token-sender.js';

export interface EvmWalletOptions {
  client: EvmRpcClient;
  privateKey: Uint8Array;
  token: string;
  tokenDecimals: number;
  confirmations: number;
  chainId: bigint;
  maxFeePerGas: bigint;
}

const COINS = { ETH: { symbol: 'ETH', decimals: 18 }, BSC: { symbol: 'BNB', decimals: 18 } } as const;

/** Node messages (geth, Erigon, Nethermind, BSC's geth) that say a broadcast was not taken, sorted by what they mean. */
const KNOWN = /already known|known transaction|already imported|already exists/i;
const NONCE_USED = /nonce too low|nonce has already been used|oldnonce/i;

/** Ganache's words for a nonce below the account's: "account has nonce of: 3 tx has nonce of: 2". */
function nonceBelowAccount(message: string): boolean {
  const match = /account has nonce of: (\d+) tx has nonce of: (\d+)/.exec(message);
  return match !== null && BigInt(match[2] ?? '0') < BigInt(match[1] ?? '0');
}

const bump = (value: bigint): bigint => value + (value + 7n) / 8n;
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

export function evmHotWallet(options: EvmWalletOptions): HotWallet {
  const { client, privateKey, token, maxFeePerGas: ceiling } = options;
  const address = addressOf(privateKey);

  async function gasLimit(to: string, units: bigint): Promise<bigint> {
    const estimate = await client.estimateGas({ from: address, to: token, data: erc20Transfer(to, units) });
    return estimate + estimate / 5n;
  }

  /** The fees a new transaction offers now, capped at the ceiling. */
  async function currentFees(): Promise<{ maxFee: bigint; tip: bigint }> {
    const [latest, suggested] = await Promise.all([client.block('latest'), client.maxPriorityFee()]);
    const base = latest?.baseFeePerGas ?? 0n;
    const maxFee = min(2n * base + suggested, ceiling);
    return { maxFee, tip: min(suggested, maxFee) };
  }

  return {
    chain: client.chain,
    address,
    confirmations: options.confirmations,
    coin: COINS[client.chain],
    tokenDecimals: options.tokenDecimals,
    usesNonces: true,
    // EVM transactions do not expire: a stuck one is replaced with the same nonce instead.
    settleMs: 0,

    async balances() {
      const [tokens, coin] = await Promise.all([client.tokenBalance(token, address), client.balance(address)]);
      return { token: tokens, coin };
    },

    async chainNonces() {
      const [mined, pending] = await Promise.all([client.nonce(address, 'latest'), client.nonce(address, 'pending')]);
      return { mined, pending };
    },

    async prepare({ to, units, replacing }) {
      const [gas, now] = await Promise.all([gasLimit(to, units), currentFees()]);
      let fees = now;
      if (replacing !== undefined) {
        const lastMax = replacing.maxFee ?? 0n;
        const lastTip = replacing.priorityFee ?? 0n;
        const maxFee = min(max(bump(lastMax), now.maxFee), ceiling);
        const tip = min(max(bump(lastTip), now.tip), maxFee);
        // Nodes refuse a replacement that does not raise both by a tenth.
        if (maxFee * 10n < lastMax * 11n || tip * 10n < lastTip * 11n) return undefined;
        fees = { maxFee, tip };
      }
      // What the node makes the wallet hold to take it: all its gas at the most it offers.
      const maxCost = gas * fees.maxFee;
      const sign = (nonce: bigint | null): SignedSend => {
        if (nonce === null) throw new Error('an EVM send needs a nonce');
        const signed = signEip1559(
          {
            chainId: options.chainId,
            nonce,
            maxPriorityFeePerGas: fees.tip,
            maxFeePerGas: fees.maxFee,
            gasLimit: gas,
            to: token,
            value: 0n,
            data: erc20Transfer(to, units),
          },
          privateKey,
        );
        return {
          hash: signed.hash,
          raw: signed.raw,
          nonce,
          maxFee: fees.maxFee,
          priorityFee: fees.tip,
          expiresAt: null,
        };
      };
      return { sign, maxCost };
    },

    async broadcast(signed) {
      try {
        const hash = await client.sendRaw(signed.raw);
        if (hash.toLowerCase() !== signed.hash.toLowerCase())
          throw new Error(`the node named the transaction ${hash}, not ${signed.hash}`);
      } catch (error) {
        if (error instanceof EvmRpcError && error.kind === 'rpc') {
          const reason = KNOWN.test(error.message)
            ? 'known'
            : NONCE_USED.test(error.message) || nonceBelowAccount(error.message)
              ? 'nonce-used'
              : 'other';
          throw new BroadcastRejected(error.message, reason);
        }
        throw error;
      }
    },

    async fate(hash): Promise<SendFate> {
      const receipt = await client.receipt(hash);
      if (receipt !== undefined)
        return {
          state: 'mined',
          block: receipt.blockNumber,
          blockHash: receipt.blockHash,
          success: receipt.status === 1,
          ...(receipt.status !== 1 && { failure: 'the token transfer reverted' }),
        };
      return (await client.knows(hash)) ? { state: 'pending' } : { state: 'unknown' };
    },

    async head() {
      const block = await client.block('latest');
      if (block === undefined) throw new Error('the node has no latest block');
      return { number: block.number, timestamp: Number(block.timestamp) * 1000 };
    },

    async blockHash(number) {
      return (await client.block(number))?.hash;
    },
  };
}
