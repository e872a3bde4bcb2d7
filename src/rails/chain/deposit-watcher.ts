/**
 * The deposit watcher of one chain: it follows the token's transfers to the addresses Cashgate
 * handed out, block by block from a stored cursor (the last block read and its hash), and reports
 * each transfer once it is final (`confirmations` blocks deep, the block that carries it counted).
 *
 * - Bounded batches: at most `batchBlocks` blocks per read, so a watcher far behind catches up in
 *   steps and a restart resumes from its cursor, never skipping or reading a block twice into the
 *   record (transfers are keyed by transaction and log index).
 * - Reorganisations: a cursor whose block now has another hash, or a transfer whose block did, means
 *   the chain changed under the watcher. The cursor goes back `confirmations` blocks (to a block
 *   read again from the node), the transfers seen above it and not yet final are forgotten, and the
 *   watcher reads forward again; a transfer that vanished is never reported. One reported and then
 *   taken by a reorganisation deeper than finality cannot be undone: it is logged and counted.
 * - Many nodes: a chain's watch is held under a lease; a node that does not hold it does nothing.
 * - Reporting: `report` is called at least once per final transfer (again after a crash between
 *   the report and its record), so it must be idempotent.
 */
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../clock.js';
import type { Store } from '../../store/store.js';
import * as q from '../queries.js';

/** A block's identity as the chain's node gives it now. */
export interface ChainBlock {
  number: bigint;
  hash: string;
}

/** A token transfer as the chain's node reports it. */
export interface ChainTransfer {
  txHash: string;
  logIndex: number;
  from: string;
  to: string;
  units: bigint;
  blockNumber: bigint;
  blockHash: string;
}

/** What the watcher reads a chain through (an EVM node's JSON-RPC, a TRON API). */
export interface DepositSource {
  head(): Promise<bigint>;
  /** The block at a height as the node sees it now; undefined above its head. */
  block(number: bigint): Promise<ChainBlock | undefined>;
  /** The token's transfers to any of `to` in blocks `from` to `to` (inclusive). */
  transfers(range: { from: bigint; to: bigint }, to: readonly string[]): Promise<ChainTransfer[]>;
}

export interface DepositWatcherOptions {
  chain: string;
  confirmations: number;
  /** Blocks read at most per batch. */
  batchBlocks: number;
  /** How long a node holds the chain's watch without renewing it. */
  leaseMs: number;
  /** This node: the watch is leased in its current id. */
  node: { readonly id: string };
  /** Where a chain never watched before starts: this many blocks below the head (default `confirmations`). */
  startBelowHead?: number;
}

export interface DepositWatcherDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  source: DepositSource;
  /** The addresses deposits are watched for (compared as the source writes them). */
  addresses(): Promise<readonly string[]>;
  /** Called once a transfer is final; must be idempotent. */
  report(transfer: q.ChainTransferRow): Promise<void>;
  registry?: Registry;
}

interface WatchMetrics {
  lag: Gauge<'chain'>;
  pending: Gauge<'chain'>;
  reported: Counter<'chain'>;
  reorgs: Counter<'chain' | 'depth'>;
}

const METRICS = new WeakMap<Registry, WatchMetrics>();

function watchMetrics(registry: Registry): WatchMetrics {
  let metrics = METRICS.get(registry);
  if (metrics === undefined) {
    metrics = {
      lag: new Gauge({
        name: 'cashgate_chain_watch_lag_blocks',
        help: 'Blocks between the chain’s head and the last block its deposit watcher read',
        labelNames: ['chain'],
        registers: [registry],
      }),
      pending: new Gauge({
        name: 'cashgate_chain_deposits_pending',
        help: 'Transfers to watched addresses seen and not yet final',
        labelNames: ['chain'],
        registers: [registry],
      }),
      reported: new Counter({
        name: 'cashgate_chain_deposits_reported_total',
        help: 'Transfers to watched addresses reported final',
        labelNames: ['chain'],
        registers: [registry],
      }),
      reorgs: new Counter({
        name: 'cashgate_chain_reorgs_total',
        help: 'Reorganisations the deposit watcher met, by depth: within finality, or beyond it (a reported transfer vanished)',
        labelNames: ['chain', 'depth'],
        registers: [registry],
      }),
    };
    METRICS.set(registry, metrics);
  }
  return metrics;
}

