import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { processMerchant, startCrashRig, type CrashRig } from './support/crash-rig.js';
import { databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { DARAJA_SECOND_APP, darajaNodeEnv, startFakeDaraja, type FakeDaraja } from './support/fake-daraja.js';
import { ADMIN_TOKEN, signedCall } from './support/gateway.js';
import { adminCall, runCli, startServerProcess, type ServerProcess } from './support/process.js';
import { sleep, startReceiver, until, type CallbackReceiver } from './support/receiver.js';

/**
 * Nodes that die, stop or stall, as real processes: a Kenya payout's hand-over to Daraja (a local
 * fake) is the work a node holds under a lease. Daraja's token request is held unanswered, so the
 * node that committed the orders holds their hand-overs without having reached Daraja when it is
 * killed or paused. That node speaks to Daraja as a second app, so that only its token request is held
 * (another node's, a reconciliation asking about an earlier test's payouts, is answered). RAIL_LEASE_MS
 * keeps its default (60 s): whatever is taken up sooner was freed because its node was found dead (or
 * started again), not because the lease ran out.
 */
const TRANSFER = '/api/v3/ken/createTransferOrder';
const NEEDS_POSTGRES = 'needs PostgreSQL: on SQLite one data directory is one node (set TEST_DATABASE_URL)';
/** Orders each test commits on the node it then kills or pauses. */
const ORDERS = 10;

let phoneSeq = 500;
const nextPhone = () => `2547${String(20_000_000 + ++phoneSeq).slice(-8)}`;

const admin = (server: ServerProcess, method: string, path: string) => adminCall(server, ADMIN_TOKEN, method, path);

/** A counter's value on a node's /metrics (0 when the series does not exist yet). */
async function metric(server: ServerProcess, series: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', server.url))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const freedDead = (server: ServerProcess) =>
  metric(server, 'cashgate_leases_freed_total{kind="rail_hand_over",reason="dead"}');

interface NodeView {
  id: string;
  pid: number;
  state: string;
  lastHeartbeatAt: number;
  leases: Record<string, number>;
}

async function nodesSeenBy(server: ServerProcess): Promise<NodeView[]> {
  const answer = await admin(server, 'GET', '/admin/v1/nodes');
  assert.equal(answer.status, 200);
  return answer.body.nodes as NodeView[];
}

describe(`nodes that die, stop or stall (${databaseLabel})`, () => {
  let daraja: FakeDaraja;
  let receiver: CallbackReceiver;
  let rig: CrashRig;

  before(async () => {
    daraja = await startFakeDaraja();
    receiver = await startReceiver();
    rig = await startCrashRig('nodes');
  });
  afterEach(() => rig.killAll());
  after(async () => {
    await daraja.close();
    await receiver.close();
    await rig.close();
  });

  /** A node's environment: Daraja behind the fake, default leases (RAIL_LEASE_MS is not set). */
  const nodeEnv = (extra: Record<string, string> = {}) => {
    const shared: Record<string, string> = { ...rig.env };
    delete shared.RAIL_LEASE_MS;
    return darajaNodeEnv(daraja, shared, extra);
  };

  /** A merchant made through `node`, with a float for its payouts. */
  const merchantOn = (node: ServerProcess) =>
    processMerchant(node, { callbackUrl: `${receiver.url}/cb`, currency: 'KES', amount: '100000' });

  /**
   * Two nodes on the database: `other`, through which the merchant is made, and `held`, which
   * commits the payouts whose hand-overs it then holds (as `heldView` is seen by `other`).
   */
  const twoNodes = async (heldExtra: Record<string, string> = {}) => {
    const other = await rig.start(await nodeEnv());
    const held = await rig.start(await nodeEnv({ ...DARAJA_SECOND_APP, ...heldExtra }));
    const { credentials } = await merchantOn(other);
    const payees = await commitHeldPayouts(held, credentials);
    const heldView = (await nodesSeenBy(other)).find((n) => n.pid === held.child.pid);
    assert.ok(heldView !== undefined);
    return { other, held, payees, heldView };
  };

  /**
   * Commits `ORDERS` payouts on `node` (started with DARAJA_SECOND_APP) whose hand-overs it holds
   * without reaching Daraja (the token request its first one makes is held); answers their payees.
   */
  const commitHeldPayouts = async (node: ServerProcess, credentials: { accessKey: string; secretKey: string }) => {
    const from = daraja.requests.length;
    daraja.failNext('oauth', 'timeout', 1, DARAJA_SECOND_APP.DARAJA_CONSUMER_KEY);
    const payees = Array.from({ length: ORDERS }, nextPhone);
    const tag = Date.now();
    for (const [i, payee] of payees.entries()) {
      const created = await signedCall(
        node.url,
        credentials,
        {
          path: TRANSFER,
          body: { channelType: 'BANK', currencyAmount: '100', externalOrderId: `node-${tag}-${i}`, phone: payee },
        },
        Date.now(),
      );
      assert.equal(created.body.code, '200', JSON.stringify(created.body));
    }
    await until(() => assert.ok(daraja.requests.slice(from).some((r) => r.endpoint === 'oauth' && r.status === 0)));
    return payees;
  };

  const payoutsTo = (payees: readonly string[]) =>
    daraja.requests.filter((r) => r.endpoint === 'b2c' && payees.includes(String(r.body.PartyB)));

  /** Waits until every payee's payout reached Daraja; answers how long that took. */
  const waitForPayouts = async (payees: readonly string[], timeoutMs: number) => {
    const started = Date.now();
    await until(() => {
      const reached = new Set(payoutsTo(payees).map((r) => String(r.body.PartyB)));
      assert.equal(reached.size, payees.length, `${reached.size} of ${payees.length} payouts reached Daraja`);
    }, timeoutMs);
    return Date.now() - started;
  };

  it(
    'refuses a second node on one SQLite data directory, and lets one-off commands run beside it',
    { skip: TEST_DATABASE_URL !== undefined && 'a SQLite rule' },
    async () => {
      await rig.start(await nodeEnv());
      /** What a second process on the directory printed when it was refused (undefined if it started). */
      const refusal = async (command: 'serve' | 'worker') =>
        startServerProcess(await nodeEnv(), command).then(
          async (server) => {
            await server.kill();
            return undefined;
          },
          (error: unknown) => String(error),
        );
      for (const command of ['serve', 'worker'] as const) {
        const refused = await refusal(command);
        assert.ok(refused !== undefined, `a second ${command} process did not start`);
        assert.match(refused, /"code":"data_dir_in_use"/, command);
        assert.match(
          refused,
          /is in use by another Cashgate node \(pid \d+ on .+\): on SQLite one data directory serves/,
          command,
        );
      }
      const listed = await runCli(['merchant', 'list'], await nodeEnv());
      assert.equal(listed.code, 0, listed.stderr);
    },
  );

  it('a node killed and started again hands over every order its predecessor committed, without waiting for the lease', async () => {
    const env = await nodeEnv(DARAJA_SECOND_APP);
    const first = await rig.start(env);
    const { credentials } = await merchantOn(first);
    const payees = await commitHeldPayouts(first, credentials);
    const firstId = (await nodesSeenBy(first)).find((n) => n.pid === first.child.pid)?.id;
    await rig.crash(first);
    assert.equal(payoutsTo(payees).length, 0, 'none reached Daraja before the kill');

    const restarted = await rig.start(env);
    // Far below the 60 s lease: the predecessor's leases were freed when the successor started
    // (SQLite) or when its heartbeat was found stopped (PostgreSQL).
    const ms = await waitForPayouts(payees, TEST_DATABASE_URL === undefined ? 15_000 : 30_000);
    process.stdout.write(`# ${ORDERS} hand-overs taken up ${ms} ms after the restarted node was ready\n`);
    assert.ok((await freedDead(restarted)) >= ORDERS, 'freed as a dead node’s, not expired');
    await sleep(1_000);
    const counts = new Map<string, Set<string>>();
    for (const r of payoutsTo(payees)) {
      const set = counts.get(String(r.body.PartyB)) ?? new Set();
      set.add(String(r.body.OriginatorConversationID));
      counts.set(String(r.body.PartyB), set);
    }
    assert.ok(
      [...counts.values()].every((ids) => ids.size === 1),
      'each payout under one OriginatorConversationID',
    );
    assert.equal(
      daraja.payouts.filter((p) => payees.includes(String(p.body.PartyB))).length,
      ORDERS,
      'each payee paid once',
    );
    const nodes = await nodesSeenBy(restarted);
    assert.equal(nodes.find((n) => n.id === firstId)?.state, 'dead');
    assert.deepEqual(nodes.find((n) => n.id === firstId)?.leases, {});
  });

  it('a node stopped with SIGTERM while its hand-overs wait releases them within SHUTDOWN_GRACE_MS, and the next node takes them at once', async () => {
    const env = await nodeEnv({ ...DARAJA_SECOND_APP, SHUTDOWN_GRACE_MS: '3000' });
    const first = await rig.start(env);
    const { credentials } = await merchantOn(first);
    const payees = await commitHeldPayouts(first, credentials);
    const firstId = (await nodesSeenBy(first)).find((n) => n.pid === first.child.pid)?.id;
    const code = await first.stop();
    assert.equal(code, 0);
    assert.match(first.output(), /work in flight did not finish within SHUTDOWN_GRACE_MS/);
    assert.match(first.output(), /"released":10[,}]/, 'its ten hand-overs released');
    assert.equal(payoutsTo(payees).length, 0);

    const next = await rig.start(env);
    const ms = await waitForPayouts(payees, 15_000);
    process.stdout.write(`# ${ORDERS} released hand-overs taken up ${ms} ms after the next node was ready\n`);
    assert.equal(await freedDead(next), 0, 'nothing had to be found dead');
    const seen = (await nodesSeenBy(next)).find((n) => n.id === firstId);
    assert.equal(seen?.state, 'gone');
  });

  it(
    'two nodes, one killed: the survivor finds it dead and takes up its hand-overs',
    { skip: TEST_DATABASE_URL === undefined && NEEDS_POSTGRES },
    async () => {
      const { other: survivor, held: doomed, payees, heldView } = await twoNodes();
      const killedAt = Date.now();
      await rig.crash(doomed);
      await waitForPayouts(payees, 40_000);
      process.stdout.write(`# the survivor took up ${ORDERS} hand-overs ${Date.now() - killedAt} ms after the kill\n`);
      assert.ok((await freedDead(survivor)) >= ORDERS);
      const seen = (await nodesSeenBy(survivor)).find((n) => n.id === heldView.id);
      assert.equal(seen?.state, 'dead');
    },
  );

  it(
    'a node paused for 8 s keeps its leases, and nothing is done twice',
    { skip: TEST_DATABASE_URL === undefined && NEEDS_POSTGRES },
    async () => {
      // Its hand-overs wait for Daraja's token, which comes 30 s after it was asked for: after the
      // pause and the checks that follow it; then they go on from where they were.
      const { other, held: paused, payees, heldView: before } = await twoNodes({ DARAJA_TIMEOUT_MS: '45000' });
      assert.equal(before.leases.rail_hand_over, ORDERS);
      // Paused right after a heartbeat: 8 s of silence, under the 10 s dead limit.
      await until(async () => {
        const now = (await nodesSeenBy(other)).find((n) => n.id === before.id);
        assert.ok(now !== undefined && now.lastHeartbeatAt > before.lastHeartbeatAt);
      });
      paused.child.kill('SIGSTOP');
      await sleep(8_000);
      paused.child.kill('SIGCONT');
      await sleep(3_000);
      const after = await nodesSeenBy(other);
      assert.equal(after.find((n) => n.id === before.id)?.state, 'alive', 'not declared dead');
      assert.equal(after.find((n) => n.id === before.id)?.leases.rail_hand_over, ORDERS, 'its leases are its own');
      assert.equal(await freedDead(other), 0);
      assert.equal(payoutsTo(payees).length, 0, 'no one else sent them');
      // The paused node's own attempts go on: each payout reaches Daraja once.
      await waitForPayouts(payees, 40_000);
      await sleep(1_000);
      assert.equal(payoutsTo(payees).length, ORDERS, 'one request per payout');
    },
  );

  it(
    'a node paused past the dead limit loses its leases, and records nothing with them when it wakes',
    { skip: TEST_DATABASE_URL === undefined && NEEDS_POSTGRES },
    async () => {
      // Daraja answers the paused node's token request only after it was declared dead.
      const { other, held: paused, payees, heldView } = await twoNodes();
      const pausedId = heldView.id;
      paused.child.kill('SIGSTOP');
      await waitForPayouts(payees, 40_000);
      assert.ok((await freedDead(other)) >= ORDERS, 'freed as a dead node’s');
      const taken = payoutsTo(payees).length;
      paused.child.kill('SIGCONT');
      await until(() => assert.match(paused.output(), /this node was declared dead/), 10_000);
      await sleep(3_000);
      const nodes = await nodesSeenBy(other);
      assert.equal(nodes.find((n) => n.id === pausedId)?.state, 'dead');
      const rejoined = nodes.find((n) => n.pid === paused.child.pid && n.state === 'alive');
      assert.ok(rejoined !== undefined && rejoined.id !== pausedId, 'rejoined under a new id');
      // Whatever the woken node still sent carried the same OriginatorConversationID: Daraja paid each once.
      assert.equal(
        daraja.payouts.filter((p) => payees.includes(String(p.body.PartyB))).length,
        ORDERS,
        `each payee paid once (${taken} requests before the wake)`,
      );
      assert.doesNotMatch(paused.output(), /"msg":"worked hand-overs/, 'the woken node took no hand-over');
    },
  );
});
