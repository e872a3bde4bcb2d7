/**
 * Operators: roles against every admin route, personal tokens (revoked everywhere at once), the root
 * token (audited, and off with ADMIN_ROOT_TOKEN_DISABLED), four-eyes balance adjustments, and the
 * audit log (written with its change or not at all; a hash chain that finds edits, deletions and swaps).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { verifyAuditLog } from '../src/access/audit-log.js';
import {
  ADMIN_ROUTE_ACCESS,
  CLI_COMMAND_ACCESS,
  PERMISSIONS,
  ROLE_PERMISSIONS,
  ROLES,
  type Role,
} from '../src/access/permissions.js';
import { maskPersonalData, redactForAudit } from '../src/access/redact.js';
import { OPERATOR_COMMANDS } from '../src/cli/commands.js';
import { OPERATOR_ACCOUNT_COMMANDS } from '../src/cli/operator-commands.js';
import { databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from './support/gateway.js';
import { adminCall, runCli } from './support/process.js';

const PASSWORD = 'a long operator password';

/** The value, which the test expects to be there. */
function must<T>(value: T | undefined | null, what: string): T {
  assert.ok(value !== undefined && value !== null, `${what} is missing`);
  return value;
}

/** An operator of `role` and a personal token of theirs. */
async function operatorWithToken(gw: TestGateway, role: Role, email = `${role}-${Math.random()}@ops.example`) {
  const created = await gw.gateway.operators.create({ email, role, password: PASSWORD });
  const token = await gw.gateway.operators.createToken({ email });
  return { ...created, token: token.token, tokenId: token.tokenId };
}

/** Runs SQL on the gateway's database from outside it, as someone with database access could. */
async function rawSql(gw: TestGateway, statements: readonly string[]): Promise<void> {
  if (gw.databaseUrl === undefined) {
    const db = new Database(join(gw.dataDir, 'cashgate.sqlite'));
    try {
      for (const statement of statements) db.exec(statement);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: gw.databaseUrl });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

async function auditRows(gw: TestGateway) {
  return gw.gateway.store.read.selectFrom('audit_log').selectAll().orderBy('seq').execute();
}

function cliEnv(gw: TestGateway): Record<string, string> {
  return {
    CASHGATE_DATA_DIR: gw.dataDir,
    LOG_LEVEL: 'silent',
    ...(gw.databaseUrl !== undefined && { DATABASE_URL: gw.databaseUrl }),
  };
}

/** A concrete path for an OpenAPI path template (ids that exist nowhere). */
function concrete(path: string): string {
  return path.replace(/\{[^}]+\}/g, (param) =>
    param === '{currency}' ? 'BRL' : param === '{token}' ? 'USDT' : 'does_not_exist',
  );
}

