/**
 * The operators' admin write routes: create, change role, disable (their tokens refused at once) and
 * enable, list and revoke tokens, each audited; an admin cannot disable themself nor take their own
 * admin role away; bad input and other roles change nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Role } from '../src/access/permissions.js';
import { databaseLabel } from './support/database.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { adminCall } from './support/process.js';

const PASSWORD = 'a long operator password';

describe(`operators managed through the admin API (${databaseLabel})`, () => {
  let gw: TestGateway;
  let admin: { operatorId: string; email: string; token: string };
  const as = (token: string, method: string, path: string, body?: unknown) => adminCall(gw, token, method, path, body);
  const auditOf = (action: string) =>
    gw.gateway.store.read.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('seq').execute();
  const withToken = async (role: Role) => {
    const email = `${role}-${Math.random()}@ops.example`;
    const created = await gw.gateway.operators.create({ email, role, password: PASSWORD });
    const { token, tokenId } = await gw.gateway.operators.createToken({ email });
    return { operatorId: created.operatorId, email, token, tokenId };
  };

  before(async () => {
    gw = await startTestGateway({ workers: false });
    admin = await withToken('admin');
  });
  after(() => gw.close());

  it('creates an operator and answers its view, never the password; bad input changes nothing', async () => {
    const created = await as(admin.token, 'POST', '/admin/v1/operators', {
      email: '  Rita@PSP.example ',
      role: 'support',
      name: 'Rita Lima',
      password: 'another long password',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.email, 'rita@psp.example');
    assert.equal(created.body.role, 'support');
    assert.equal(created.body.state, 'active');
    assert.equal(created.body.twoFactor, false);
    assert.doesNotMatch(JSON.stringify(created.body), /another long password|password/i);
    const [record] = (await auditOf('operator.create')).filter((r) => r.actor_email === admin.email);
    assert.ok(record !== undefined, 'audited as operator.create');
    assert.doesNotMatch(JSON.stringify(record), /another long password/, 'the password is not in the audit log');

    const count = (await gw.gateway.operators.list()).length;
    const refusals: [unknown, number, RegExp][] = [
      [{ email: 'rita@psp.example', role: 'support', password: PASSWORD }, 409, /already exists/],
      [{ email: 'not-an-email', role: 'support', password: PASSWORD }, 400, /^email: /],
      [{ email: 'x@psp.example', role: 'boss', password: PASSWORD }, 400, /role/],
      [{ email: 'x@psp.example', role: 'support', password: 'short' }, 400, /^password: at least/],
      [{ email: 'x@psp.example', role: 'support' }, 400, /password/],
    ];
    for (const [body, status, message] of refusals) {
      const res = await as(admin.token, 'POST', '/admin/v1/operators', body);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.match(res.body.error.message, message);
    }
    assert.equal((await gw.gateway.operators.list()).length, count, 'nothing was created');
  });

  it('changes a role, disables (tokens refused at once) and enables, each audited with its reason', async () => {
    const target = await withToken('support');
    const path = `/admin/v1/operators/${target.operatorId}`;
    assert.equal((await as(target.token, 'GET', '/admin/v1/nodes')).status, 200);

    const noReason = await as(admin.token, 'PUT', `${path}/role`, { role: 'finance' });
    assert.equal(noReason.status, 400);
    assert.match(noReason.body.error.message, /reason/);
    const role = await as(admin.token, 'PUT', `${path}/role`, { role: 'finance', reason: 'moved to the money desk' });
    assert.equal(role.status, 200, JSON.stringify(role.body));
    assert.equal(role.body.role, 'finance');
    const roleAudit = (await auditOf('operator.role.change')).at(-1);
    assert.equal(roleAudit?.target_id, target.operatorId);
    assert.equal(roleAudit.reason, 'moved to the money desk');
    // The new role holds at the next request: finance may not pause merchants, support could.
    const paused = await as(target.token, 'POST', '/admin/v1/merchants/nobody/pause', { reason: 'x' });
    assert.equal(paused.status, 403);

    const disabled = await as(admin.token, 'POST', `${path}/disable`, { reason: 'left the company' });
    assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
    assert.equal(disabled.body.state, 'disabled');
    const refused = await as(target.token, 'GET', '/admin/v1/nodes');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'unauthorized');
    assert.equal((await auditOf('operator.disable')).at(-1)?.target_id, target.operatorId);

    const enabled = await as(admin.token, 'POST', `${path}/enable`, { reason: 'came back' });
    assert.equal(enabled.status, 200);
    assert.equal(enabled.body.state, 'active');
    assert.equal((await as(target.token, 'GET', '/admin/v1/nodes')).status, 200);
    assert.equal((await auditOf('operator.enable')).at(-1)?.reason, 'came back');

    const unknown = await as(admin.token, 'POST', '/admin/v1/operators/opr_nobody/disable', { reason: 'x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'operator_id_not_found');
  });

  it('lists an operator’s tokens without their secrets, and revokes one (refused at once)', async () => {
    const target = await withToken('viewer');
    const second = await gw.gateway.operators.createToken({ email: target.email, name: 'laptop' });
    const listed = await as(admin.token, 'GET', `/admin/v1/operators/${target.operatorId}/tokens`);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.deepEqual(
      listed.body.tokens.map((t: { tokenId: string }) => t.tokenId),
      [target.tokenId, second.tokenId],
    );
    const text = JSON.stringify(listed.body);
    assert.ok(!text.includes(target.token) && !text.includes(second.token), 'no secret is shown');
    assert.doesNotMatch(text, /hash/i);

    const other = await withToken('viewer');
    const foreign = await as(
      admin.token,
      'POST',
      `/admin/v1/operators/${other.operatorId}/tokens/${target.tokenId}/revoke`,
      { reason: 'lost laptop' },
    );
    assert.equal(foreign.status, 404, 'a token of another operator is not found under this one');
    assert.equal((await as(target.token, 'GET', '/admin/v1/nodes')).status, 200);

    const revoked = await as(
      admin.token,
      'POST',
      `/admin/v1/operators/${target.operatorId}/tokens/${target.tokenId}/revoke`,
      { reason: 'lost laptop' },
    );
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.tokenId, target.tokenId);
    assert.ok(revoked.body.revokedAt !== null);
    assert.equal((await as(target.token, 'GET', '/admin/v1/nodes')).status, 401);
    assert.equal((await as(second.token, 'GET', '/admin/v1/nodes')).status, 200, 'the other token still works');
    const record = (await auditOf('operator.token.revoke')).at(-1);
    assert.equal(record?.target_type, 'operator_token');
    assert.equal(record.target_id, target.tokenId);
    assert.equal(record.reason, 'lost laptop');

    const none = await as(admin.token, 'GET', '/admin/v1/operators/opr_nobody/tokens');
    assert.equal(none.status, 404);
  });

  it('refuses an admin disabling themself or taking their own admin role away; another admin may', async () => {
    const path = `/admin/v1/operators/${admin.operatorId}`;
    const disable = await as(admin.token, 'POST', `${path}/disable`, { reason: 'test' });
    assert.equal(disable.status, 403, JSON.stringify(disable.body));
    assert.equal(disable.body.error.code, 'operator_self_change');
    assert.match(disable.body.error.message, /may not disable yourself/);
    const demote = await as(admin.token, 'PUT', `${path}/role`, { role: 'viewer', reason: 'test' });
    assert.equal(demote.status, 403);
    assert.equal(demote.body.error.code, 'operator_self_change');
    const same = await as(admin.token, 'PUT', `${path}/role`, { role: 'admin', reason: 'no change' });
    assert.equal(same.status, 200, 'keeping one’s own admin role is no change');
    const me = (await gw.gateway.operators.list()).find((o) => o.operatorId === admin.operatorId);
    assert.equal(me?.state, 'active');
    assert.equal(me.role, 'admin');
    assert.equal((await as(admin.token, 'GET', '/admin/v1/nodes')).status, 200);

    const other = await withToken('admin');
    const byOther = await as(other.token, 'PUT', `${path}/role`, { role: 'auditor', reason: 'rotation' });
    assert.equal(byOther.status, 200);
    assert.equal(byOther.body.role, 'auditor');
    const back = await as(other.token, 'PUT', `${path}/role`, { role: 'admin', reason: 'rotation over' });
    assert.equal(back.body.role, 'admin');
  });

  it('refuses the routes to roles without operators.write, recorded as access.denied', async () => {
    const target = await withToken('viewer');
    for (const role of ['finance', 'support'] as const) {
      const caller = await withToken(role);
      const calls: [string, string, unknown][] = [
        ['POST', '/admin/v1/operators', { email: 'y@psp.example', role: 'admin', password: PASSWORD }],
        ['PUT', `/admin/v1/operators/${target.operatorId}/role`, { role: 'admin', reason: 'x' }],
        ['POST', `/admin/v1/operators/${target.operatorId}/disable`, { reason: 'x' }],
        ['POST', `/admin/v1/operators/${target.operatorId}/tokens/${target.tokenId}/revoke`, { reason: 'x' }],
      ];
      for (const [method, path, body] of calls) {
        const res = await as(caller.token, method, path, body);
        assert.equal(res.status, 403, `${role} ${method} ${path}`);
        assert.equal(res.body.error.permission, 'operators.write');
      }
      const denied = (await auditOf('access.denied')).filter((r) => r.actor_email === caller.email);
      assert.equal(denied.length, calls.length);
      // Reading tokens needs only read.
      assert.equal((await as(caller.token, 'GET', `/admin/v1/operators/${target.operatorId}/tokens`)).status, 200);
    }
    const unchanged = (await gw.gateway.operators.list()).find((o) => o.operatorId === target.operatorId);
    assert.equal(unchanged?.role, 'viewer');
    assert.equal(unchanged.state, 'active');
    assert.equal((await as(target.token, 'GET', '/admin/v1/nodes')).status, 200);
  });
});