/** Transfers are asked for in groups of this many addresses. */
const ADDRESSES_PER_CALL = 100;

export class DepositWatcher {
  readonly #metrics: WatchMetrics | undefined;

  constructor(
    private readonly deps: DepositWatcherDeps,
    private readonly options: DepositWatcherOptions,
  ) {
    this.#metrics = deps.registry === undefined ? undefined : watchMetrics(deps.registry);
  }

  /**
   * One run: takes the chain's watch (or does nothing when another node holds it), checks the
   * cursor against the chain, reads one batch forward and reports what became final. Answers how
   * many blocks it read plus how many transfers it reported (0: nothing to do now).
   */
  async run(): Promise<number> {
    const { store, clock, source } = this.deps;
    const { chain, leaseMs } = this.options;
    const owner = this.options.node.id;
    const now = clock.now();
    if ((await q.chainWatch(store.read, chain)) === undefined) {
      const head = await source.head();
      const start = head - BigInt(this.options.startBelowHead ?? this.options.confirmations);
      const block = await source.block(start < 0n ? 0n : start);
      if (block === undefined) return 0;
      await store.transact((tx) =>
        q.insertChainWatch(tx, {
          chain,
          block_number: Number(block.number),
          block_hash: block.hash,
          lease_owner: null,
          lease_until: null,
          updated_at: now,
        }),
      );
    }
    if (!(await store.transact((tx) => q.leaseChainWork(tx, 'chain_watches', chain, owner, now, now + leaseMs))))
      return 0;
    const watch = await q.chainWatch(store.read, chain);
    if (watch === undefined) return 0;
    const head = await source.head();
    const cursor = BigInt(watch.block_number);
    const atCursor = await source.block(cursor);
    if (atCursor?.hash !== watch.block_hash) {
      await this.#rollBack(cursor, 'the cursor’s block changed');
      return 1;
    }
    const read = await this.#readForward({ number: cursor, hash: watch.block_hash }, head);
    const reported = await this.#reportFinal(head);
    // The cursor moved by the blocks read (a rollback while reporting shows at the next run).
    this.#metrics?.lag.set({ chain }, Number(head - cursor) - read);
    this.#metrics?.pending.set({ chain }, await q.countSeenChainTransfers(store.read, chain));
    return read + reported;
  }

