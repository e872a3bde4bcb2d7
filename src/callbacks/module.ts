import { leasesFreedCounter } from '../nodes/leases.js';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { MerchantService } from '../merchants/service.js';
import type { Store } from '../store/store.js';
import { CallbackSender } from './delivery.js';
import { CallbackDispatcher } from './dispatcher.js';
import { CallbackMetrics } from './metrics.js';
import { CallbackOutbox } from './service.js';
import { TestCallbacks } from './test-callbacks.js';

/** The callbacks module as the rest of Cashgate sees it. */
export interface Callbacks {
  /** Domain modules enqueue here, inside their own transactions, and register their order sources. */
  outbox: CallbackOutbox;
  dispatcher: CallbackDispatcher;
  tests: TestCallbacks;
  /** Stops the dispatcher loop (if started) and closes outgoing connections. */
  close(): Promise<void>;
}

/** A claimed event stays a worker's for the delivery time limit plus this margin. */
const LEASE_MARGIN_MS = 5_000;

/** The callback settings of the gateway's configuration (CALLBACK_*). */
export interface CallbackSettings {
  callbackTimeoutMs: number;
  callbackAllowPrivateNetworks: boolean;
  callbackRetryIntervalMs: number;
  callbackMaxRetries: number;
  callbackRetryWindowMs: number;
  callbackConcurrency: number;
  callbackConcurrencyPerHost: number;
  callbackPollIntervalMs: number;
}

export function openCallbacks(deps: {
  config: CallbackSettings;
  store: Store;
  clock: Clock;
  logger: Logger;
  merchants: MerchantService;
  registry: Registry;
  /** This node: deliveries are leased in its current id. */
  node: { readonly id: string };
}): Callbacks {
  const { config, store, clock } = deps;
  const sender = new CallbackSender({
    timeoutMs: config.callbackTimeoutMs,
    allowPrivateNetworks: config.callbackAllowPrivateNetworks,
    now: () => clock.now(),
  });
  const dispatcher = new CallbackDispatcher(
    {
      store,
      clock,
      logger: deps.logger.child({ component: 'callbacks' }),
      sender,
      metrics: new CallbackMetrics(deps.registry, store, clock),
      secretOf: async (accessKey) => (await deps.merchants.findKeyForSigning(accessKey))?.secretKey,
      node: deps.node,
      freed: leasesFreedCounter(deps.registry),
    },
    {
      policy: {
        intervalMs: config.callbackRetryIntervalMs,
        maxRetries: config.callbackMaxRetries,
        windowMs: config.callbackRetryWindowMs,
      },
      concurrency: config.callbackConcurrency,
      concurrencyPerHost: config.callbackConcurrencyPerHost,
      pollIntervalMs: config.callbackPollIntervalMs,
      leaseMs: config.callbackTimeoutMs + LEASE_MARGIN_MS,
    },
  );
  const outbox = new CallbackOutbox(store, clock, () => dispatcher.wake());
  const tests = new TestCallbacks(store, clock, outbox);
  outbox.register(tests);
  return {
    outbox,
    dispatcher,
    tests,
    async close() {
      await dispatcher.stop();
      await sender.close();
    },
  };
}
