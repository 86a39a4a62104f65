// web_search: a web search through the backend the user configured (context.webSearch); there is
// no built-in search engine, and without one the tool says how to set it up.
import { defineTool, failure, oneLine, success } from './toolSupport';
import { WEB_SEARCH_NOT_CONFIGURED } from './urlTemplateSearch';

export const webSearchTool = defineTool({
  name: 'web_search',
  kind: 'network',
  description: 'Searches the web and returns result titles, links and snippets. Only available when a search backend is configured.',
  properties: {
    query: { type: 'string', description: 'What to search for.' },
  },
  required: ['query'],
  summarize(args) {
    return `"${oneLine(args.query, 80)}"`;
  },
  async run(args, { webSearch, signal }) {
    const query = args.string('query');
    if (!webSearch || webSearch.configured?.() === false) {
      return failure(WEB_SEARCH_NOT_CONFIGURED);
    }
    const answer = await webSearch.search(query, signal);
    return success(answer.trim() === '' ? `No web results for "${query}".` : answer);
  },
});