describe(`operators: every role against every admin route (${databaseLabel})`, () => {
  let gw: TestGateway;
  const tokens: Partial<Record<Role, string>> = {};
  before(async () => {
    gw = await startTestGateway({ workers: false });
    for (const role of ROLES) tokens[role] = (await operatorWithToken(gw, role)).token;
  });
  after(() => gw.close());

  it('declares a permission for every admin route in /openapi.json, and every declared route exists', async () => {
    const doc = (await (await fetch(new URL('/openapi.json', gw.url))).json()) as any;
    const served = new Set<string>();
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      if (!path.startsWith('/admin/')) continue;
      for (const [method, op] of Object.entries<any>(methods)) {
        const key = `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`;
        served.add(key);
        const access = must(Object.hasOwn(ADMIN_ROUTE_ACCESS, key) ? ADMIN_ROUTE_ACCESS[key] : undefined, key);
        assert.equal(op['x-permission'], access.permission, `${key}: x-permission`);
        assert.deepEqual(
          op['x-roles'],
          ROLES.filter((r) => ROLE_PERMISSIONS[r].includes(access.permission)),
        );
      }
    }
    // The Pix routes exist only with BRAZIL_RAIL=apipix (test/brazil-apipix.test.ts serves them).
    const unserved = Object.keys(ADMIN_ROUTE_ACCESS).filter((k) => !served.has(k) && !k.includes('/pix/'));
    assert.deepEqual(unserved, [], 'routes declared but not served');
  });

  it('documents the same roles, permissions and routes as the table in src/access/permissions.ts', () => {
    const doc = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    for (const [permission, what] of Object.entries(PERMISSIONS)) {
      const marks = ROLES.map((r) => ((ROLE_PERMISSIONS[r] as readonly string[]).includes(permission) ? '✓' : '')).join(
        ' | ',
      );
      assert.ok(doc.includes(`| \`${permission}\` | ${what} | ${marks} |`), `docs: the row of ${permission}`);
    }
    for (const [route, access] of Object.entries(ADMIN_ROUTE_ACCESS)) {
      const path = route.replace(/:([A-Za-z][A-Za-z0-9]*)/g, '{$1}');
      const action = access.action === undefined ? '' : `\`${access.action}\``;
      assert.ok(doc.includes(`| \`${path}\` | \`${access.permission}\` | ${action} |`), `docs: the row of ${route}`);
    }
  });

  it('declares a permission for every operator command', () => {
    const commands = Object.keys({ ...OPERATOR_COMMANDS, ...OPERATOR_ACCOUNT_COMMANDS }).sort();
    assert.deepEqual(Object.keys(CLI_COMMAND_ACCESS).sort(), commands);
  });

  it('lets each role call exactly the routes its permissions allow, and names the role and permission it lacks', async () => {
    const doc = (await (await fetch(new URL('/openapi.json', gw.url))).json()) as any;
    const checked: string[] = [];
    const denied: string[] = [];
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      if (!path.startsWith('/admin/')) continue;
      for (const [method, op] of Object.entries<any>(methods)) {
        const permission = op['x-permission'] as string;
        for (const role of ROLES) {
          const res = await adminCall(
            gw,
            must(tokens[role], role),
            method.toUpperCase(),
            concrete(path),
            method === 'get' ? undefined : {},
          );
          const allowed = (ROLE_PERMISSIONS[role] as readonly string[]).includes(permission);
          const label = `${role} ${method.toUpperCase()} ${path}`;
          if (allowed) {
            assert.ok(
              !(res.status === 403 && res.body?.error?.code === 'forbidden'),
              `${label} was refused: ${JSON.stringify(res.body)}`,
            );
            assert.ok(res.status < 500, `${label}: ${res.status} ${JSON.stringify(res.body)}`);
          } else {
            assert.equal(res.status, 403, `${label}: ${JSON.stringify(res.body)}`);
            assert.equal(res.body.error.code, 'forbidden');
            assert.equal(res.body.error.role, role);
            assert.equal(res.body.error.permission, permission);
            assert.match(res.body.error.message, new RegExp(`role ${role}.*lacks permission ${permission}`));
            denied.push(`${role} ${method.toUpperCase()} ${concrete(path)}`);
          }
          checked.push(label);
        }
      }
    }
    assert.ok(checked.length >= ROLES.length * 35, `only ${checked.length} checks`);
    // Every refusal is in the audit log: who tried which route.
    const refusals = (await auditRows(gw)).filter((r) => r.action === 'access.denied');
    assert.deepEqual(
      refusals.map((r) => `${r.actor_email?.split('-')[0] ?? ''} ${r.target_id ?? ''}`),
      denied,
    );
    // Nothing changed: every write was refused or failed its checks.
    const merchants = await adminCall(gw, ADMIN_TOKEN, 'GET', '/admin/v1/merchants');
    assert.deepEqual(merchants.body.merchants, []);
  });

  it('refuses unknown, revoked and expired tokens and tokens of a disabled operator', async () => {
    const support = await operatorWithToken(gw, 'support');
    assert.equal((await adminCall(gw, support.token, 'GET', '/admin/v1/nodes')).status, 200);
    assert.equal((await adminCall(gw, `${support.token}x`, 'GET', '/admin/v1/nodes')).status, 401);

    await gw.gateway.operators.setEnabled(support.email, false);
    assert.equal((await adminCall(gw, support.token, 'GET', '/admin/v1/nodes')).status, 401);
    await gw.gateway.operators.setEnabled(support.email, true);
    assert.equal((await adminCall(gw, support.token, 'GET', '/admin/v1/nodes')).status, 200);

    const shortLived = await gw.gateway.operators.createToken({ email: support.email, expiresDays: 1 });
    assert.equal((await adminCall(gw, shortLived.token, 'GET', '/admin/v1/nodes')).status, 200);
    gw.clock.advance(86_400_000 + 1);
    const expired = await adminCall(gw, shortLived.token, 'GET', '/admin/v1/nodes');
    assert.equal(expired.status, 401);
    assert.equal(expired.body.error.code, 'unauthorized');
  });
});

