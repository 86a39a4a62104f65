// save_memory: appends one fact to the user's memory file (context.memory), which later chats read
// as part of their system prompt. The file is the user's, outside every workspace.
import { defineTool, failure, oneLine, success } from './toolSupport';

/** A fact is one line; longer text is a document, not a memory. */
export const MAX_MEMORY_FACT_CHARS = 500;

export const saveMemoryTool = defineTool({
  name: 'save_memory',
  kind: 'interaction',
  description:
    'Saves one short fact about the user or their preferences (one line) to their memory file, which is part of the ' +
    'instructions of later chats. Use it when the user asks you to remember something, not for task notes.',
  properties: { fact: { type: 'string', description: 'The fact to remember, as one self-contained sentence.' } },
  required: ['fact'],
  summarize: (args) => oneLine(args.fact, 100) || 'save_memory',
  async run(args, { memory }) {
    // One line in the file is one fact: newlines inside would forge more of them.
    const fact = args.string('fact').replace(/\s+/g, ' ').trim();
    if (fact.length > MAX_MEMORY_FACT_CHARS) {
      return failure(`save_memory: the fact is ${fact.length} characters; keep it under ${MAX_MEMORY_FACT_CHARS} (one sentence). Nothing was saved.`);
    }
    if (!memory) return failure('No memory file is available here, so nothing was saved. Tell the user the fact in your reply so they can keep it.');
    try {
      await memory.append(fact);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return failure(`The fact was not saved: the memory file ${memory.location} cannot be written (${why}). Nothing was lost; tell the user the fact in your reply and that their memory file needs fixing.`);
    }
    return success(`Saved to memory: "${fact}". Later chats will see it.`);
  },
});
