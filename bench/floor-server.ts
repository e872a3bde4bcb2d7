// The bench's floor: a bare Fastify route that verifies a signed request's signature with Cashgate's
// signing module and answers an envelope; no database, no log. Run as a child of the bench; it prints
// its address on the first line of stdout. FLOOR_ACCESS_KEY and FLOOR_SECRET_KEY name the one key.
import { signString, signsEqual, stringToSign } from '@cashgate/sdk';
import Fastify from 'fastify';

const accessKey = process.env.FLOOR_ACCESS_KEY ?? '';
const secretKey = process.env.FLOOR_SECRET_KEY ?? '';
const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : '');

const app = Fastify({ logger: false });
app.post('/floor', async (request, reply) => {
  const headers = {
    access_key: header(request.headers.access_key),
    timestamp: header(request.headers.timestamp),
    nonce: header(request.headers.nonce),
  };
  const expected = signString(secretKey, stringToSign(request.body as Record<string, unknown>, headers));
  const valid = headers.access_key === accessKey && signsEqual(expected, header(request.headers.sign));
  return reply
    .code(valid ? 200 : 401)
    .send(
      valid
        ? { code: '200', success: true, msg: 'success', msgEn: 'success', data: null }
        : { code: '307', success: false, msg: 'sign mismatch', msgEn: 'sign mismatch', data: null },
    );
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(address);
