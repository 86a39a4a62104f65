// web_fetch over an injected fetch: what is fetched, how pages become text, and the limits.
import * as assert from 'node:assert/strict';
import { htmlToText } from '../../../src/core/tools/htmlText';
import { createWebFetchTool, webFetchTool } from '../../../src/core/tools/webFetch';
import type { ToolContext } from '../../../src/core/tools/types';
import type { WorkspaceFs } from '../../../src/core/fs/workspaceFs';

const noFs = {} as WorkspaceFs;

function fakeFetch(body: string | Uint8Array<ArrayBuffer>, init: ResponseInit & { headers?: Record<string, string> } = {}): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fn = (async (input: string | URL | Request) => {
    urls.push(String(input));
    return new Response(typeof body === 'string' ? body : new Uint8Array(body), { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, ...init });
  }) as typeof fetch;
  return { fetch: fn, urls };
}

function context(extra: Partial<ToolContext>): ToolContext {
  return { fs: noFs, ...extra };
}

const PAGE = `<!doctype html><html><head><title>Docs &amp; more</title><style>body{color:red}</style>
<script>alert("no")</script></head><body><nav><a href="https://x.test/home">Home</a></nav>
<h1>Install</h1><p>Run <code>npm&nbsp;install</code> &mdash; then&#33;</p><ul><li>one</li><li>two</li></ul>
<!-- hidden --></body></html>`;

describe('web_fetch tool', () => {
  it('fetches http(s) pages and returns them as readable text', async () => {
    const { fetch, urls } = fakeFetch(PAGE);
    const result = await webFetchTool.execute({ url: 'https://docs.test/install', prompt: 'how to install' }, context({ fetch }));
    assert.equal(result.ok, true);
    assert.deepEqual(urls, ['https://docs.test/install']);
    assert.equal(
      result.output,
      'Content of https://docs.test/install (text/html):\nRequested: how to install\n\nDocs & more\n\nHome (https://x.test/home)\n\n# Install\n\nRun npm install — then!\n\n- one\n- two',
    );
  });

  it('returns plain text and JSON as they are', async () => {
    const { fetch } = fakeFetch('{"a": 1}', { headers: { 'content-type': 'application/json' } });
    assert.equal((await webFetchTool.execute({ url: 'http://api.test/x' }, context({ fetch }))).output, 'Content of http://api.test/x (application/json):\n{"a": 1}');
  });

  it('refuses other schemes and malformed URLs without fetching', async () => {
    const { fetch, urls } = fakeFetch('x');
    for (const url of ['file:///etc/passwd', 'ftp://x.test/a', 'javascript:alert(1)']) {
      const result = await webFetchTool.execute({ url }, context({ fetch }));
      assert.equal(result.ok, false, url);
      assert.match(result.output, /only fetches http and https URLs/);
    }
    assert.match((await webFetchTool.execute({ url: 'not a url' }, context({ fetch }))).output, /is not a valid URL/);
    assert.match((await webFetchTool.execute({ url: 3 }, context({ fetch }))).output, /"url" must be a string/);
    assert.deepEqual(urls, []);
  });

  it('caps the body it reads and says the page was cut', async () => {
    const { fetch } = fakeFetch('a'.repeat(10_000), { headers: { 'content-type': 'text/plain' } });
    const tool = createWebFetchTool({ maxBytes: 1000 });
    const result = await tool.execute({ url: 'https://big.test/' }, context({ fetch }));
    assert.equal(result.ok, true);
    assert.ok(result.output.includes('a'.repeat(1000)));
    assert.ok(!result.output.includes('a'.repeat(1001)));
    assert.match(result.output, /\[The page was longer; only its beginning is shown\.\]$/);
  });

  it('gives up after the timeout with a clear message', async () => {
    const hanging = ((_input: string | URL | Request, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted')));
      })) as typeof fetch;
    const tool = createWebFetchTool({ timeoutMs: 50 });
    const result = await tool.execute({ url: 'https://slow.test/' }, context({ fetch: hanging }));
    assert.deepEqual(result, { ok: false, output: 'Fetching https://slow.test/ timed out after 0 s.' });
  });

  it('reports HTTP errors, binary content and network failures', async () => {
    const notFound = fakeFetch('<p>Nope</p>', { status: 404, statusText: 'Not Found' });
    assert.equal((await webFetchTool.execute({ url: 'https://x.test/missing' }, context({ fetch: notFound.fetch }))).output, 'https://x.test/missing answered HTTP 404 Not Found.\nNope');
    const image = fakeFetch(new Uint8Array([1, 2, 3]), { headers: { 'content-type': 'image/png' } });
    assert.equal((await webFetchTool.execute({ url: 'https://x.test/a.png' }, context({ fetch: image.fetch }))).output, 'https://x.test/a.png is image/png content (3 bytes), not text; it cannot be shown.');
    const failing = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    assert.match((await webFetchTool.execute({ url: 'https://down.test/' }, context({ fetch: failing }))).output, /Could not fetch https:\/\/down.test\/: fetch failed/);
  });

  it('turns entities, blocks and tables into text', () => {
    assert.equal(htmlToText('<div>a&lt;b&#x41;</div><table><tr><td>1</td><td>2</td></tr></table>'), 'a<bA\n\n| 1 | 2');
  });
});
