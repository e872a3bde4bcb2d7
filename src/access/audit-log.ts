/**
 * The audit log of staff actions. A record is written in the same unit of work as the change it
 * records (no change without its record, no record of a change that rolled back), and each record
 * carries the SHA-256 of the one before over a canonical form, so an edited, deleted or re-ordered
 * record breaks the chain where it happened.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { newId } from '../store/ids.js';
import type { ReadDb, Store, Tx } from '../store/store.js';
import { currentUnitScope, runInUnitScope, type UnitScope } from '../store/unit-scope.js';
import type { Actor } from './actor.js';
import type { AuditAction } from './permissions.js';
import * as q from './queries.js';
import { redactForAudit } from './redact.js';

/** Where the action came from (HTTP requests; the CLI has none). */
export interface RequestOrigin {
  requestId?: string | undefined;
  ip?: string | undefined;
  userAgent?: string | undefined;
}

export interface AuditEntry {
  actor: Actor;
  action: AuditAction;
  targetType?: string | undefined;
  targetId?: string | undefined;
  reason?: string | undefined;
  /** The fields that changed (before and after), or what was asked; redacted when written. */
  changes?: unknown;
  origin?: RequestOrigin | undefined;
}

/** The fields a record's hash covers, in a fixed order: everything but the hash itself. */
function canonical(row: Omit<q.AuditRow, 'hash'>): string {
  return JSON.stringify([
    row.seq,
    row.id,
    row.at,
    row.actor_type,
    row.actor_id,
    row.actor_email,
    row.action,
    row.target_type,
    row.target_id,
    row.reason,
    row.changes,
    row.request_id,
    row.ip,
    row.user_agent,
    row.prev_hash,
  ]);
}

function hashOf(row: Omit<q.AuditRow, 'hash'>): string {
  return createHash('sha256').update(canonical(row), 'utf8').digest('hex');
}

function actorColumns(actor: Actor): Pick<q.AuditRow, 'actor_type' | 'actor_id' | 'actor_email'> {
  if (actor.type === 'operator') {
    return { actor_type: 'operator', actor_id: actor.operatorId, actor_email: actor.email };
  }
  if (actor.type === 'cli') return { actor_type: 'cli', actor_id: actor.osUser, actor_email: null };
  return { actor_type: 'root-token', actor_id: null, actor_email: null };
}

function clip(value: string | undefined, max: number): string | null {
  return value === undefined ? null : value.slice(0, max);
}

/** Appends one record to the chain inside `tx` (which then holds the chain's head until it ends). */
export async function appendAudit(tx: Tx, entry: AuditEntry, at: number): Promise<string> {
  const head = await q.lockAuditHead(tx);
  const changes = entry.changes === undefined ? null : JSON.stringify(redactForAudit(entry.changes));
  const row: Omit<q.AuditRow, 'hash'> = {
    seq: head.seq + 1,
    id: newId('aud'),
    at,
    ...actorColumns(entry.actor),
    action: entry.action,
    target_type: clip(entry.targetType, 32),
    target_id: clip(entry.targetId, 200),
    reason: entry.reason ?? null,
    changes,
    request_id: clip(entry.origin?.requestId, 100),
    ip: clip(entry.origin?.ip, 64),
    user_agent: clip(entry.origin?.userAgent, 500),
    prev_hash: head.hash,
  };
  await q.appendAuditRow(tx, { ...row, hash: hashOf(row) });
  return row.id;
}

/** What a service may add to the action being recorded: its target, and the fields before and after. */
export interface AuditNote {
  action?: AuditAction;
  targetType?: string;
  targetId?: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/** The fields of `after` that differ from `before` (both sides), or undefined when neither was noted. */
function changedFields(
  before: Record<string, unknown> | null | undefined,
  after: Record<string, unknown> | null | undefined,
): { before: Record<string, unknown> | null; after: Record<string, unknown> | null } | undefined {
  if (before === undefined && after === undefined) return undefined;
  if (before === null || before === undefined || after === null || after === undefined) {
    return { before: before ?? null, after: after ?? null };
  }
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const changed = [...keys].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  return {
    before: Object.fromEntries(changed.map((k) => [k, before[k] ?? null])),
    after: Object.fromEntries(changed.map((k) => [k, after[k] ?? null])),
  };
}

/** Writes one record in a unit of work of its own: an action that changed nothing (a refusal, a reveal, a read). */
export function recordAuditAlone(store: Store, clock: Clock, entry: AuditEntry): Promise<string> {
  return store.transact((tx) => appendAudit(tx, entry, clock.now()));
}

/**
 * One staff action in progress: joined to the units of work it begins, it writes its record in the
 * first of them, just before that unit commits. If none committed with it (an action that wrote
 * nothing, or whose first unit rolled back and was retried), `run` writes it alone at the end.
 */
export class AuditScope implements UnitScope {
  #written = false;
  #claimed = false;
  #note: AuditNote = {};

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly entry: AuditEntry,
  ) {}

