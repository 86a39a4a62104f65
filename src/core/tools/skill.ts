// skill: no skills can be installed in this version; the tool says so.
import { unsupportedTool } from './unsupported';

export const skillTool = unsupportedTool({
  name: 'skill',
  description: 'Runs an installed skill by name.',
  properties: { name: { type: 'string', description: 'Name of the skill.' } },
  required: ['name'],
  summaryArg: 'name',
  instead: 'No skills are installed; carry on with the other tools.',
});
