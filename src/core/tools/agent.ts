// agent: hands a self-contained research task to a sub-agent (context.subAgent): a nested
// conversation with the read-only tools whose final answer comes back as this call's result.
import { defineTool, failure, oneLine } from './toolSupport';

export const agentTool = defineTool({
  name: 'agent',
  kind: 'interaction',
  description:
    'Delegates a self-contained task to a sub-agent that can only read (read_file, list_directory, glob, grep_search, lsp, skill) ' +
    'and returns its final report. Use it for searches across many files whose details you do not need to keep; give it ' +
    'everything it needs in prompt, since it does not see this conversation.',
  properties: {
    description: { type: 'string', description: 'A short name for the task (3-6 words).' },
    prompt: { type: 'string', description: 'The full instructions for the sub-agent, including what to report back.' },
  },
  required: ['description', 'prompt'],
  summarize: (args) => oneLine(args.description) || 'agent',
  async run(args, context) {
    const description = args.string('description');
    const prompt = args.string('prompt');
    if (!context.subAgent) return failure('Sub-agents are not available here; do the task yourself with the other tools.');
    return context.subAgent.run({ description, prompt }, context);
  },
});