describe(`operators: personal tokens revoked, root token audited and disabled (${databaseLabel})`, () => {
  let gw: TestGateway;
  let second: TestGateway | undefined;
  before(async () => {
    gw = await startTestGateway();
    // A second node on the same database (PostgreSQL: on SQLite one data directory is one node, and
    // the CLI, another process, stands in for it).
    if (TEST_DATABASE_URL !== undefined) second = await startTestGateway({ sameDatabaseAs: gw, workers: false });
  });
  after(async () => {
    await second?.close();
    await gw.close();
  });

  it('refuses a token revoked by another process on every node at once', async () => {
    const admin = await operatorWithToken(gw, 'admin', 'ada@ops.example');
    const nodes = [gw, ...(second === undefined ? [] : [second])];
    for (const node of nodes)
      assert.equal((await adminCall(node, admin.token, 'GET', '/admin/v1/merchants')).status, 200);
    const revoked = await runCli(['operator', 'token', 'revoke', '--token-id', admin.tokenId], cliEnv(gw));
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(JSON.parse(revoked.stdout).tokenId, admin.tokenId);
    assert.notEqual(JSON.parse(revoked.stdout).revokedAt, null);
    for (const node of nodes) {
      const res = await adminCall(node, admin.token, 'GET', '/admin/v1/merchants');
      assert.equal(res.status, 401, `${node.url} still takes the revoked token`);
    }
    const record = must(
      (await auditRows(gw)).find((r) => r.action === 'operator.token.revoke'),
      'record',
    );
    assert.equal(record.actor_type, 'cli');
    assert.equal(record.target_id, admin.tokenId);
  });

  it('records every use of the root token as actor root-token, reads included', async () => {
    const before = (await auditRows(gw)).length;
    const list = await adminCall(gw, ADMIN_TOKEN, 'GET', '/admin/v1/merchants');
    assert.equal(list.status, 200);
    const created = await adminCall(gw, ADMIN_TOKEN, 'POST', '/admin/v1/merchants', { name: 'Root Shop' });
    assert.equal(created.status, 200);
    const rows = (await auditRows(gw)).slice(before);
    assert.deepEqual(
      rows.map((r) => [r.actor_type, r.action, r.target_type, r.target_id]),
      [
        ['root-token', 'admin.read', 'route', 'GET /admin/v1/merchants'],
        ['root-token', 'merchant.create', 'merchant', created.body.merchantId],
      ],
    );
    const create = must(rows[1], 'the create record');
    assert.equal(create.ip, '127.0.0.1');
    assert.ok(create.request_id);
    assert.deepEqual(JSON.parse(create.changes ?? 'null'), {
      before: null,
      after: { name: 'Root Shop', language: 'en' },
    });
  });

  it('refuses the root token when ADMIN_ROOT_TOKEN_DISABLED=true, while personal tokens work', async () => {
    const locked = await startTestGateway({ env: { ADMIN_ROOT_TOKEN_DISABLED: 'true' }, workers: false });
    try {
      const root = await adminCall(locked, ADMIN_TOKEN, 'GET', '/admin/v1/merchants');
      assert.equal(root.status, 401);
      assert.equal(root.body.error.code, 'unauthorized');
      const none = await fetch(new URL('/admin/v1/merchants', locked.url));
      assert.equal(none.status, 403);
      assert.match(((await none.json()) as any).error.message, /ADMIN_ROOT_TOKEN_DISABLED/);
      const viewer = await operatorWithToken(locked, 'viewer');
      assert.equal((await adminCall(locked, viewer.token, 'GET', '/admin/v1/merchants')).status, 200);
      assert.equal((await auditRows(locked)).filter((r) => r.actor_type === 'root-token').length, 0);
    } finally {
      await locked.close();
    }
  });
});

