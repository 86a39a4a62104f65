// ask_user_question: asks the user a question (optionally with choices) through context.prompter.
import { defineTool, failure, oneLine, success } from './toolSupport';

export const askUserQuestionTool = defineTool({
  name: 'ask_user_question',
  kind: 'interaction',
  description: 'Asks the user a question and waits for the answer. options offers choices to pick from (the user may still answer freely).',
  properties: {
    question: { type: 'string', description: 'The question to ask.' },
    options: { type: 'array', items: { type: 'string' }, description: 'Choices to offer (optional).' },
  },
  required: ['question'],
  summarize(args) {
    return oneLine(args.question, 100);
  },
  async run(args, { prompter, signal }) {
    const question = args.string('question');
    const options = args.optionalStringArray('options');
    if (!prompter) return failure('Cannot ask the user here: no interactive prompt is available. Put the question in your reply instead.');
    const answer = await prompter.ask(question, options && options.length > 0 ? options : undefined, signal);
    return success(answer.trim() === '' ? 'The user gave no answer.' : `The user answered: ${answer}`);
  },
});