  /** Reads blocks after the cursor (one batch), records the transfers to watched addresses and moves the cursor. */
  async #readForward(at: ChainBlock, head: bigint): Promise<number> {
    const { store, clock, source } = this.deps;
    const { chain } = this.options;
    const owner = this.options.node.id;
    const cursor = at.number;
    const from = cursor + 1n;
    const to = head < cursor + BigInt(this.options.batchBlocks) ? head : cursor + BigInt(this.options.batchBlocks);
    if (from > to) return 0;
    const addresses = await this.deps.addresses();
    const found: ChainTransfer[] = [];
    for (let i = 0; i < addresses.length; i += ADDRESSES_PER_CALL)
      found.push(...(await source.transfers({ from, to }, addresses.slice(i, i + ADDRESSES_PER_CALL))));
    const last = await source.block(to);
    if (last === undefined) return 0;
    // Logs and blocks come from separate answers: a transfer is recorded only if its block is the
    // chain's block at that height now; otherwise the chain moved meanwhile and the batch is read again.
    const hashes = new Map<bigint, string>([[last.number, last.hash]]);
    for (const transfer of found) {
      if (!hashes.has(transfer.blockNumber))
        hashes.set(transfer.blockNumber, (await source.block(transfer.blockNumber))?.hash ?? '');
      if (hashes.get(transfer.blockNumber) !== transfer.blockHash) return 0;
    }
    // And the cursor's block is still the chain's: a reorganisation during these reads that replaced
    // blocks already read would otherwise leave their new transfers behind the cursor. The next run
    // finds it and rolls back.
    if ((await source.block(cursor))?.hash !== at.hash) return 0;
    const now = clock.now();
    const recorded = await store.transact(async (tx) => {
      if (
        !(await q.moveChainWatch(tx, chain, owner, {
          block_number: Number(to),
          block_hash: last.hash,
          updated_at: now,
        }))
      )
        return false;
      await q.insertChainTransfers(
        tx,
        found.map((t) => ({
          chain,
          tx_hash: t.txHash,
          log_index: t.logIndex,
          to_address: t.to,
          from_address: t.from,
          units: t.units.toString(),
          block_number: Number(t.blockNumber),
          block_hash: t.blockHash,
          state: 'seen' as const,
          seen_at: now,
          reported_at: null,
        })),
      );
      return true;
    });
    return recorded ? Number(to - from + 1n) : 0;
  }

  /** Reports the transfers that are final, after checking their blocks are still the chain's. */
  async #reportFinal(head: bigint): Promise<number> {
    const { store, clock, source } = this.deps;
    const { chain } = this.options;
    const finalUpTo = head - BigInt(this.options.confirmations) + 1n;
    if (finalUpTo < 0n) return 0;
    const due = await q.seenChainTransfers(store.read, chain, Number(finalUpTo), 200);
    const canonical = new Map<number, string | undefined>();
    let reported = 0;
    for (const transfer of due) {
      if (!canonical.has(transfer.block_number))
        canonical.set(transfer.block_number, (await source.block(BigInt(transfer.block_number)))?.hash);
      if (canonical.get(transfer.block_number) !== transfer.block_hash) {
        await this.#rollBack(BigInt(transfer.block_number), `the block of ${transfer.tx_hash} changed`);
        return reported;
      }
      await this.deps.report(transfer);
      if (await store.transact((tx) => q.markChainTransferReported(tx, transfer, clock.now()))) {
        reported += 1;
        this.#metrics?.reported.inc({ chain });
      }
    }
    return reported;
  }

  /**
   * The chain changed at or below `changedAt`: the cursor goes back `confirmations` blocks below it
   * (to that block as the node sees it now) and the transfers seen above it and not final are forgotten.
   */
  async #rollBack(changedAt: bigint, why: string): Promise<void> {
    const { store, clock, source, logger } = this.deps;
    const { chain, confirmations } = this.options;
    const owner = this.options.node.id;
    const target = changedAt - BigInt(confirmations) - 1n;
    const block = await source.block(target < 0n ? 0n : target);
    if (block === undefined) return;
    const lost = await q.reportedChainTransfersAbove(store.read, chain, Number(block.number));
    const dropped = await store.transact(async (tx) => {
      if (
        !(await q.moveChainWatch(tx, chain, owner, {
          block_number: Number(block.number),
          block_hash: block.hash,
          updated_at: clock.now(),
        }))
      )
        return 0;
      return q.dropSeenChainTransfersAbove(tx, chain, Number(block.number));
    });
    this.#metrics?.reorgs.inc({ chain, depth: 'within-finality' });
    logger.warn(
      { chain, changedAt: String(changedAt), cursor: String(block.number), dropped },
      `a reorganisation: ${why}; reading again from block ${block.number}`,
    );
    // Reported transfers whose blocks are no longer the chain's: beyond what finality promised.
    for (const transfer of lost) {
      const now = await source.block(BigInt(transfer.block_number));
      if (now?.hash === transfer.block_hash) continue;
      this.#metrics?.reorgs.inc({ chain, depth: 'beyond-finality' });
      logger.error(
        { chain, txHash: transfer.tx_hash, block: transfer.block_number },
        'a transfer reported final is no longer on the chain: a reorganisation deeper than the confirmations',
      );
    }
  }
}
