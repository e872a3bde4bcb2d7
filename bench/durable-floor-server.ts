// The bench's durable floor: the bare floor's signature check, then one prepared insert into SQLite
// with Cashgate's pragmas (WAL, synchronous=FULL) and Cashgate's group commit (the requests of one
// turn of the event loop in one transaction, each in its own savepoint), answered after its commit.
// What a durable create costs on one event loop with nothing else: no validation, no log, one row.
// It keeps synchronous=FULL, as the floor was defined, with SQLite's flush inside COMMIT on the event
// loop; Cashgate itself flushes the WAL off the event loop (src/store/wal-sync.ts), with the same
// guarantee.
// Run as a child of the bench; it prints its address on the first line of stdout. FLOOR_ACCESS_KEY
// and FLOOR_SECRET_KEY name the one key; FLOOR_DATA_DIR is where the database file goes.
import { join } from 'node:path';
import { signString, signsEqual, stringToSign } from '@cashgate/sdk';
import SqliteDatabase from 'better-sqlite3';
import Fastify from 'fastify';

const accessKey = process.env.FLOOR_ACCESS_KEY ?? '';
const secretKey = process.env.FLOOR_SECRET_KEY ?? '';
const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : '');

const database = new SqliteDatabase(join(process.env.FLOOR_DATA_DIR ?? '.', 'durable-floor.sqlite'));
database.pragma('journal_mode = WAL');
database.pragma('synchronous = FULL');
database.pragma('foreign_keys = ON');
database.pragma('busy_timeout = 5000');
database.exec(`create table if not exists orders (
  id integer primary key,
  external_order_id text not null unique,
  amount text not null,
  created_at integer not null
)`);
const begin = database.prepare('begin immediate');
const commit = database.prepare('commit');
const insert = database.prepare('insert into orders (external_order_id, amount, created_at) values (?, ?, ?)');

interface Unit {
  externalOrderId: string;
  amount: string;
  done(ok: boolean): void;
}
let queue: Unit[] = [];
let scheduled = false;

/** One group commit: every queued unit in its own savepoint, one COMMIT, then every caller answered. */
function groupCommit(): void {
  scheduled = false;
  const units = queue;
  queue = [];
  const outcomes: boolean[] = [];
  begin.run();
  for (const [n, unit] of units.entries()) {
    database.exec(`savepoint unit_${n}`);
    try {
      insert.run(unit.externalOrderId, unit.amount, Date.now());
      database.exec(`release unit_${n}`);
      outcomes.push(true);
    } catch {
      database.exec(`rollback to unit_${n}; release unit_${n}`);
      outcomes.push(false);
    }
  }
  commit.run();
  units.forEach((unit, n) => unit.done(outcomes[n] === true));
}

function durably(externalOrderId: string, amount: string): Promise<boolean> {
  return new Promise((resolve) => {
    queue.push({ externalOrderId, amount, done: resolve });
    if (!scheduled) {
      scheduled = true;
      setImmediate(groupCommit);
    }
  });
}

const app = Fastify({ logger: false });
app.post('/floor', async (request, reply) => {
  const body = request.body as Record<string, unknown>;
  const headers = {
    access_key: header(request.headers.access_key),
    timestamp: header(request.headers.timestamp),
    nonce: header(request.headers.nonce),
  };
  const expected = signString(secretKey, stringToSign(body, headers));
  if (headers.access_key !== accessKey || !signsEqual(expected, header(request.headers.sign))) {
    return reply
      .code(401)
      .send({ code: '307', success: false, msg: 'sign mismatch', msgEn: 'sign mismatch', data: null });
  }
  const stored = await durably(String(body.externalOrderId), String(body.amount));
  return reply
    .code(stored ? 200 : 409)
    .send({ code: stored ? '200' : '303', success: stored, msg: 'success', msgEn: 'success', data: null });
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(address);