describe(`operators: balance adjustments above APPROVAL_THRESHOLD need a second person (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchantId: string;
  let alice: Awaited<ReturnType<typeof operatorWithToken>>;
  let bob: Awaited<ReturnType<typeof operatorWithToken>>;
  let viewer: Awaited<ReturnType<typeof operatorWithToken>>;
  before(async () => {
    gw = await startTestGateway({ env: { APPROVAL_THRESHOLD: 'BRL:100,KES:5000' }, workers: false });
    merchantId = (await adminCall(gw, ADMIN_TOKEN, 'POST', '/admin/v1/merchants', { name: 'Four Eyes' })).body
      .merchantId;
    alice = await operatorWithToken(gw, 'finance', 'alice@ops.example');
    bob = await operatorWithToken(gw, 'finance', 'bob@ops.example');
    viewer = await operatorWithToken(gw, 'viewer', 'vera@ops.example');
  });
  after(() => gw.close());

  const available = async () =>
    (await adminCall(gw, ADMIN_TOKEN, 'GET', `/admin/v1/merchants/${merchantId}/balances`)).body.balances.find(
      (b: any) => b.currency === 'BRL',
    )?.available ?? '0.00';
  const adjust = (token: string, amount: string, reason?: string) =>
    adminCall(gw, token, 'POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount,
      ...(reason !== undefined && { reason }),
    });

  it('needs a reason', async () => {
    const res = await adjust(alice.token, '10.00');
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /reason/);
    assert.equal(await available(), '0.00');
  });

  it('applies an adjustment below the threshold at once', async () => {
    const res = await adjust(alice.token, '99.99', 'goodwill credit');
    assert.equal(res.status, 200);
    assert.equal(res.body.state, 'applied');
    assert.equal(res.body.balance.available, '99.99');
  });

  it('keeps one at or above the threshold pending, moving no money until someone else approves it', async () => {
    const res = await adjust(alice.token, '100.00', 'chargeback reversal');
    assert.equal(res.status, 200);
    assert.equal(res.body.state, 'pending');
    const approvalId = res.body.approval.approvalId as string;
    assert.equal(res.body.approval.requestedBy, 'alice@ops.example');
    assert.equal(await available(), '99.99');

    const own = await adminCall(gw, alice.token, 'POST', `/admin/v1/approvals/${approvalId}/approve`, {});
    assert.equal(own.status, 403);
    assert.equal(own.body.error.code, 'approval_own');
    const byViewer = await adminCall(gw, viewer.token, 'POST', `/admin/v1/approvals/${approvalId}/approve`, {});
    assert.equal(byViewer.status, 403);
    assert.equal(byViewer.body.error.code, 'forbidden');
    assert.equal(await available(), '99.99');

    const pending = await adminCall(gw, viewer.token, 'GET', '/admin/v1/approvals?state=pending');
    assert.deepEqual(
      pending.body.approvals.map((a: any) => a.approvalId),
      [approvalId],
    );

    const approved = await adminCall(gw, bob.token, 'POST', `/admin/v1/approvals/${approvalId}/approve`, {
      reason: 'checked the dispute file',
    });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(approved.body.approval.state, 'approved');
    assert.equal(approved.body.approval.decidedBy, 'bob@ops.example');
    assert.match(approved.body.approval.journalId, /^jnl_/);
    assert.equal(await available(), '199.99');

    const again = await adminCall(gw, bob.token, 'POST', `/admin/v1/approvals/${approvalId}/approve`, {});
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'approval_decided');
    assert.equal(await available(), '199.99');

    const actions = (await auditRows(gw))
      .filter((r) => r.action.startsWith('balance.adjust'))
      .map((r) => [r.action, r.actor_email, r.reason]);
    assert.deepEqual(actions, [
      ['balance.adjust', 'alice@ops.example', 'goodwill credit'],
      ['balance.adjust.request', 'alice@ops.example', 'chargeback reversal'],
      ['balance.adjust.approve', 'bob@ops.example', 'checked the dispute file'],
    ]);
  });

  it('moves nothing on a rejection, which needs a reason; the root token cannot approve its own request', async () => {
    const debit = await adjust(ADMIN_TOKEN, '-150', 'duplicate credit');
    assert.equal(debit.body.state, 'pending');
    const approvalId = debit.body.approval.approvalId as string;
    const own = await adminCall(gw, ADMIN_TOKEN, 'POST', `/admin/v1/approvals/${approvalId}/approve`, {});
    assert.equal(own.body.error.code, 'approval_own');
    const noReason = await adminCall(gw, alice.token, 'POST', `/admin/v1/approvals/${approvalId}/reject`, {});
    assert.equal(noReason.status, 400);
    const rejected = await adminCall(gw, alice.token, 'POST', `/admin/v1/approvals/${approvalId}/reject`, {
      reason: 'the credit was right',
    });
    assert.equal(rejected.body.approval.state, 'rejected');
    assert.equal(await available(), '199.99');
  });

  it('refuses to approve a debit that would now overdraw, and leaves it pending', async () => {
    const debit = await adjust(alice.token, '-500', 'clawback');
    const approvalId = debit.body.approval.approvalId as string;
    const refused = await adminCall(gw, bob.token, 'POST', `/admin/v1/approvals/${approvalId}/approve`, {});
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'insufficient_balance');
    const list = await adminCall(gw, bob.token, 'GET', '/admin/v1/approvals?state=pending');
    assert.ok(list.body.approvals.some((a: any) => a.approvalId === approvalId));
    assert.equal(await available(), '199.99');
    assert.deepEqual(await gw.auditBreaches(), []);
  });
});

describe(`operators: the audit log (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchantId: string;
  let admin: Awaited<ReturnType<typeof operatorWithToken>>;
  before(async () => {
    gw = await startTestGateway({ workers: false });
    admin = await operatorWithToken(gw, 'admin', 'root-of-trust@ops.example');
    merchantId = (await adminCall(gw, admin.token, 'POST', '/admin/v1/merchants', { name: 'Audited' })).body.merchantId;
  });
  after(() => gw.close());

  const forceAuditFailure = (action: string) =>
    rawSql(
      gw,
      gw.databaseUrl === undefined
        ? [
            `create trigger audit_fail before insert on audit_log when new.action = '${action}' begin select raise(abort, 'forced failure'); end`,
          ]
        : [
            `create function audit_fail() returns trigger language plpgsql as $$ begin if new.action = '${action}' then raise exception 'forced failure'; end if; return new; end $$`,
            'create trigger audit_fail before insert on audit_log for each row execute function audit_fail()',
          ],
    );
  const clearAuditFailure = () =>
    rawSql(
      gw,
      gw.databaseUrl === undefined
        ? ['drop trigger audit_fail']
        : ['drop trigger audit_fail on audit_log', 'drop function audit_fail()'],
    );

  it('writes a record with its change or neither: a failure after the change leaves no change and no record', async () => {
    const url = 'https://shop.example/callbacks';
    await forceAuditFailure('merchant.callback.set');
    try {
      const res = await adminCall(gw, admin.token, 'PUT', `/admin/v1/merchants/${merchantId}/callback`, { url });
      assert.equal(res.status, 500);
      const adjusted = await adminCall(
        gw,
        admin.token,
        'POST',
        `/admin/v1/merchants/${merchantId}/balance-adjustments`,
        {
          currency: 'KES',
          amount: '700',
          reason: 'opening float',
        },
      );
      assert.equal(adjusted.status, 200, 'another action is not affected');
    } finally {
      await clearAuditFailure();
    }
    const merchant = await adminCall(gw, admin.token, 'GET', `/admin/v1/merchants/${merchantId}`);
    assert.equal(merchant.body.callbackUrl, null, 'the change rolled back with its record');
    assert.equal((await auditRows(gw)).filter((r) => r.action === 'merchant.callback.set').length, 0);

    const res = await adminCall(gw, admin.token, 'PUT', `/admin/v1/merchants/${merchantId}/callback`, { url });
    assert.equal(res.status, 200);
    const record = must(
      (await auditRows(gw)).find((r) => r.action === 'merchant.callback.set'),
      'record',
    );
    assert.equal(record.actor_email, 'root-of-trust@ops.example');
    assert.equal(record.target_type, 'merchant');
    assert.equal(record.target_id, merchantId);
    assert.deepEqual(JSON.parse(record.changes ?? 'null'), {
      before: { callback_url: null },
      after: { callback_url: url },
    });
  });

  it('writes no record of a change that was refused', async () => {
    const before = (await auditRows(gw)).length;
    const overdraw = await adminCall(gw, admin.token, 'POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '-100000',
      reason: 'too much',
    });
    assert.equal(overdraw.status, 409);
    assert.equal((await auditRows(gw)).length, before);
  });

  it('records a personal-data reveal and masks personal data for roles without personal_data.read', async () => {
    assert.deepEqual(
      maskPersonalData({ phone: '254712345678', document: '12345678909', payerName: 'Maria', name: 'Shop' }),
      { phone: '•••••••••678', document: '123••••••09', payerName: 'M••••', name: 'Shop' },
    );
    assert.deepEqual(redactForAudit({ secretKey: 'abc', password: 'x', accountNo: '12345678' }), {
      secretKey: '[redacted]',
      password: '[redacted]',
      accountNo: '••••5678',
    });
    const key = await adminCall(gw, admin.token, 'POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
      permissions: ['all'],
      ipWhitelist: ['0.0.0.0'],
      debug: false,
    });
    const record = (await auditRows(gw)).find((r) => r.action === 'apikey.create');
    assert.equal(record?.target_id, key.body.accessKey);
    assert.ok(!record?.changes?.includes(key.body.secretKey), 'the secret is never in the audit log');

    const support = await operatorWithToken(gw, 'support');
    const missing = await adminCall(gw, support.token, 'GET', '/admin/v1/orders/ord_missing/personal-data');
    assert.equal(missing.status, 404);
    assert.equal((await auditRows(gw)).filter((r) => r.action === 'pii.reveal').length, 0);
  });

  it('lists records newest first for admin and auditor, filtered and paged', async () => {
    const auditor = await operatorWithToken(gw, 'auditor');
    const finance = await operatorWithToken(gw, 'finance');
    for (let n = 0; n < 3; n++) {
      await adminCall(gw, finance.token, 'PUT', `/admin/v1/merchants/${merchantId}/settlement`, { delayMs: 1000 * n });
    }
    const refused = await adminCall(gw, finance.token, 'GET', '/admin/v1/audit-log');
    assert.equal(refused.status, 403);
    const page = await adminCall(gw, auditor.token, 'GET', `/admin/v1/audit-log?actor=${finance.email}`);
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.entries.map((e: any) => e.action),
      ['access.denied', 'merchant.settlement.set', 'merchant.settlement.set', 'merchant.settlement.set'],
      'newest first: the refused read of the audit log, then the three changes',
    );
    assert.equal(page.body.entries[0].target.id, 'GET /admin/v1/audit-log');
    assert.ok(page.body.entries[0].seq > page.body.entries[1].seq);
    assert.equal(page.body.nextCursor, null);
    const only = await adminCall(
      gw,
      auditor.token,
      'GET',
      `/admin/v1/audit-log?actor=${finance.email}&action=merchant.settlement.set`,
    );
    assert.equal(only.body.entries.length, 3);
    // Paged: 105 reads through the root token are 100 on the first page and 5 after its cursor.
    for (let n = 0; n < 105; n++) await adminCall(gw, ADMIN_TOKEN, 'GET', `/admin/v1/nodes?n=${n}`);
    const first = await adminCall(gw, auditor.token, 'GET', '/admin/v1/audit-log?actor=root-token&action=admin.read');
    assert.equal(first.body.entries.length, 100);
    assert.equal(first.body.entries[0].target.id, 'GET /admin/v1/nodes?n=104');
    const rest = await adminCall(
      gw,
      auditor.token,
      'GET',
      `/admin/v1/audit-log?actor=root-token&action=admin.read&cursor=${first.body.nextCursor as string}`,
    );
    assert.deepEqual(
      rest.body.entries.map((e: any) => e.target.id),
      [4, 3, 2, 1, 0].map((n) => `GET /admin/v1/nodes?n=${n}`),
    );
    assert.equal(rest.body.nextCursor, null);
    const bad = await adminCall(gw, auditor.token, 'GET', '/admin/v1/audit-log?from=yesterday');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /^from: /);
  });

  it('finds an edited, a deleted and a swapped record and names the first bad one; a deleted last one too', async () => {
    const env = cliEnv(gw);
    const ok = await runCli(['audit-log', 'verify'], env);
    assert.equal(ok.code, 0, ok.stderr);
    const rows = await auditRows(gw);
    assert.deepEqual(JSON.parse(ok.stdout), { ok: true, entries: rows.length });
    assert.ok(rows.length >= 6);
    const second = must(rows[1], 'record 2');
    const third = must(rows[2], 'record 3');
    const last = must(rows.at(-1), 'the last record');
    const verify = async () => {
      const result = await runCli(['audit-log', 'verify'], env);
      return { code: result.code, body: JSON.parse(result.stdout) };
    };

    await rawSql(gw, [`update audit_log set reason = 'nothing to see' where id = '${second.id}'`]);
    const edited = await verify();
    assert.equal(edited.code, 1);
    assert.equal(edited.body.ok, false);
    assert.equal(edited.body.firstBadEntry, second.id);
    assert.match(edited.body.reason, /changed/);
    await rawSql(gw, [
      `update audit_log set reason = ${second.reason === null ? 'null' : `'${second.reason}'`} where id = '${second.id}'`,
    ]);
    assert.deepEqual((await verify()).body, { ok: true, entries: rows.length });

    await rawSql(gw, [`delete from audit_log where id = '${second.id}'`]);
    const deleted = await verify();
    assert.equal(deleted.body.firstBadEntry, third.id);
    assert.match(deleted.body.reason, /missing/);
    await gw.gateway.store.transact(async (tx) => {
      await tx.insertInto('audit_log').values(second).execute();
    });
    assert.equal((await verify()).body.ok, true);

    // Swapped: the two records change places in the chain (and are put back).
    const place = (first: typeof second, firstSeq: number, other: typeof second, otherSeq: number) => [
      `update audit_log set seq = -1 where id = '${first.id}'`,
      `update audit_log set seq = ${otherSeq} where id = '${other.id}'`,
      `update audit_log set seq = ${firstSeq} where id = '${first.id}'`,
    ];
    await rawSql(gw, place(second, third.seq, third, second.seq));
    const swapped = await verify();
    assert.equal(swapped.body.firstBadEntry, third.id);
    await rawSql(gw, place(second, second.seq, third, third.seq));
    assert.equal((await verify()).body.ok, true);

    await rawSql(gw, [`delete from audit_log where id = '${last.id}'`]);
    const truncated = await verify();
    assert.equal(truncated.code, 1);
    assert.equal(truncated.body.firstBadEntry, null);
    assert.match(truncated.body.reason, /at the end were deleted/);
    await gw.gateway.store.transact(async (tx) => {
      await tx.insertInto('audit_log').values(last).execute();
    });
    assert.deepEqual(await verifyAuditLog(gw.gateway.store.read), { ok: true, entries: rows.length });
  });

  it('exports the log as JSON lines, oldest first, within --from and --to, and records the export', async () => {
    const env = cliEnv(gw);
    const all = await runCli(['audit-log', 'export'], env);
    assert.equal(all.code, 0, all.stderr);
    const lines = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const rows = await auditRows(gw);
    assert.equal(lines.length, rows.length - 1, 'the export is recorded after it ran');
    assert.deepEqual(
      lines.map((l) => l.seq),
      rows.slice(0, -1).map((r) => r.seq),
    );
    assert.equal(rows.at(-1)?.action, 'audit.export');
    assert.equal(rows.at(-1)?.actor_type, 'cli');
    const future = await runCli(['audit-log', 'export', '--from', '2999-01-01T00:00:00Z'], env);
    assert.equal(future.stdout, '');
    const bad = await runCli(['audit-log', 'export', '--to', 'soon'], env);
    assert.equal(bad.code, 64);
    assert.match(JSON.parse(bad.stderr).error.message, /--to/);
  });
});

