/**
 * The USDT chains under CHAIN_RAIL=live: a node client, a deposit watcher and a token sender per
 * chain with an endpoint, and the chain rails the exchange and the cashier hand orders to. In the
 * sandbox (the default) every chain is the simulator and nothing here runs.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { CheckoutService } from './cashier/checkout.js';
import type { Clock } from './clock.js';
import type { ChainRailConfig, EvmChainConfig } from './config.js';
import { recentDepositAddresses } from './exchange/deposit-addresses.js';
import { TOKEN_DECIMALS } from './exchange/amounts.js';
import { CHAIN_SOURCE, type ExchangeService } from './exchange/service.js';
import { EventNotAllowedError, type OrderService } from './orders/service.js';
import { CHAINS, type Chain } from './rails/chain/addresses.js';
import type { AddressFamily } from './rails/chain/derivation.js';
import { DepositWatcher, type DepositSource } from './rails/chain/deposit-watcher.js';
import { evmDepositSource } from './rails/chain/evm-deposits.js';
import { EvmRpcClient } from './rails/chain/evm-rpc.js';
import { evmHotWallet } from './rails/chain/evm-wallet.js';
import { liveChainRail } from './rails/chain/live-rail.js';
import { TronApiClient, tronDepositSource } from './rails/chain/tron-api.js';
import { tronHotWallet } from './rails/chain/tron-wallet.js';
import { sandboxChainRail, type ChainRail } from './rails/chain/rail.js';
import { TokenSender, type HotWallet } from './rails/chain/token-sender.js';
import { chainWorkLeases, freeChainWork, type ChainTransferRow } from './rails/queries.js';
import type { LeaseKind } from './nodes/leases.js';
import type { Store } from './store/store.js';
import type { Worker } from './workers/worker.js';

/** Deposits are watched at addresses handed out this recently (late deposits are still seen and reported). */
const WATCH_WINDOW_MS = 7 * 86_400_000;
/** Blocks a watcher reads per batch, and batches per run while it catches up. */
const BATCH_BLOCKS = 100;
const RUNS_PER_POLL = 20;

/** Micro-USDT (the ceilings' unit) in a chain token's base units. */
const baseUnits = (micro: bigint, decimals: number): bigint =>
  decimals >= 6 ? micro * 10n ** BigInt(decimals - 6) : micro / 10n ** BigInt(6 - decimals);

/** One chain's live parts: what it reads deposits through and, with a key, its hot wallet. */
interface ChainParts {
  chain: Chain;
  family: AddressFamily;
  confirmations: number;
  token: string;
  source: DepositSource;
  decimals: () => Promise<number>;
  /** The chain id the node serves, where sends are signed for one (EVM). */
  chainId?: { expected: bigint; read: () => Promise<bigint> };
  wallet: HotWallet | undefined;
  /** The variable whose absence stops sends on this chain. */
  sendUnavailable: string | undefined;
  close: () => Promise<void>;
}

export interface LiveChainsDeps {
  config: Extract<ChainRailConfig, { rail: 'live' }>;
  store: Store;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  railLeaseMs: number;
  /** This node: the chains' watches and sendings are leased in its current id. */
  node: { readonly id: string };
}

export class LiveChains {
  readonly rails: Readonly<Record<Chain, ChainRail>>;
  readonly #parts: ChainParts[];
  /** Chains whose token decimals were read from the contract and matched. */
  readonly #verified = new Set<Chain>();

