#!/usr/bin/env node
// Prints a signed curl command for the Cashgate merchant API.
//   CASHGATE_ACCESS_KEY=AK… CASHGATE_SECRET_KEY=… node scripts/signed-curl.mjs POST /api/v3/bra/query/bank '{"currencyType":"BRL"}'
//   … node scripts/signed-curl.mjs GET '/api/v3/bra/query/balance'
// Run what it prints, or pipe it to sh. CASHGATE_URL defaults to http://127.0.0.1:8080.
import { signedHeaders } from '@cashgate/sdk';

const [method = 'GET', path = '/ping', body] = process.argv.slice(2);
const accessKey = process.env.CASHGATE_ACCESS_KEY;
const secretKey = process.env.CASHGATE_SECRET_KEY;
if (!accessKey || !secretKey) {
  console.error('set CASHGATE_ACCESS_KEY and CASHGATE_SECRET_KEY');
  process.exit(64);
}
const url = new URL(path, process.env.CASHGATE_URL ?? 'http://127.0.0.1:8080');
const params = method.toUpperCase() === 'GET' ? Object.fromEntries(url.searchParams) : JSON.parse(body ?? '{}');
const headers = signedHeaders({ accessKey, secretKey }, params);
const quote = (text) => `'${text.replaceAll("'", `'\\''`)}'`;
const parts = ['curl', '-sS', '-X', method.toUpperCase(), quote(url.href)];
for (const [name, value] of Object.entries(headers)) parts.push('-H', quote(`${name}: ${value}`));
if (method.toUpperCase() !== 'GET') {
  parts.push('-H', quote('Content-Type: application/json;charset=utf-8'), '--data-raw', quote(JSON.stringify(params)));
}
console.log(parts.join(' '));
