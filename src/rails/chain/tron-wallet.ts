/**
 * The TRON hot wallet as the token sender uses it: TRC-20 `transfer` calls built and signed here
 * (never by the API), with a fee limit and a recent reference block (TaPoS), broadcast through a
 * TronGrid-compatible API.
 *
 * TRON has no nonce: a transaction is unique by its id and dies at its expiration. A send whose
 * transaction the node does not know once that transaction expired can never be mined, so it is
 * safe to build a new one then (and only then): that is TRON's "replacement".
 *
 * Fees: a transfer burns energy (paid from staked energy, else TRX up to `fee_limit`) and
 * bandwidth. A wallet short of both fails its send on chain with OUT_OF_ENERGY, so the sender
 * refuses a send early unless the wallet holds the fee limit in TRX or the energy a transfer to a
 * new holder takes.
 */
import { decodeTrc20Transfer, buildTrc20Transfer, signTronTransaction, tronAddressOfKey } from './tron-tx.js';
import { TronApiError, type TronApiClient, type TronSignedTransaction } from './tron-api.js';
import { BroadcastRejected, type HotWallet, type SendFate, type SignedSend } from './token-sender.js';

export interface TronWalletOptions {
  client: TronApiClient;
  privateKey: Uint8Array;
  /** The USDT contract (Base58). */
  token: string;
  confirmations: number;
  feeLimitSun: bigint;
}

/** TRON makes a block every 3 s. */
const TRON_BLOCK_MS = 3_000;
/** How long a transaction may wait to be mined, from its reference block's time. */
export const TRON_EXPIRATION_MS = 120_000;
/** Energy of a USDT transfer to an address that never held it (the costlier case; published mainnet figure). */
const TRANSFER_ENERGY = 130_285n;
/** Bandwidth a TRC-20 transfer takes (its bytes, signature included) at 1,000 sun a byte, rounded up. */
const BANDWIDTH_SUN = 400_000n;

/** java-tron's answers to a broadcast it would not take. */
const KNOWN_CODES = new Set(['DUP_TRANSACTION_ERROR']);

export function tronHotWallet(options: TronWalletOptions): HotWallet {
  const { client, privateKey, token, feeLimitSun } = options;
  const address = tronAddressOfKey(privateKey);

  return {
    chain: 'TRON',
    address,
    confirmations: options.confirmations,
    coin: { symbol: 'TRX', decimals: 6 },
    tokenDecimals: 6,
    usesNonces: false,
    // A lookup may come from a node a few blocks behind: absence is sure once `confirmations` more blocks passed.
    settleMs: options.confirmations * TRON_BLOCK_MS,

    async balances() {
      const [tokens, coin] = await Promise.all([client.tokenBalance(token, address), client.balance(address)]);
      return { token: tokens, coin };
    },

    chainNonces: () => Promise.resolve({ mined: 0n, pending: 0n }),

    async prepare({ to, units }) {
      // A new transaction refers to the head block; a replacement is simply a new transaction.
      const [head, resources] = await Promise.all([client.head(), client.resources(address)]);
      // Staked energy enough for a transfer to a new holder: only bandwidth is paid; else up to the fee limit.
      const maxCost = resources.energyLimit - resources.energyUsed >= TRANSFER_ENERGY ? BANDWIDTH_SUN : feeLimitSun;
      const sign = (): SignedSend => {
        const now = Date.now();
        const unsigned = buildTrc20Transfer({
          owner: address,
          contract: token,
          to,
          units,
          refBlock: head,
          expirationMs: TRON_EXPIRATION_MS,
          timestamp: now,
          feeLimitSun,
        });
        // What is signed is read back: exactly this transfer, from this wallet, of this token.
        const check = decodeTrc20Transfer(unsigned.rawDataHex);
        if (check.owner !== address || check.contract !== token || check.to !== to || check.units !== units)
          throw new Error('the transaction built does not read back as the send it was built for');
        const signed: TronSignedTransaction = {
          txID: unsigned.txID,
          raw_data: unsigned.rawData,
          raw_data_hex: unsigned.rawDataHex,
          signature: [signTronTransaction(unsigned.txID, privateKey)],
        };
        return {
          hash: unsigned.txID,
          raw: JSON.stringify(signed),
          nonce: null,
          maxFee: null,
          priorityFee: null,
          expiresAt: unsigned.rawData.expiration,
        };
      };
      return { sign, maxCost };
    },

    async broadcast(signed) {
      try {
        await client.broadcast(JSON.parse(signed.raw) as TronSignedTransaction);
      } catch (error) {
        if (error instanceof TronApiError && error.kind === 'rejected') {
          const code = error.code ?? '';
          const reason = KNOWN_CODES.has(code) ? 'known' : 'other';
          const message =
            code === 'BANDWITH_ERROR'
              ? `the hot wallet has neither free bandwidth nor TRX to pay for it (${error.message})`
              : error.message;
          throw new BroadcastRejected(message, reason);
        }
        throw error;
      }
    },

    async fate(hash): Promise<SendFate> {
      const info = await client.transactionInfo(hash);
      if (info !== undefined) {
        const block = await client.block(info.blockNumber);
        const success = info.result === 'SUCCESS' && info.receiptResult === 'SUCCESS';
        const failure =
          info.receiptResult === 'OUT_OF_ENERGY'
            ? `OUT_OF_ENERGY: the hot wallet lacked the energy or the TRX (fee limit ${feeLimitSun} sun) the transfer needed`
            : `${info.receiptResult}${info.resMessage === undefined ? '' : `: ${info.resMessage}`}`;
        return {
          state: 'mined',
          block: info.blockNumber,
          // A block the node cannot show yet: not final, looked at again next run.
          blockHash: block?.id ?? '',
          success,
          ...(!success && { failure }),
        };
      }
      return (await client.transaction(hash)) === undefined ? { state: 'unknown' } : { state: 'pending' };
    },

    head: () => client.head(),

    async blockHash(number) {
      return (await client.block(number))?.id;
    },
  };
}
