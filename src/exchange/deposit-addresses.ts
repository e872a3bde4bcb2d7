import type { AddressFamily, DepositAddressDeriver } from '../rails/chain/derivation.js';
import { MAX_ADDRESS_INDEX } from '../rails/chain/derivation.js';
import type { ReadDb, Tx } from '../store/store.js';
import * as q from './queries.js';

export interface DepositAddress {
  address: string;
  family: AddressFamily;
  keyId: string;
  index: number;
  path: string;
}

/**
 * Deposit addresses derived from the operator's extended public keys. Each allocation takes the
 * next index of the key's counter in the caller's transaction (a row lock on PostgreSQL, the
 * writer lock on SQLite), so no index, and no address, is ever handed out twice, on any node.
 */
export class DepositAddresses {
  constructor(private readonly derivers: Readonly<Partial<Record<AddressFamily, DepositAddressDeriver>>>) {}

  /** The next unused address of `family`, reserved in `tx`; record it with `assign` once the order row exists. */
  async reserve(tx: Tx, family: AddressFamily): Promise<DepositAddress> {
    const deriver = this.derivers[family];
    if (deriver === undefined)
      throw new Error(`no ${family} xpub is configured: deposit addresses of that family cannot be derived`);
    await q.ensureAddressCounter(tx, deriver.keyId);
    const index = (await q.advanceAddressCounter(tx, deriver.keyId)) - 1;
    if (index > MAX_ADDRESS_INDEX)
      throw new Error(
        `every non-hardened index of ${family} key ${deriver.keyId} is used: configure a new account xpub`,
      );
    return { address: deriver.address(index), family, keyId: deriver.keyId, index, path: deriver.path(index) };
  }

  /** Records the address as the order's: a second hand-out of it would break a unique constraint. */
  async assign(tx: Tx, deposit: DepositAddress, orderId: string, now: number): Promise<void> {
    await q.insertDepositAddress(tx, {
      address: deposit.address,
      family: deposit.family,
      key_id: deposit.keyId,
      path_index: deposit.index,
      order_id: orderId,
      created_at: now,
    });
  }
}

/** The addresses of `family` handed out since `since`, for a deposit watcher. */
export function recentDepositAddresses(db: ReadDb, family: AddressFamily, since: number): Promise<string[]> {
  return q.depositAddressesSince(db, family, since);
}
