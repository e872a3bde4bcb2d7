import type { Migration, MigrationProvider } from 'kysely';
import * as core from './0001_core.js';
import * as callbacks from './0002_callbacks.js';
import * as ledger from './0003_ledger.js';
import * as orders from './0004_orders.js';
import * as vouchers from './0005_vouchers.js';
import * as exchange from './0006_exchange.js';
import * as cashier from './0007_cashier.js';
import * as console from './0008_console.js';
import * as railTasks from './0009_rail_tasks.js';
import * as scaleIndexes from './0010_scale_indexes.js';
import * as daraja from './0011_daraja.js';
import * as apiPix from './0012_api_pix.js';
import * as pixReturns from './0013_pix_returns.js';
import * as chainWatch from './0014_chain_watch.js';
import * as chainSends from './0015_chain_sends.js';
import * as consoleCreatedKey from './0016_console_created_key.js';
import * as apiKeyRoll from './0017_api_key_roll.js';
import * as nodes from './0018_nodes.js';
import * as operators from './0019_operators.js';
import * as boletoCharges from './0020_boleto_charges.js';
import * as mexico from './0021_mexico.js';
import * as merchantPause from './0022_merchant_pause.js';
import * as paymentAssignments from './0023_payment_assignments.js';
import * as settledByHand from './0024_settled_by_hand.js';
import * as backofficeMerchantList from './0025_backoffice_merchant_list.js';
import * as backofficeToday from './0026_backoffice_today.js';
import * as backofficeIndexes from './0027_backoffice_indexes.js';
import * as consoleOrderTotals from './0028_console_order_totals.js';
import * as depositAddressPool from './0029_deposit_address_pool.js';

/** Every migration, in order. One set serves SQLite and PostgreSQL. */
const migrations: Record<string, Migration> = {
  '0001_core': core,
  '0002_callbacks': callbacks,
  '0003_ledger': ledger,
  '0004_orders': orders,
  '0005_vouchers': vouchers,
  '0006_exchange': exchange,
  '0007_cashier': cashier,
  '0008_console': console,
  '0009_rail_tasks': railTasks,
  '0010_scale_indexes': scaleIndexes,
  '0011_daraja': daraja,
  '0012_api_pix': apiPix,
  '0013_pix_returns': pixReturns,
  '0014_chain_watch': chainWatch,
  '0015_chain_sends': chainSends,
  '0016_console_created_key': consoleCreatedKey,
  '0017_api_key_roll': apiKeyRoll,
  '0018_nodes': nodes,
  '0019_operators': operators,
  '0020_boleto_charges': boletoCharges,
  '0021_mexico': mexico,
  '0022_merchant_pause': merchantPause,
  '0023_payment_assignments': paymentAssignments,
  '0024_settled_by_hand': settledByHand,
  '0025_backoffice_merchant_list': backofficeMerchantList,
  '0026_backoffice_today': backofficeToday,
  '0027_backoffice_indexes': backofficeIndexes,
  '0028_console_order_totals': consoleOrderTotals,
  '0029_deposit_address_pool': depositAddressPool,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
