/**
 * The token sender of one chain: it pays fiat → token orders out of the operator's hot wallet,
 * one durable send per order (`chain_sends`), with nothing sent twice and nothing lost.
 *
 * - Before anything is signed: the day's ceiling, the wallet's token balance and its coin for fees
 *   are checked, and a send that would fail fails the order early with the reason. Then the order's
 *   fiat is taken (status 2); an order that ended meanwhile (its quote lapsed) is not sent.
 * - Signing: a transaction is signed and stored (hash and raw bytes) in the same unit of work that
 *   gives it the wallet's next nonce (EVM); only then is it broadcast. A crash between the two finds
 *   the stored transaction and broadcasts that same one, after asking the node whether it has it.
 * - A broadcast whose fate is unknown (a timeout) is never repeated blindly: the node is asked for
 *   the hash first. Repeating the same signed transaction is harmless (one hash, one nonce).
 * - Receipts decide: mined and `confirmations` deep (its block still the chain's) → confirmed, the
 *   order completes; a reverted transaction → the order fails and its fiat returns.
 * - A send with no receipt after `stuckAfterMs` is replaced (EVM: the same nonce with higher fees,
 *   up to the ceiling; TRON: once the transaction expired unmined, a new one). Every transaction
 *   signed for the send stays on record and each is looked for: whichever is mined decides.
 * - Many nodes: a chain's sending is held under a lease; a node that does not hold it does nothing.
 */
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../clock.js';
import type { Store } from '../../store/store.js';
import * as q from '../queries.js';
import type { Chain } from './addresses.js';

/** A transaction signed for a send, as stored before its broadcast. */
export interface SignedSend {
  hash: string;
  /** What is broadcast: EVM raw hex, or TRON's broadcast JSON. */
  raw: string;
  nonce: bigint | null;
  maxFee: bigint | null;
  priorityFee: bigint | null;
  /** When the transaction can no longer be mined (TRON's expiration), if ever. */
  expiresAt: number | null;
}

/** What the chain's node says of a transaction now. */
export type SendFate =
  | { state: 'unknown' }
  | { state: 'pending' }
  | { state: 'mined'; block: bigint; blockHash: string; success: boolean; failure?: string };

/** The node refused a broadcast: it did not take the transaction. */
export class BroadcastRejected extends Error {
  constructor(
    message: string,
    /** `known`: it has it already; `nonce-used`: another transaction took the nonce; `other`. */
    readonly reason: 'known' | 'nonce-used' | 'other',
  ) {
    super(message);
    this.name = 'BroadcastRejected';
  }
}

/** The hot wallet of one chain, as the sender uses it (an EVM node and key, a TRON API and key). */
export interface HotWallet {
  readonly chain: Chain;
  readonly address: string;
  readonly confirmations: number;
  /** The chain's coin (fees are paid in it) and the token's decimals. */
  readonly coin: { symbol: string; decimals: number };
  readonly tokenDecimals: number;
  /** Whether sends take nonces (EVM) or not (TRON). */
  readonly usesNonces: boolean;
  /**
   * How long past a transaction's expiration (TRON) before its absence is sure: the node asked may
   * be behind the chain by a few blocks, so a transaction is rebuilt only once this has passed too.
   */
  readonly settleMs: number;
  balances(): Promise<{ token: bigint; coin: bigint }>;
  /** The wallet's nonces on the chain: `mined` (the next one a block will take) and `pending` (the node's pool counted). */
  chainNonces(): Promise<{ mined: bigint; pending: bigint }>;
  /**
   * Reads what signing needs from the node (fees and gas, a reference block) and answers a signer
   * that needs no more I/O, so the nonce can be taken and the transaction stored in one unit of
   * work, with the most the transaction may cost in the chain's coin. With `replacing`, the new
   * transaction replaces that one (higher fees, or a fresh expiration); undefined when it cannot be
   * replaced (its fees are at the ceiling already).
   */
  prepare(send: { to: string; units: bigint; replacing?: SignedSend }): Promise<PreparedSend | undefined>;
  /** Broadcasts; throws BroadcastRejected when the node refused it, anything else when its fate is unknown. */
  broadcast(signed: SignedSend): Promise<void>;
  fate(hash: string): Promise<SendFate>;
  head(): Promise<{ number: bigint; timestamp: number }>;
  blockHash(number: bigint): Promise<string | undefined>;
}

