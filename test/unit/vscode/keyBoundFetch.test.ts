// The fetch under the model client, against real HTTP servers on 127.0.0.1 (two ports are two
// origins): credential headers reach only the key's origin and no request follows a redirect away.
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CrossOriginRedirectError, keyBoundFetch } from '../../../src/vscode/setup/keyBoundFetch';

interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function recordingServer(answer: (seen: Seen, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const entry = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      seen.push(entry);
      answer(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { seen, origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const KEY_HEADERS = { authorization: 'Bearer sk-canary-fetch', 'api-key': 'sk-canary-fetch', 'x-api-key': 'sk-canary-fetch', 'content-type': 'application/json' };

describe('keyBoundFetch', () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });
  const serve = async (answer: (seen: Seen, res: http.ServerResponse) => void) => {
    const server = await recordingServer(answer);
    servers.push(server);
    return server;
  };
  const ok = (_seen: Seen, res: http.ServerResponse) => res.end('ok');

  it('sends the credential headers to the key origin', async () => {
    const api = await serve(ok);
    await keyBoundFetch(api.origin)(`${api.origin}/v1/chat/completions`, { method: 'POST', headers: KEY_HEADERS, body: '{}' });
    assert.equal(api.seen[0].headers.authorization, 'Bearer sk-canary-fetch');
    assert.equal(api.seen[0].headers['api-key'], 'sk-canary-fetch');
  });

  it('strips every credential header on the way to another origin, and everywhere without a key', async () => {
    const other = await serve(ok);
    await keyBoundFetch('https://api.openai.com')(`${other.origin}/v1/models`, { headers: KEY_HEADERS });
    await keyBoundFetch(undefined)(`${other.origin}/v1/models`, { headers: KEY_HEADERS });
    for (const seen of other.seen) {
      assert.equal(seen.headers.authorization, undefined);
      assert.equal(seen.headers['api-key'], undefined);
      assert.equal(seen.headers['x-api-key'], undefined);
      assert.equal(seen.headers['content-type'], 'application/json', 'other headers go as they are');
    }
  });

  it('refuses a redirect to another origin: nothing, not even the conversation, reaches it', async () => {
    const elsewhere = await serve(ok);
    const api = await serve((_seen, res) => {
      res.writeHead(307, { location: `${elsewhere.origin}/v1/chat/completions` });
      res.end();
    });
    await assert.rejects(
      keyBoundFetch(api.origin)(`${api.origin}/v1/chat/completions`, { method: 'POST', headers: KEY_HEADERS, body: '{"messages":["secret code"]}' }),
      (error: unknown) => error instanceof CrossOriginRedirectError && error.message.includes(elsewhere.origin) && /speculate\.baseUrl/.test(error.message),
    );
    assert.equal(elsewhere.seen.length, 0);
  });

  it('follows a redirect within the origin with the key, the method and the body', async () => {
    const api = await serve((seen, res) => {
      if (seen.path === '/old/chat/completions') {
        res.writeHead(308, { location: '/v1/chat/completions' });
        res.end();
      } else res.end('ok');
    });
    const response = await keyBoundFetch(api.origin)(`${api.origin}/old/chat/completions`, { method: 'POST', headers: KEY_HEADERS, body: '{"a":1}' });
    assert.equal(await response.text(), 'ok');
    assert.deepEqual(api.seen.map((s) => [s.method, s.path, s.body, s.headers.authorization]), [
      ['POST', '/old/chat/completions', '{"a":1}', 'Bearer sk-canary-fetch'],
      ['POST', '/v1/chat/completions', '{"a":1}', 'Bearer sk-canary-fetch'],
    ]);
  });

  it('stops following a redirect loop and hands back the last redirect', async () => {
    const api = await serve((_seen, res) => {
      res.writeHead(302, { location: '/again' });
      res.end();
    });
    const response = await keyBoundFetch(api.origin)(`${api.origin}/start`);
    assert.equal(response.status, 302);
    assert.equal(api.seen.length, 6);
  });
});
