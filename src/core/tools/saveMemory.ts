// save_memory: long-term memory across sessions is not supported yet; the tool says so.
import { unsupportedTool } from './unsupported';

export const saveMemoryTool = unsupportedTool({
  name: 'save_memory',
  description: 'Saves a fact to remember in later sessions.',
  properties: { fact: { type: 'string', description: 'The fact to remember.' } },
  required: ['fact'],
  summaryArg: 'fact',
  instead: 'Nothing was saved; if the fact matters, tell the user in your reply so they can keep it.',
});
