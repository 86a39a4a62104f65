// exit_plan_mode: switching approval modes is the user's choice in the UI; the tool says so.
import { unsupportedTool } from './unsupported';

export const exitPlanModeTool = unsupportedTool({
  name: 'exit_plan_mode',
  description: 'Presents a finished plan and asks to leave plan mode so it can be carried out.',
  properties: { plan: { type: 'string', description: 'The plan, in Markdown.' } },
  required: ['plan'],
  summaryArg: 'plan',
  instead: 'Present the plan in your reply; the user switches the approval mode to let you carry it out.',
});