  constructor(private readonly deps: LiveChainsDeps) {
    const { config } = deps;
    this.#parts = [
      this.#tron(),
      config.eth === undefined ? undefined : this.#evm('ETH', config.eth),
      config.bsc === undefined ? undefined : this.#evm('BSC', config.bsc),
    ].filter((p): p is ChainParts => p !== undefined);
    this.rails = Object.fromEntries(
      CHAINS.map((chain) => {
        const parts = this.#parts.find((p) => p.chain === chain);
        const endpoint = chain === 'TRON' ? 'TRON_API_URL' : `${chain}_RPC_URL`;
        return [
          chain,
          liveChainRail({
            chain,
            confirmations: parts?.confirmations ?? sandboxChainRail(chain).confirmations,
            clock: deps.clock,
            sendUnavailable: parts === undefined ? endpoint : parts.sendUnavailable,
            maxPerOrder: baseUnits(config.maxPerOrder, TOKEN_DECIMALS[chain]),
          }),
        ];
      }),
    ) as Record<Chain, ChainRail>;
  }

  #tron(): ChainParts {
    const { deps } = this;
    const config = deps.config.tron;
    const client = new TronApiClient(
      {
        url: config.apiUrl,
        timeoutMs: deps.config.timeoutMs,
        ...(config.apiKey !== undefined && { apiKey: config.apiKey }),
      },
      deps.registry,
    );
    const key = deps.config.hotWallets.tron;
    return {
      chain: 'TRON',
      family: 'tron',
      confirmations: config.confirmations,
      token: config.usdtContract,
      source: tronDepositSource(client, config.usdtContract),
      decimals: () => client.tokenDecimals(config.usdtContract),
      wallet:
        key === undefined
          ? undefined
          : tronHotWallet({
              client,
              privateKey: key.reveal(),
              token: config.usdtContract,
              confirmations: config.confirmations,
              feeLimitSun: config.feeLimitSun,
            }),
      sendUnavailable: key === undefined ? 'TRON_HOT_WALLET_KEY' : undefined,
      close: () => client.close(),
    };
  }

  #evm(chain: 'ETH' | 'BSC', config: EvmChainConfig): ChainParts {
    const { deps } = this;
    const client = new EvmRpcClient({ chain, url: config.rpcUrl, timeoutMs: deps.config.timeoutMs }, deps.registry);
    const key = deps.config.hotWallets.evm;
    return {
      chain,
      family: 'evm',
      confirmations: config.confirmations,
      token: config.usdtContract,
      source: evmDepositSource(client, config.usdtContract),
      decimals: () => client.tokenDecimals(config.usdtContract),
      chainId: { expected: config.chainId, read: () => client.chainId() },
      wallet:
        key === undefined
          ? undefined
          : evmHotWallet({
              client,
              privateKey: key.reveal(),
              token: config.usdtContract,
              tokenDecimals: TOKEN_DECIMALS[chain],
              confirmations: config.confirmations,
              chainId: config.chainId,
              maxFeePerGas: config.maxFeePerGas,
            }),
      sendUnavailable: key === undefined ? 'EVM_HOT_WALLET_KEY' : undefined,
      close: () => client.close(),
    };
  }

  /**
   * Reads each chain's token decimals from its contract and checks them against what Cashgate
   * expects (amounts would be off by powers of ten otherwise), and each EVM node's chain id against
   * the one sends are signed for: a mismatch stops the start-up; a node that does not answer is
   * logged, and that chain's workers check again before they act.
   */
  async verify(): Promise<void> {
    const problems: string[] = [];
    for (const parts of this.#parts) {
      try {
        await this.#verify(parts);
      } catch (error) {
        if (error instanceof ChainMismatch) problems.push(error.message);
        else
          this.deps.logger.error(
            { err: error, chain: parts.chain },
            'the chain’s node did not answer at start-up; its watcher and sender wait until it does',
          );
      }
    }
    if (problems.length > 0)
      throw new Error(`the chains do not match what Cashgate expects:\n  - ${problems.join('\n  - ')}`);
  }

  async #verify(parts: ChainParts): Promise<void> {
    if (this.#verified.has(parts.chain)) return;
    const decimals = await parts.decimals();
    const expected = TOKEN_DECIMALS[parts.chain];
    if (decimals !== expected)
      throw new ChainMismatch(
        `${parts.chain}_USDT_CONTRACT ${parts.token} has ${decimals} decimals; USDT on ${parts.chain} has ${expected}`,
      );
    if (parts.chainId !== undefined) {
      const served = await parts.chainId.read();
      if (served !== parts.chainId.expected)
        throw new ChainMismatch(
          `${parts.chain}_CHAIN_ID is ${parts.chainId.expected}, but ${parts.chain}_RPC_URL serves chain ${served}: sends would be signed for another chain`,
        );
    }
    this.#verified.add(parts.chain);
  }

  /** The chains' watches and sendings, each a lease: freed when the node holding it dies or stops. */
  readonly leases: readonly LeaseKind[] = [
    {
      kind: 'chain_watch',
      free: (tx, owners) => freeChainWork(tx, 'chain_watches', owners),
      held: (db, now) => chainWorkLeases(db, 'chain_watches', now),
    },
    {
      kind: 'chain_send',
      free: (tx, owners) => freeChainWork(tx, 'chain_hot_wallets', owners),
      held: (db, now) => chainWorkLeases(db, 'chain_hot_wallets', now),
    },
  ];

  /** The watchers and senders of every chain, as periodic workers; deposits go to the exchange or the cashier. */
  workers(deps: { orders: OrderService; exchange: ExchangeService; checkouts: CheckoutService }): Worker[] {
    const { store, clock, logger, registry, config } = this.deps;
    const workers: Worker[] = [];
    for (const parts of this.#parts) {
      const chainLogger = logger.child({ component: 'chain', chain: parts.chain });
      const watcher = new DepositWatcher(
        {
          store,
          clock,
          logger: chainLogger,
          source: parts.source,
          registry,
          addresses: () => recentDepositAddresses(store.read, parts.family, clock.now() - WATCH_WINDOW_MS),
          report: (transfer) => this.#report(transfer, deps, chainLogger),
        },
        {
          chain: parts.chain,
          confirmations: parts.confirmations,
          batchBlocks: BATCH_BLOCKS,
          leaseMs: this.deps.railLeaseMs,
          node: this.deps.node,
        },
      );
      workers.push({
        name: `chain-watch-${parts.chain}`,
        intervalMs: config.pollIntervalMs,
        run: async () => {
          await this.#verify(parts);
          for (let run = 0; run < RUNS_PER_POLL && (await watcher.run()) > 0; run++);
        },
      });
      if (parts.wallet === undefined) continue;
      const sender = new TokenSender(
        { store, clock, logger: chainLogger, wallet: parts.wallet, outcomes: deps.exchange.sendOutcomes, registry },
        {
          node: this.deps.node,
          leaseMs: this.deps.railLeaseMs,
          stuckAfterMs: config.stuckAfterMs,
          maxPerOrder: baseUnits(config.maxPerOrder, parts.wallet.tokenDecimals),
          maxPerDay: baseUnits(config.maxPerDay, parts.wallet.tokenDecimals),
        },
      );
      workers.push({
        name: `chain-send-${parts.chain}`,
        intervalMs: config.pollIntervalMs,
        run: async () => {
          await this.#verify(parts);
          await sender.run();
        },
      });
    }
    return workers;
  }

  /** A final transfer to a deposit address: to its order, as the sandbox's deposits go (idempotent). */
  async #report(
    transfer: ChainTransferRow,
    deps: { orders: OrderService; exchange: ExchangeService; checkouts: CheckoutService },
    logger: Logger,
  ): Promise<void> {
    const order = await deps.orders.findByRailRef(transfer.to_address);
    const about = { txHash: transfer.tx_hash, to: transfer.to_address, units: transfer.units };
    if (order === undefined) {
      logger.warn(about, 'a deposit reached an address no order holds; it is the operator’s to sweep or return');
      return;
    }
    const units = BigInt(transfer.units);
    try {
      if (order.kind === 'token_to_fiat')
        await deps.exchange.reportDeposit(order, {
          units,
          tradeHash: transfer.tx_hash,
          from: transfer.from_address,
          source: CHAIN_SOURCE,
        });
      else await deps.checkouts.reportPayment(order, { units, tradeHash: transfer.tx_hash, source: CHAIN_SOURCE });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      // The order ended: by this very deposit (a report repeated after a crash), or before it came.
      if (order.details.includes(transfer.tx_hash)) return;
      logger.warn(
        { ...about, orderId: order.id, status: order.status },
        'a deposit reached the address of an order that had ended; nothing was credited, it is the operator’s to return',
      );
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#parts.map((p) => p.close()));
  }
}

class ChainMismatch extends Error {}