/** A send ready to be signed: the signer (no I/O left) and the most it may cost in the chain's coin. */
export interface PreparedSend {
  sign: (nonce: bigint | null) => SignedSend;
  maxCost: bigint;
}

/** Why a send was refused before anything was signed, for the order's errorMsg. */
export interface SendRefusal {
  kind: 'tokens' | 'coin' | 'day-ceiling' | 'order-ceiling' | 'nonce-used';
  /** The figures, in English (the exchange words them per language). */
  detail: string;
}

/** What the sender tells the send's order, through the exchange (each is idempotent). */
export interface SendOutcomes {
  /** Takes the order's fiat (status 2), or finds it taken; false when the order ended (its quote lapsed). */
  take(orderId: string): Promise<boolean>;
  /** The send will not happen: the order fails and its fiat returns. */
  refuse(orderId: string, refusal: SendRefusal): Promise<void>;
  /** A transaction of the send reached the chain's node (status 3, with its hash). */
  sent(orderId: string, hash: string): Promise<void>;
  /** The send's transaction is final and succeeded (status 8). */
  confirmed(orderId: string, hash: string): Promise<void>;
  /** The send's transaction is final and failed on the chain: the order fails, its fiat returns. */
  reverted(orderId: string, hash: string, why: string): Promise<void>;
}

export interface TokenSenderOptions {
  /** This node: the sending is leased in its current id. */
  node: { readonly id: string };
  leaseMs: number;
  stuckAfterMs: number;
  /** Ceilings in the chain token's base units. */
  maxPerOrder: bigint;
  maxPerDay: bigint;
}

interface SendMetrics {
  sends: Counter<'chain' | 'outcome'>;
  balance: Gauge<'chain' | 'asset'>;
  nonceGap: Gauge<'chain'>;
}

const METRICS = new WeakMap<Registry, SendMetrics>();

function sendMetrics(registry: Registry): SendMetrics {
  let metrics = METRICS.get(registry);
  if (metrics === undefined) {
    metrics = {
      sends: new Counter({
        name: 'cashgate_chain_sends_total',
        help: 'Token sends by chain and outcome (broadcast, rebroadcast, replaced, rejected, confirmed, reverted, refused, cancelled)',
        labelNames: ['chain', 'outcome'],
        registers: [registry],
      }),
      balance: new Gauge({
        name: 'cashgate_chain_hot_wallet_balance',
        help: 'The hot wallet’s balance by chain and asset (the token, or the coin fees are paid in), in whole units',
        labelNames: ['chain', 'asset'],
        registers: [registry],
      }),
      nonceGap: new Gauge({
        name: 'cashgate_chain_nonce_gap',
        help: 'Nonces below the hot wallet’s oldest unmined send that no transaction on the node holds (its sends cannot be mined until filled)',
        labelNames: ['chain'],
        registers: [registry],
      }),
    };
    METRICS.set(registry, metrics);
  }
  return metrics;
}

/** Sends looked at per run. */
const BATCH = 50;
const DAY_MS = 86_400_000;

/** `units` of `decimals` as a number of whole units, for a gauge (never for money). */
const whole = (units: bigint, decimals: number): number => Number(units) / 10 ** decimals;

