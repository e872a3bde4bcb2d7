import type { AdminAccess } from '../admin/plugin.js';
import type { Config } from '../config.js';
import type { Services } from '../services.js';

/** What the back office's pages read and change (its actions go through `admin`, the admin routes). */
export interface BackofficeServices extends Pick<
  Services,
  | 'store'
  | 'clock'
  | 'merchants'
  | 'ledger'
  | 'orders'
  | 'nodes'
  | 'operators'
  | 'operatorSignIn'
  | 'approvals'
  | 'metrics'
> {
  config: Config;
  /** The admin scope's access settings and its routes, called in-process as the operator. */
  admin: AdminAccess;
}