describe(`operators: the command line (${databaseLabel})`, () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ workers: false });
  });
  after(() => gw.close());

  it('creates, lists, re-roles, disables and enables operators and issues tokens, each audited as cli', async () => {
    const env = { ...cliEnv(gw), CASHGATE_OPERATOR_PASSWORD: PASSWORD };
    const created = await runCli(['operator', 'create', '--email', 'Olga@Ops.example', '--role', 'support'], env);
    assert.equal(created.code, 0, created.stderr);
    const operator = JSON.parse(created.stdout);
    assert.deepEqual(Object.keys(operator).sort(), ['email', 'operatorId', 'role']);
    assert.equal(operator.email, 'olga@ops.example');

    const dup = await runCli(['operator', 'create', '--email', 'olga@ops.example', '--role', 'viewer'], env);
    assert.equal(dup.code, 1);
    assert.equal(JSON.parse(dup.stderr).error.code, 'operator_exists');
    const badRole = await runCli(['operator', 'create', '--email', 'x@ops.example', '--role', 'god'], env);
    assert.match(JSON.parse(badRole.stderr).error.message, /^role: must be one of viewer, support/);
    const short = await runCli(
      ['operator', 'create', '--email', 'y@ops.example', '--role', 'viewer', '--password', 'short'],
      env,
    );
    assert.match(JSON.parse(short.stderr).error.message, /^password: at least 12/);

    const role = await runCli(['operator', 'role', '--email', 'olga@ops.example', '--role', 'finance'], env);
    assert.equal(JSON.parse(role.stdout).role, 'finance');
    const token = await runCli(
      ['operator', 'token', 'create', '--email', 'olga@ops.example', '--name', 'laptop', '--expires-days', '7'],
      env,
    );
    const issued = JSON.parse(token.stdout);
    assert.deepEqual(Object.keys(issued).sort(), ['expiresAt', 'role', 'token', 'tokenId']);
    assert.equal(issued.role, 'finance');
    assert.equal((await adminCall(gw, issued.token, 'GET', '/admin/v1/merchants')).status, 200);

    assert.equal(
      JSON.parse((await runCli(['operator', 'disable', '--email', 'olga@ops.example'], env)).stdout).state,
      'disabled',
    );
    assert.equal((await adminCall(gw, issued.token, 'GET', '/admin/v1/merchants')).status, 401);
    await runCli(['operator', 'enable', '--email', 'olga@ops.example'], env);
    assert.equal((await adminCall(gw, issued.token, 'GET', '/admin/v1/merchants')).status, 200);

    const list = JSON.parse((await runCli(['operator', 'list'], env)).stdout);
    assert.deepEqual(
      list.map((o: any) => [o.email, o.role, o.state]),
      [['olga@ops.example', 'finance', 'active']],
    );
    assert.ok(!JSON.stringify(list).includes('scrypt'));

    const rows = await auditRows(gw);
    assert.deepEqual(
      rows.map((r) => [r.actor_type, r.action]),
      [
        ['cli', 'operator.create'],
        ['cli', 'operator.role.change'],
        ['cli', 'operator.token.create'],
        ['cli', 'operator.disable'],
        ['cli', 'operator.enable'],
      ],
    );
    const roleChange = must(rows[1], 'the role change');
    assert.equal(roleChange.target_type, 'operator');
    assert.equal(roleChange.target_id, operator.operatorId);
    assert.deepEqual(JSON.parse(roleChange.changes ?? 'null'), {
      before: { role: 'support' },
      after: { role: 'finance' },
    });
    assert.ok(!must(rows[0]?.changes, 'changes').includes(PASSWORD), 'the password is never recorded');
    assert.ok(!must(rows[2]?.changes, 'changes').includes(issued.token), 'the token is never recorded');
  });
});