  note(note: AuditNote): void {
    this.#note = { ...this.#note, ...note };
  }

  /** The record as it stands now. */
  #entry(): AuditEntry {
    const note = this.#note;
    const changes = changedFields(note.before, note.after);
    return {
      ...this.entry,
      ...(note.action !== undefined && { action: note.action }),
      ...(note.targetType !== undefined && { targetType: note.targetType }),
      ...(note.targetId !== undefined && { targetId: note.targetId }),
      ...(changes !== undefined && { changes }),
    };
  }

  async beforeCommit(tx: Tx): Promise<void> {
    if (this.#written || this.#claimed) return;
    this.#claimed = true;
    await appendAudit(tx, this.#entry(), this.clock.now());
  }

  committed(): void {
    this.#written = true;
  }

  /** Runs the action's work in this scope, then makes sure its record is written. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const result = await runInUnitScope(this, work);
    if (!this.#written) {
      // Outside the scope: this unit is the record's own.
      await recordAuditAlone(this.store, this.clock, this.#entry());
      this.#written = true;
    }
    return result;
  }
}

/** Adds to the staff action being recorded, if the caller runs in one (a no-op otherwise). */
export function noteAudit(note: AuditNote): void {
  const scope = currentUnitScope();
  if (scope instanceof AuditScope) scope.note(note);
}

export type VerifyResult =
  { ok: true; entries: number } | { ok: false; firstBadEntry: string | null; reason: string; entries: number };

/**
 * Walks the chain from the start: each record's hash must be that of its canonical form, its
 * `prev_hash` the hash of the record before, its sequence number one more; the head must name the last.
 */
export async function verifyAuditLog(db: ReadDb, batch = 1000): Promise<VerifyResult> {
  let prevHash = '0'.repeat(64);
  let prevSeq = 0;
  let entries = 0;
  for (;;) {
    const rows = await q.auditRowsAfter(db, prevSeq, batch);
    for (const row of rows) {
      const seq = row.seq;
      const { hash, ...rest } = row;
      if (seq !== prevSeq + 1) {
        return {
          ok: false,
          firstBadEntry: row.id,
          reason: `record ${seq} follows record ${prevSeq}: ${seq - prevSeq - 1} record(s) before it are missing`,
          entries,
        };
      }
      if (row.prev_hash !== prevHash) {
        return {
          ok: false,
          firstBadEntry: row.id,
          reason: `record ${seq} does not name the hash of the record before it (deleted, re-ordered or edited)`,
          entries,
        };
      }
      if (hashOf(rest) !== hash) {
        return { ok: false, firstBadEntry: row.id, reason: `record ${seq} was changed after it was written`, entries };
      }
      prevHash = hash;
      prevSeq = seq;
      entries += 1;
    }
    if (rows.length < batch) break;
  }
  const head = await q.auditHead(db);
  if (head === undefined || head.seq !== prevSeq || head.hash !== prevHash) {
    return {
      ok: false,
      firstBadEntry: null,
      reason: `the chain's head names record ${head?.seq ?? '?'} but the log ends at record ${prevSeq}: records at the end were deleted`,
      entries,
    };
  }
  return { ok: true, entries };
}

/**
 * The records of `filter` as JSON lines, oldest first, a batch at a time (never the whole log in
 * memory): what `cashgate audit-log export` prints and the back office downloads.
 */
export async function* auditJsonLines(
  db: ReadDb,
  filter: Omit<q.AuditFilter, 'afterSeq' | 'beforeSeq'>,
  batch = 1_000,
): AsyncGenerator<string> {
  let afterSeq = 0;
  for (;;) {
    const rows = await q.findAuditRows(db, { ...filter, afterSeq }, batch, 'oldest');
    if (rows.length > 0) yield `${rows.map((r) => JSON.stringify(auditView(r))).join('\n')}\n`;
    const last = rows.at(-1);
    if (last === undefined || rows.length < batch) return;
    afterSeq = last.seq;
  }
}

/** An ISO 8601 date or date-time (the audit log's `from` and `to`) as Unix milliseconds; undefined when it is none. */
export function parseIsoTime(value: string): number | undefined {
  const ms = Date.parse(value);
  return /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(ms) ? ms : undefined;
}

/** A record as the API and the export show it. */
export function auditView(row: q.AuditRow) {
  return {
    id: row.id,
    seq: row.seq,
    at: new Date(row.at).toISOString(),
    actor: {
      type: row.actor_type,
      id: row.actor_id,
      email: row.actor_email,
    },
    action: row.action,
    target: row.target_type === null ? null : { type: row.target_type, id: row.target_id },
    reason: row.reason,
    changes: row.changes === null ? null : (JSON.parse(row.changes) as unknown),
    requestId: row.request_id,
    ip: row.ip,
    userAgent: row.user_agent,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}
