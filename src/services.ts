import type { Registry } from 'prom-client';
import type { BrazilKinds } from './brazil/kinds.js';
import type { Callbacks } from './callbacks/module.js';
import type { CheckoutService } from './cashier/checkout.js';
import type { Clock } from './clock.js';
import type { ConsoleAccounts } from './console/accounts.js';
import type { RequestLog } from './console/request-log.js';
import type { OperatorRates } from './exchange/rates.js';
import type { ExchangeService } from './exchange/service.js';
import type { PixLocationSigner } from './brazil/pix-location.js';
import type { ApiPixBrazil } from './brazil/api-pix.js';
import type { BoletoLive } from './brazil/boleto-live.js';
import type { OxxoLive } from './mexico/oxxo-live.js';
import type { SpeiLive } from './mexico/spei-live.js';
import type { DarajaKenya } from './kenya/daraja.js';
import type { LiveChains } from './chains.js';
import type { KenyaKinds } from './kenya/kinds.js';
import type { LedgerService } from './ledger/service.js';
import type { MerchantService } from './merchants/service.js';
import type { OrderSandbox } from './orders/sandbox.js';
import type { OrderService } from './orders/service.js';
import type { Rails } from './rails/rails.js';
import type { NodeLiveness } from './nodes/liveness.js';
import type { OperatorService } from './operators/service.js';
import type { OperatorSignIn } from './operators/signin.js';
import type { AdjustmentApprovals } from './ledger/approvals.js';
import type { Store } from './store/store.js';

/** The order kinds of each area, built with their rails and registered with the order service. */
export interface OrderKinds {
  kenya: KenyaKinds;
  brazil: BrazilKinds;
}

export interface Services {
  store: Store;
  /** This process as a node among those sharing the database (started by `serve` and `worker` only). */
  nodes: NodeLiveness;
  merchants: MerchantService;
  ledger: LedgerService;
  orders: OrderService;
  kinds: OrderKinds;
  /** The fiat rails (sandbox simulators until a connector is configured). */
  rails: Rails;
  /** Kenya on Safaricom's Daraja (KENYA_RAIL=daraja): the connector, its callback path token, its reconciliation interval. */
  daraja: { connector: DarajaKenya; token: string; reconcileIntervalMs: number } | undefined;
  /** Brazil on a PSP's API Pix (BRAZIL_RAIL=apipix): the connector, its webhook path token, its reconciliation interval. */
  apiPix: { connector: ApiPixBrazil; token: string; reconcileIntervalMs: number } | undefined;
  /** Brazil's boletos at an issuer (BRAZIL_BOLETO_RAIL=efi|inter): the connector, its notification path token, its reconciliation interval. */
  boleto: { connector: BoletoLive; token: string; reconcileIntervalMs: number } | undefined;
  /** Mexico's live rails (MEXICO_SPEI_RAIL=stp, MEXICO_OXXO_RAIL=stripe): each connector with its webhook path token; reconciliation's interval. */
  mexico: {
    spei: { connector: SpeiLive; token: string } | undefined;
    oxxo: { connector: OxxoLive; token: string } | undefined;
    reconcileIntervalMs: number;
  };
  /** The USDT chains under CHAIN_RAIL=live: their watchers and senders; undefined in the sandbox. */
  chains: LiveChains | undefined;
  sandbox: OrderSandbox;
  exchange: ExchangeService;
  checkouts: CheckoutService;
  rates: OperatorRates;
  pixSigner: PixLocationSigner;
  callbacks: Callbacks;
  /** Prometheus registry served at /metrics. */
  metrics: Registry;
  /** Console users and sessions. */
  consoleAccounts: ConsoleAccounts;
  /** Requests made with debug-mode keys. */
  requestLog: RequestLog;
  /** The people who operate Cashgate: accounts, roles, personal tokens. */
  operators: OperatorService;
  /** Operators' sign-in: password, second factor, recovery codes, lock-out. */
  operatorSignIn: OperatorSignIn;
  /** Balance adjustments waiting for a second operator (APPROVAL_THRESHOLD). */
  approvals: AdjustmentApprovals;
  clock: Clock;
  close(): Promise<void>;
}
