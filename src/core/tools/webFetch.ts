// web_fetch: one http(s) page as text (HTML stripped), with a size cap and a timeout. Network tools
// always need the user's consent; the approval scheduler and the speculation gate see to that.
import type { Tool } from './types';
import { htmlToText } from './htmlText';
import { defineTool, failure, oneLine, success } from './toolSupport';

export interface WebFetchOptions {
  /** Default 30 s. */
  timeoutMs?: number;
  /** Bytes of the response body read at most; default 2 MB. */
  maxBytes?: number;
  /** Characters of text returned at most; default 100 000. */
  maxChars?: number;
}

const TEXTUAL = /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|rss\+xml|atom\+xml)|image\/svg\+xml)/i;

async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - total));
      total = maxBytes;
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    total += value.length;
  }
  return { bytes: Buffer.concat(chunks), truncated };
}

export function createWebFetchTool(options: WebFetchOptions = {}): Tool {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxBytes = options.maxBytes ?? 2 * 1024 * 1024;
  const maxChars = options.maxChars ?? 100_000;
  return defineTool({
    name: 'web_fetch',
    kind: 'network',
    description:
      'Fetches an http or https URL and returns its content as text (HTML is converted to plain text). ' +
      'prompt says what you are looking for in the page; the text is returned for you to answer it.',
    properties: {
      url: { type: 'string', description: 'The http(s) URL to fetch.' },
      prompt: { type: 'string', description: 'What to look for in the page (optional).' },
    },
    required: ['url'],
    summarize(args) {
      return oneLine(args.url, 100);
    },
    async run(args, context) {
      const raw = args.string('url').trim();
      const prompt = args.optionalString('prompt');
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return failure(`web_fetch: "${raw}" is not a valid URL; give a full http:// or https:// address.`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return failure(`web_fetch only fetches http and https URLs (got ${url.protocol.replace(/:$/, '')}).`);
      }
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = context.signal ? AbortSignal.any([context.signal, timeout]) : timeout;
      const doFetch = context.fetch ?? fetch;
      let response: Response;
      let body: { bytes: Uint8Array; truncated: boolean };
      try {
        response = await doFetch(url.href, { signal, redirect: 'follow', headers: { accept: 'text/html, text/plain, application/json, */*;q=0.5' } });
        body = await readCapped(response, maxBytes);
      } catch (error) {
        if (context.signal?.aborted) throw error;
        if (timeout.aborted) return failure(`Fetching ${url.href} timed out after ${Math.round(timeoutMs / 1000)} s.`);
        return failure(`Could not fetch ${url.href}: ${(error as Error).message}. Check the address and the network.`);
      }
      const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (!response.ok) {
        const snippet = Buffer.from(body.bytes).toString('utf8').slice(0, 500);
        const detail = type.includes('html') ? htmlToText(snippet) : snippet;
        return failure(`${url.href} answered HTTP ${response.status} ${response.statusText}.${detail.trim() ? `\n${detail.trim()}` : ''}`);
      }
      if (type !== '' && !TEXTUAL.test(type)) {
        return failure(`${url.href} is ${type} content (${body.bytes.length}${body.truncated ? '+' : ''} bytes), not text; it cannot be shown.`);
      }
      const decoded = Buffer.from(body.bytes).toString('utf8');
      let text = type.includes('html') || (type === '' && /^\s*<(!doctype html|html)/i.test(decoded)) ? htmlToText(decoded) : decoded;
      let cut = body.truncated;
      if (text.length > maxChars) {
        text = text.slice(0, maxChars);
        cut = true;
      }
      const header = `Content of ${response.url || url.href}${type ? ` (${type})` : ''}:`;
      const ask = prompt ? `\nRequested: ${prompt}\n` : '';
      const note = cut ? '\n\n[The page was longer; only its beginning is shown.]' : '';
      return success(`${header}${ask}\n${text}${note}`);
    },
  });
}

export const webFetchTool = createWebFetchTool();
