// agent: sub-agents are not supported yet; the tool says so.
import { unsupportedTool } from './unsupported';

export const agentTool = unsupportedTool({
  name: 'agent',
  description: 'Delegates a self-contained task to a sub-agent.',
  properties: {
    description: { type: 'string', description: 'A short name for the task.' },
    prompt: { type: 'string', description: 'The full instructions for the sub-agent.' },
  },
  required: ['description', 'prompt'],
  summaryArg: 'description',
  instead: 'Do the task yourself with the other tools.',
});
