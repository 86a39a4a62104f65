// web_search through the user's search URL: off until configured, results formatted, errors clear.
import * as assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WEB_SEARCH_NOT_CONFIGURED, formatSearchResults, urlTemplateSearchProvider } from '../../../src/core/tools/urlTemplateSearch';
import { webSearchTool } from '../../../src/core/tools/webSearch';
import type { ToolContext } from '../../../src/core/tools/types';

describe('web_search through speculate.webSearchUrl', () => {
  let server: Server;
  let base = '';
  const seen: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url?.startsWith('/fail')) {
        res.writeHead(503).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [{ title: 'Node docs', url: 'https://nodejs.org', content: 'The   runtime' }, { title: 'MDN', url: 'https://developer.mozilla.org' }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const run = (template: string, query: string) =>
    webSearchTool.execute({ query }, { webSearch: urlTemplateSearchProvider(() => template) } as unknown as ToolContext);

  it('says how to turn it on while the setting is empty, and sends nothing', async () => {
    const before = seen.length;
    const result = await run('', 'node streams');
    assert.equal(result.ok, false);
    assert.equal(result.output, WEB_SEARCH_NOT_CONFIGURED);
    assert.equal(seen.length, before);
  });

  it('fills {query} URL-encoded and formats SearXNG-style results', async () => {
    const result = await run(`${base}/search?q={query}&format=json`, 'node & streams');
    assert.equal(result.ok, true);
    assert.equal(seen[seen.length - 1], '/search?q=node%20%26%20streams&format=json');
    assert.equal(result.output, '1. Node docs\n   https://nodejs.org\n   The runtime\n2. MDN\n   https://developer.mozilla.org');
  });

  it('reports a failing endpoint and a template without {query} clearly', async () => {
    const failed = await run(`${base}/fail?q={query}`, 'x');
    assert.equal(failed.ok, false);
    assert.match(failed.output, /HTTP 503/);
    const noPlaceholder = await run(`${base}/search`, 'x');
    assert.match(noPlaceholder.output, /must contain \{query\}/);
    const notHttp = await run('file:///etc/passwd?{query}', 'x');
    assert.match(notHttp.output, /http or https/);
  });

  it('passes other answers through as text and ignores JSON of another shape', () => {
    assert.equal(formatSearchResults({ hits: [] }), undefined);
    assert.equal(formatSearchResults({ results: [] }), '');
  });
});
