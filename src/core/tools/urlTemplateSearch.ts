// A web_search backend from one user setting: a search URL with `{query}` in it (for example a
// SearXNG instance with format=json). Nothing is searched unless the user configured it.
import type { WebSearchProvider } from './types';

export const WEB_SEARCH_NOT_CONFIGURED =
  'Web search is not configured: set "speculate.webSearchUrl" to a search URL containing {query} (for example a SearXNG instance: https://searx.example.org/search?q={query}&format=json). Use web_fetch on a known URL instead.';

const TIMEOUT_MS = 15_000;
const MAX_TEXT = 8_000;
const MAX_RESULTS = 8;

interface SearxResult {
  title?: unknown;
  url?: unknown;
  content?: unknown;
}

/** Formats a SearXNG-style JSON answer ({results: [{title, url, content}]}); undefined for anything else. */
export function formatSearchResults(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { results?: unknown }).results)) return undefined;
  const results = (body as { results: SearxResult[] }).results.slice(0, MAX_RESULTS);
  return results
    .map((r, i) => {
      const title = typeof r.title === 'string' ? r.title.trim() : '(untitled)';
      const url = typeof r.url === 'string' ? r.url : '';
      const snippet = typeof r.content === 'string' ? r.content.replace(/\s+/g, ' ').trim() : '';
      return `${i + 1}. ${title}\n   ${url}${snippet ? `\n   ${snippet}` : ''}`;
    })
    .join('\n');
}

/** `template` is read on every search, so a changed setting applies at once. */
export function urlTemplateSearchProvider(template: () => string, fetchImpl: typeof fetch = fetch): WebSearchProvider {
  return {
    configured: () => template().trim() !== '',
    async search(query, signal) {
      const pattern = template().trim();
      if (pattern === '') throw new Error(WEB_SEARCH_NOT_CONFIGURED);
      if (!pattern.includes('{query}')) throw new Error('"speculate.webSearchUrl" must contain {query} where the search words go.');
      const url = pattern.replace(/\{query\}/g, encodeURIComponent(query));
      if (!/^https?:\/\//i.test(url)) throw new Error('"speculate.webSearchUrl" must be an http or https URL.');
      const timeout = AbortSignal.timeout(TIMEOUT_MS);
      const response = await fetchImpl(url, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout, headers: { accept: 'application/json, text/plain;q=0.8, */*;q=0.5' } });
      if (!response.ok) throw new Error(`The search endpoint answered HTTP ${response.status}.`);
      const text = await response.text();
      try {
        const formatted = formatSearchResults(JSON.parse(text));
        if (formatted !== undefined) return formatted;
      } catch {
        // Not JSON: fall through to the text itself.
      }
      return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n… (cut at ${MAX_TEXT} characters)` : text;
    },
  };
}
