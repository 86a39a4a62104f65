// exit_plan_mode: presents the finished plan; the user approves it (the chat then leaves plan mode
// for auto-edit and the model carries it out) or keeps planning. The question itself is the
// approval the scheduler asks for this tool in plan mode, shown as a plan card.
import { defineTool, failure, oneLine, success } from './toolSupport';

export const exitPlanModeTool = defineTool({
  name: 'exit_plan_mode',
  kind: 'interaction',
  description:
    'In plan mode: presents your finished plan (Markdown) to the user, who approves it (the chat switches to auto-edit and ' +
    'you carry it out) or asks you to keep planning. Call it once the plan is complete, not to ask questions.',
  properties: { plan: { type: 'string', description: 'The plan, in Markdown.' } },
  required: ['plan'],
  summarize: (args) => oneLine(args.plan, 100) || 'plan',
  deniedText:
    'The user chose to keep planning: the plan was not approved and plan mode stays on. Ask what they want changed (or ' +
    'look further with the read tools), then present the revised plan with exit_plan_mode.',
  async run(args, { planMode }) {
    args.string('plan');
    if (!planMode) return failure('There is no plan mode to leave here; present the plan in your reply.');
    const mode = planMode.mode();
    if (mode !== 'plan') return success(`Plan mode is not on (this chat runs in ${mode} mode), so there is nothing to leave: go ahead with the plan.`);
    const left = planMode.leave();
    if (!left.ok) return failure(`The plan was approved, but the chat stays in plan mode: ${left.reason}`);
    return success(`The user approved the plan. This chat now runs in ${left.mode} mode: carry out the plan now, step by step.`);
  },
});
