// skill: loads an Agent Skill (a folder with SKILL.md in `.agents/skills/`) in full, so the model can
// follow its instructions. Only text comes back: a skill's scripts run, if at all, through
// run_shell_command and its approvals like any command.
import { defineTool, failure, oneLine, success } from './toolSupport';

export const skillTool = defineTool({
  name: 'skill',
  // Loading a skill reads files and changes nothing: it runs in plan mode and ahead of the user.
  kind: 'read',
  description:
    'Loads an installed skill by name (the skills are listed in the system prompt with what each is for) and returns its ' +
    'full instructions and the files it provides. Load a skill before following it.',
  properties: { name: { type: 'string', description: 'Name of the skill, exactly as listed.' } },
  required: ['name'],
  summarize: (args) => oneLine(args.name) || 'skill',
  async run(args, { skills, fs }) {
    const name = args.string('name').trim();
    if (!skills) return failure(`No skills are installed, so "${name}" cannot be loaded; carry on with the other tools.`);
    const loaded = await skills.load(name, fs);
    return loaded.ok ? success(loaded.text) : failure(loaded.error);
  },
});