export class TokenSender {
  readonly #metrics: SendMetrics | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      logger: Logger;
      wallet: HotWallet;
      outcomes: SendOutcomes;
      registry?: Registry;
    },
    private readonly options: TokenSenderOptions,
  ) {
    this.#metrics = deps.registry === undefined ? undefined : sendMetrics(deps.registry);
  }

  get chain(): Chain {
    return this.deps.wallet.chain;
  }

  /** One run: takes the chain's sending (or does nothing), then moves each open send one step. Answers the sends looked at. */
  async run(): Promise<number> {
    const { store, clock, wallet, logger } = this.deps;
    const now = clock.now();
    const row = await q.chainHotWallet(store.read, this.chain);
    if (row === undefined) {
      const { pending } = await wallet.chainNonces();
      await store.transact((tx) =>
        q.insertChainHotWallet(tx, {
          chain: this.chain,
          address: wallet.address,
          next_nonce: Number(pending),
          lease_owner: null,
          lease_until: null,
          updated_at: now,
        }),
      );
    }
    if (!(await this.#renewLease())) return 0;
    const sends = await q.openChainSends(store.read, this.chain, BATCH);
    if (row !== undefined && row.address !== wallet.address) {
      // The operator changed the key: the new wallet starts from its own nonce once the old one's sends ended.
      if (sends.some((s) => s.from_address !== null && s.from_address !== wallet.address)) {
        logger.error(
          { chain: this.chain, previous: row.address, address: wallet.address },
          'the hot wallet key changed while sends of the previous wallet are under way; sending waits until they end (restore the previous key to finish them)',
        );
        return 0;
      }
      const { pending } = await wallet.chainNonces();
      await store.transact((tx) =>
        q.replaceChainHotWallet(tx, this.chain, wallet.address, Number(pending), clock.now()),
      );
      logger.warn({ chain: this.chain, previous: row.address, address: wallet.address }, 'the hot wallet changed');
    }
    const balances = await wallet.balances();
    this.#metrics?.balance.set({ chain: this.chain, asset: 'USDT' }, whole(balances.token, wallet.tokenDecimals));
    this.#metrics?.balance.set(
      { chain: this.chain, asset: wallet.coin.symbol },
      whole(balances.coin, wallet.coin.decimals),
    );
    if (wallet.usesNonces) await this.#checkNonces(sends);
    // Tokens signed away and not yet mined: the balance checks count them as spent.
    let inFlight = sends
      .filter((s) => s.state !== 'queued' && s.block_number === null)
      .reduce((sum, s) => sum + BigInt(s.units), 0n);
    for (const send of sends) {
      // Each step renews the lease; a node that lost it stops (another took the sending over).
      if (!(await this.#renewLease())) return 0;
      try {
        if ((await this.#step(send, inFlight)) === 'signed') inFlight += BigInt(send.units);
      } catch (error) {
        logger.error(
          { err: error, chain: this.chain, orderId: send.order_id },
          'a token send could not move on; it is tried again next run',
        );
      }
    }
    return sends.length;
  }

  #renewLease(): Promise<boolean> {
    const now = this.deps.clock.now();
    return this.deps.store.transact((tx) =>
      q.leaseChainWork(tx, 'chain_hot_wallets', this.chain, this.options.node.id, now, now + this.options.leaseMs),
    );
  }

  /** Throws unless this node still holds the sending: nothing it signed is stored, so nothing is broadcast. */
  async #mustHoldLease(tx: Parameters<typeof q.holdsChainLease>[0]): Promise<void> {
    if (!(await q.holdsChainLease(tx, 'chain_hot_wallets', this.chain, this.options.node.id, this.deps.clock.now())))
      throw new Error(`this node no longer holds the sending of ${this.chain}`);
  }

  /** The operator's lone signals about nonces: a gap under the oldest unmined send, or nonces used outside Cashgate. */
  async #checkNonces(sends: readonly q.ChainSendRow[]): Promise<void> {
    const { store, clock, logger } = this.deps;
    const { mined, pending } = await this.deps.wallet.chainNonces();
    const wallet = await q.chainHotWallet(store.read, this.chain);
    if (wallet !== undefined && pending > BigInt(wallet.next_nonce)) {
      // Transactions Cashgate did not sign took nonces: the next send starts after them.
      logger.warn(
        { chain: this.chain, address: wallet.address, next: wallet.next_nonce, pending: String(pending) },
        'the hot wallet sent transactions Cashgate did not sign; its next nonce moves past them',
      );
      await store.transact((tx) => q.raiseChainNonce(tx, this.chain, Number(pending), clock.now()));
    }
    const unmined = sends.filter((s) => s.nonce !== null && s.state !== 'queued').map((s) => BigInt(s.nonce ?? 0));
    const lowest = unmined.length === 0 ? undefined : unmined.reduce((a, b) => (a < b ? a : b));
    const gap = lowest === undefined || lowest <= mined ? 0n : lowest - mined;
    this.#metrics?.nonceGap.set({ chain: this.chain }, Number(gap));
    if (gap > 0n && pending <= mined)
      logger.error(
        { chain: this.chain, mined: String(mined), lowest: String(lowest) },
        'a nonce gap: the hot wallet’s oldest unmined send waits for nonces no transaction holds',
      );
  }

  async #step(send: q.ChainSendRow, inFlight: bigint): Promise<'signed' | undefined> {
    switch (send.state) {
      case 'queued':
        return this.#sign(send, inFlight);
      case 'signed':
        await this.#broadcast(send);
        return undefined;
      default:
        await this.#follow(send);
        return undefined;
    }
  }

  /** Checks, takes the fiat, then signs and stores the transaction with its nonce; broadcasts it. */
  async #sign(send: q.ChainSendRow, inFlight: bigint): Promise<'signed' | undefined> {
    const { store, clock, wallet, outcomes } = this.deps;
    const units = BigInt(send.units);
    const checked = await this.#check(send, units, inFlight);
    if ('refusal' in checked) {
      await outcomes.refuse(send.order_id, checked.refusal);
      await this.#end(send, 'failed', checked.refusal.detail, 'refused');
      return undefined;
    }
    if (!(await outcomes.take(send.order_id))) {
      await this.#end(send, 'cancelled', 'the order ended before its tokens were sent', 'cancelled');
      return undefined;
    }
    const signer = checked.prepared.sign;
    const now = clock.now();
    const signed = await store.transact(async (tx) => {
      await this.#mustHoldLease(tx);
      let nonce: bigint | null = null;
      if (wallet.usesNonces) {
        const taken = await q.takeChainNonce(tx, this.chain, this.options.node.id, now);
        if (taken === undefined) return undefined;
        nonce = BigInt(taken);
      }
      const transaction = signer(nonce);
      await q.insertChainSendAttempt(tx, attemptRow(send, transaction, now));
      const moved = await q.updateChainSend(tx, send.order_id, 'queued', {
        state: 'signed',
        from_address: wallet.address,
        nonce: nonce === null ? null : Number(nonce),
        tx_hash: transaction.hash,
        signed_at: now,
        updated_at: now,
      });
      if (!moved) throw new Error(`the send of ${send.order_id} moved while it was signed`);
      return transaction;
    });
    if (signed === undefined) return undefined; // another node holds the sending now
    const reread = await q.chainSend(store.read, send.order_id);
    if (reread !== undefined) await this.#broadcast(reread);
    return 'signed';
  }

  /** Ceilings and balances: why this send must not be signed, if it must not. */
  async #check(
    send: q.ChainSendRow,
    units: bigint,
    inFlight: bigint,
  ): Promise<{ refusal: SendRefusal } | { prepared: PreparedSend }> {
    const refusal = (kind: SendRefusal['kind'], detail: string) => ({ refusal: { kind, detail } });
    const { wallet, clock, store } = this.deps;
    const token = (value: bigint) => `${whole(value, wallet.tokenDecimals)} USDT`;
    if (units > this.options.maxPerOrder)
      return refusal(
        'order-ceiling',
        `the send of ${token(units)} is above the ceiling of ${token(this.options.maxPerOrder)} per order`,
      );
    const midnight = clock.now() - (clock.now() % DAY_MS);
    const today = await q.unitsSignedSince(store.read, this.chain, midnight);
    if (today + units > this.options.maxPerDay)
      return refusal(
        'day-ceiling',
        `the send of ${token(units)} would take today's sends on ${this.chain} to ${token(today + units)}, ` +
          `above the ceiling of ${token(this.options.maxPerDay)} per day (UTC)`,
      );
    const balances = await wallet.balances();
    if (balances.token - inFlight < units)
      return refusal(
        'tokens',
        inFlight === 0n
          ? `the hot wallet holds ${token(balances.token)}, the send needs ${token(units)}`
          : `the hot wallet holds ${token(balances.token)}, of which ${token(inFlight)} are being sent, and the send needs ${token(units)}`,
      );
    // Only now: an EVM node cannot estimate the gas of a transfer the wallet's tokens do not cover.
    const prepared = await wallet.prepare({ to: send.to_address, units });
    if (prepared === undefined) throw new Error('the wallet could not prepare the send');
    if (balances.coin < prepared.maxCost) {
      const coin = (value: bigint) => `${whole(value, wallet.coin.decimals)} ${wallet.coin.symbol}`;
      return refusal(
        'coin',
        `the hot wallet holds ${coin(balances.coin)} for fees, the send may cost up to ${coin(prepared.maxCost)}`,
      );
    }
    return { prepared };
  }

  /**
   * The send's transactions as the node sees them now, its head read first: a transaction no
   * lookup finds was in no block up to that head (as far as the node answering knows).
   */
  async #fates(
    attempts: readonly q.ChainSendAttemptRow[],
  ): Promise<{ head: { number: bigint; timestamp: number }; fates: Map<string, SendFate> }> {
    const head = await this.deps.wallet.head();
    const fates = new Map<string, SendFate>();
    for (const attempt of attempts) fates.set(attempt.tx_hash, await this.deps.wallet.fate(attempt.tx_hash));
    return { head, fates };
  }

  /** Whether a transaction no node knows can no longer be mined: expired (TRON), long enough ago to be sure. */
  #deadForGood(attempt: q.ChainSendAttemptRow, head: { timestamp: number }): boolean {
    return attempt.expires_at !== null && head.timestamp > attempt.expires_at + this.deps.wallet.settleMs;
  }

  #stuck(attempt: q.ChainSendAttemptRow): boolean {
    return this.deps.clock.now() - (attempt.broadcast_at ?? attempt.created_at) >= this.options.stuckAfterMs;
  }

  /** A signed send not known to be broadcast: asks the node about each of its transactions, then broadcasts the latest. */
  async #broadcast(send: q.ChainSendRow): Promise<void> {
    const { store, wallet, clock, logger, outcomes } = this.deps;
    const attempts = await q.chainSendAttempts(store.read, send.order_id);
    const attempt = attempts.find((a) => a.tx_hash === send.tx_hash);
    if (attempt === undefined)
      throw new Error(`the send of ${send.order_id} has no stored transaction ${send.tx_hash}`);
    const { head, fates } = await this.#fates(attempts);
    const known = attempts.filter((a) => fates.get(a.tx_hash)?.state !== 'unknown').at(-1);
    if (known === undefined) {
      if (this.#deadForGood(attempt, head)) {
        // It expired before any node took it: it can never be mined, so a new one is made (broadcast next run).
        await this.#replace(send, attempt, 'signed');
        return;
      }
      try {
        await wallet.broadcast(signedOf(attempt));
        this.#metrics?.sends.inc({ chain: this.chain, outcome: 'broadcast' });
      } catch (error) {
        if (!(error instanceof BroadcastRejected)) throw error;
        if (error.reason === 'nonce-used') {
          // Another transaction took the nonce. Only once the chain is sure (its nonce mined past this
          // one, no transaction of this send found, for as long as a stuck send is given) did none of it go.
          const { mined } = await wallet.chainNonces();
          if (send.nonce !== null && mined > BigInt(send.nonce) && this.#stuck(attempt)) {
            await this.#recordOutcome(attempt.tx_hash, `refused: ${error.message}`);
            await outcomes.refuse(send.order_id, {
              kind: 'nonce-used',
              detail: `the hot wallet's nonce ${send.nonce} was taken by a transaction Cashgate did not sign`,
            });
            await this.#end(send, 'failed', error.message, 'refused');
          } else {
            logger.warn(
              { chain: this.chain, orderId: send.order_id, hash: attempt.tx_hash, reason: error.message },
              'the node says the send’s nonce is used; it is asked again until the chain is sure',
            );
          }
          return;
        }
        if (error.reason === 'other') {
          await this.#recordOutcome(attempt.tx_hash, `refused: ${error.message}`);
          this.#metrics?.sends.inc({ chain: this.chain, outcome: 'rejected' });
          logger.error(
            { chain: this.chain, orderId: send.order_id, hash: attempt.tx_hash, reason: error.message },
            'the node refused a token send; it is offered again next run, and replaced once stuck',
          );
          // EVM: the same nonce with the fees of the moment, since a refused transaction holds up every later nonce.
          if (wallet.usesNonces && this.#stuck(attempt)) await this.#replace(send, attempt, 'signed');
          return;
        }
      }
    }
    const hash = (known ?? attempt).tx_hash;
    const now = clock.now();
    await store.transact(async (tx) => {
      if (attempt.broadcast_at === null) await q.updateChainSendAttempt(tx, attempt.tx_hash, { broadcast_at: now });
      await q.updateChainSend(tx, send.order_id, 'signed', { state: 'broadcast', tx_hash: hash, updated_at: now });
    });
    await outcomes.sent(send.order_id, hash);
  }

  /** A broadcast send: its mined transaction decides, once final; else it is broadcast again or replaced. */
  async #follow(send: q.ChainSendRow): Promise<void> {
    const { store, wallet, clock, logger, outcomes } = this.deps;
    // Status 4 with its hash, again: a crash may have come between the broadcast and the order's step.
    if (send.tx_hash !== null) await outcomes.sent(send.order_id, send.tx_hash);
    const attempts = await q.chainSendAttempts(store.read, send.order_id);
    const latest = attempts.find((a) => a.tx_hash === send.tx_hash) ?? attempts.at(-1);
    if (latest === undefined) throw new Error(`the send of ${send.order_id} has no stored transaction`);
    const { head, fates } = await this.#fates(attempts);
    const mined = attempts.filter((a) => fates.get(a.tx_hash)?.state === 'mined');
    if (mined.length > 1) {
      this.#metrics?.sends.inc({ chain: this.chain, outcome: 'double-mined' });
      logger.error(
        { chain: this.chain, orderId: send.order_id, hashes: mined.map((a) => a.tx_hash) },
        'more than one transaction of a send was mined: the payee was paid more than once; recover the surplus',
      );
    }
    const decided = mined.at(-1);
    const fate = decided === undefined ? undefined : fates.get(decided.tx_hash);
    if (decided !== undefined && fate?.state === 'mined') {
      const depth = Number(head.number - fate.block + 1n);
      const now = clock.now();
      const changes = {
        tx_hash: decided.tx_hash,
        block_number: Number(fate.block),
        block_hash: fate.blockHash,
        confirmations: Math.max(depth, 0),
        updated_at: now,
      };
      if (depth < wallet.confirmations || (await wallet.blockHash(fate.block)) !== fate.blockHash) {
        await store.transact((tx) => q.updateChainSend(tx, send.order_id, 'broadcast', changes));
        return;
      }
      await store.transact(async (tx) => {
        await q.updateChainSendAttempt(tx, decided.tx_hash, {
          outcome: fate.success ? 'mined' : `reverted: ${fate.failure ?? 'failed'}`,
        });
        for (const other of attempts)
          if (other !== decided && fates.get(other.tx_hash)?.state !== 'mined')
            await q.updateChainSendAttempt(tx, other.tx_hash, { outcome: 'replaced' });
      });
      if (fate.success) {
        await outcomes.confirmed(send.order_id, decided.tx_hash);
        await store.transact((tx) =>
          q.updateChainSend(tx, send.order_id, 'broadcast', { ...changes, state: 'confirmed' }),
        );
        this.#metrics?.sends.inc({ chain: this.chain, outcome: 'confirmed' });
      } else {
        const why = fate.failure ?? 'the transaction failed';
        await outcomes.reverted(send.order_id, decided.tx_hash, why);
        await store.transact((tx) =>
          q.updateChainSend(tx, send.order_id, 'broadcast', { ...changes, state: 'failed', failure: why }),
        );
        this.#metrics?.sends.inc({ chain: this.chain, outcome: 'reverted' });
      }
      return;
    }
    if (attempts.every((a) => fates.get(a.tx_hash)?.state === 'unknown') && this.#deadForGood(latest, head)) {
      // TRON: every transaction of the send expired unmined, long enough ago to be sure.
      await this.#replace(send, latest, 'broadcast');
      return;
    }
    if (wallet.usesNonces && this.#stuck(latest)) {
      // EVM: the same nonce with higher fees, whether the node holds the transaction or lost it.
      await this.#replace(send, latest, 'broadcast');
      return;
    }
    const expired = latest.expires_at !== null && head.timestamp > latest.expires_at;
    if (fates.get(latest.tx_hash)?.state === 'unknown' && !expired) {
      // The node lost it (a pool that dropped it, another node behind a balancer): the same transaction again.
      try {
        await wallet.broadcast(signedOf(latest));
        this.#metrics?.sends.inc({ chain: this.chain, outcome: 'rebroadcast' });
      } catch (error) {
        if (!(error instanceof BroadcastRejected)) throw error;
        if (error.reason === 'other')
          logger.warn(
            { chain: this.chain, orderId: send.order_id, reason: error.message },
            'a rebroadcast was refused',
          );
      }
    }
  }

  /** Signs a replacement (the same nonce with higher fees, or a fresh TRON transaction once the last expired) and broadcasts it. */
  async #replace(send: q.ChainSendRow, latest: q.ChainSendAttemptRow, from: 'signed' | 'broadcast'): Promise<void> {
    const { store, wallet, clock, logger } = this.deps;
    const prepared = await wallet.prepare({
      to: send.to_address,
      units: BigInt(send.units),
      replacing: signedOf(latest),
    });
    if (prepared === undefined) {
      logger.warn(
        { chain: this.chain, orderId: send.order_id, hash: latest.tx_hash },
        'a token send is stuck with its fees at the ceiling; it waits to be mined',
      );
      return;
    }
    const transaction = prepared.sign(latest.nonce === null ? null : BigInt(latest.nonce));
    const now = clock.now();
    await store.transact(async (tx) => {
      await this.#mustHoldLease(tx);
      // Only in place of the transaction this node looked at: otherwise nothing is stored, nothing broadcast.
      if (
        !(await q.updateChainSend(
          tx,
          send.order_id,
          from,
          { tx_hash: transaction.hash, updated_at: now },
          latest.tx_hash,
        ))
      )
        throw new Error(`the send of ${send.order_id} moved on while its replacement was signed`);
      await q.insertChainSendAttempt(tx, attemptRow(send, transaction, now));
      if (latest.outcome === null) await q.updateChainSendAttempt(tx, latest.tx_hash, { outcome: 'replaced' });
    });
    this.#metrics?.sends.inc({ chain: this.chain, outcome: 'replaced' });
    logger.warn(
      { chain: this.chain, orderId: send.order_id, replaced: latest.tx_hash, hash: transaction.hash },
      'a token send was not mined in time: it is replaced',
    );
    if (from === 'signed') return;
    try {
      await wallet.broadcast(transaction);
    } catch (error) {
      // Unknown or refused: the next run asks for it and broadcasts it again.
      logger.warn(
        { err: error, chain: this.chain, orderId: send.order_id },
        'the replacement’s broadcast did not go through',
      );
      return;
    }
    await store.transact((tx) => q.updateChainSendAttempt(tx, transaction.hash, { broadcast_at: clock.now() }));
  }

  async #recordOutcome(hash: string, outcome: string): Promise<void> {
    await this.deps.store.transact((tx) => q.updateChainSendAttempt(tx, hash, { outcome: outcome.slice(0, 300) }));
  }

  async #end(send: q.ChainSendRow, state: 'failed' | 'cancelled', why: string, outcome: string): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.store.transact((tx) =>
      q.updateChainSend(tx, send.order_id, send.state, { state, failure: why.slice(0, 500), updated_at: now }),
    );
    this.#metrics?.sends.inc({ chain: this.chain, outcome });
  }
}

function attemptRow(send: q.ChainSendRow, signed: SignedSend, now: number): q.ChainSendAttemptRow {
  return {
    tx_hash: signed.hash,
    order_id: send.order_id,
    chain: send.chain,
    nonce: signed.nonce === null ? null : Number(signed.nonce),
    raw: signed.raw,
    max_fee: signed.maxFee?.toString() ?? null,
    priority_fee: signed.priorityFee?.toString() ?? null,
    expires_at: signed.expiresAt,
    created_at: now,
    broadcast_at: null,
    outcome: null,
  };
}

function signedOf(attempt: q.ChainSendAttemptRow): SignedSend {
  return {
    hash: attempt.tx_hash,
    raw: attempt.raw,
    nonce: attempt.nonce === null ? null : BigInt(attempt.nonce),
    maxFee: attempt.max_fee === null ? null : BigInt(attempt.max_fee),
    priorityFee: attempt.priority_fee === null ? null : BigInt(attempt.priority_fee),
    expiresAt: attempt.expires_at,
  };
}
