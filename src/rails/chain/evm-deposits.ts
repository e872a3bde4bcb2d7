import type { ChainTransfer, DepositSource } from './deposit-watcher.js';
import type { EvmRpcClient } from './evm-rpc.js';
import { addressTopic, quantity, topicAddress, TRANSFER_TOPIC } from './evm-tx.js';

/**
 * An EVM chain read for the deposit watcher: the head, blocks by number, and the ERC-20 token's
 * `Transfer` logs whose recipient (topic 2) is one of the watched addresses (`eth_getLogs`).
 * Addresses come back in EIP-55 form.
 */
export function evmDepositSource(client: EvmRpcClient, token: string): DepositSource {
  return {
    head: () => client.blockNumber(),
    block: async (number) => {
      const block = await client.block(number);
      return block === undefined ? undefined : { number: block.number, hash: block.hash };
    },
    transfers: async ({ from, to }, recipients) => {
      if (recipients.length === 0) return [];
      const logs = await client.logs({
        address: token,
        topics: [TRANSFER_TOPIC, null, recipients.map(addressTopic)],
        from,
        to,
      });
      return logs
        .filter((log) => !log.removed && log.topics.length === 3 && log.topics[0] === TRANSFER_TOPIC)
        .map((log): ChainTransfer => ({
          txHash: log.transactionHash,
          logIndex: log.logIndex,
          from: topicAddress(log.topics[1] ?? ''),
          to: topicAddress(log.topics[2] ?? ''),
          units: quantity(log.data),
          blockNumber: log.blockNumber,
          blockHash: log.blockHash,
        }));
    },
  };
}
