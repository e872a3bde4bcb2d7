import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleSignIn } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';

const SECTIONS: [string, string][] = [
  ['/console', 'Overview'],
  ['/console/keys', 'API keys'],
  ['/console/callbacks', 'Callbacks'],
  ['/console/orders', 'Orders'],
  ['/console/balances', 'Balances'],
  ['/console/signature', 'Signature tool'],
  ['/console/requests', 'Request log'],
  ['/console/account', 'Account'],
];

describe(`console navigation: a row on a desktop, a "Menu" disclosure on a phone (${databaseLabel})`, () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ workers: false });
  });
  after(async () => {
    await gw.close();
  });

  it('every page carries the row and a <details> menu with every section, the current one marked, without script', async () => {
    const merchant = await gw.merchantWithKey();
    const client = await consoleSignIn(gw, merchant.merchantId);
    for (const [path, name] of SECTIONS) {
      const page = await client.get(path);
      assert.equal(page.status, 200, `${path}: ${page.text.slice(0, 200)}`);
      const row = /<nav class="row" aria-label="Main">([\s\S]*?)<\/nav>/.exec(page.text)?.[1];
      const menu =
        /<details class="menu"><summary>([\s\S]*?)<\/summary><nav aria-label="Main">([\s\S]*?)<\/nav><\/details>/.exec(
          page.text,
        );
      assert.ok(row !== undefined, `${path}: the desktop row`);
      assert.ok(menu !== null, `${path}: the phone menu is a <details> disclosure`);
      assert.equal(menu[1], `Menu <span class="here">· ${name}</span>`, `${path}: the menu button names the section`);
      for (const links of [row, menu[2] ?? '']) {
        for (const [href, text] of SECTIONS) {
          const current = href === path ? ' aria-current="page"' : '';
          assert.ok(links.includes(`<a href="${href}"${current}>${text}</a>`), `${path}: links to ${text}${current}`);
        }
      }
      assert.ok(!/<details class="menu" open/.test(page.text), `${path}: the menu starts closed`);
    }
    await client.post('/console/language', { lang: 'pt-BR', back: '/console/keys' });
    const pt = await client.get('/console/keys');
    assert.ok(pt.text.includes('<summary>Menu <span class="here">· Chaves de API</span>'), 'the menu in Portuguese');
    await client.post('/console/language', { lang: 'es', back: '/console/keys' });
    const es = await client.get('/console/keys');
    assert.ok(es.text.includes('<summary>Menú <span class="here">· Claves de API</span>'), 'the menu in Spanish');
  });

  it('the phone style hides the row and shows the menu; a desktop hides the menu', async () => {
    const signIn = await fetch(new URL('/console/sign-in', gw.url));
    const text = await signIn.text();
    assert.ok(!text.includes('class="menu"'), 'no menu before signing in');
    const style = /<style>([\s\S]*?)<\/style>/.exec(text)?.[1] ?? '';
    assert.ok(style.includes('header .menu{display:none}'), 'the menu is hidden by default (desktop)');
    assert.match(
      style,
      /@media \(max-width:40rem\)\{header nav\.row\{display:none\}header \.menu\{display:block;/,
      'on a phone the row is hidden and the menu shown',
    );
  });
});
