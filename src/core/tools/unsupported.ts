// Shared shape of the tools this version offers by name but does not implement: they check their
// arguments and answer honestly, with what the model should do instead.
import type { JsonSchema } from '../messages';
import type { Tool, ToolName } from './types';
import { defineTool, failure, oneLine } from './toolSupport';

export function unsupportedTool(spec: {
  name: ToolName;
  description: string;
  properties: Record<string, JsonSchema>;
  required: string[];
  summaryArg: string;
  instead: string;
}): Tool {
  return defineTool({
    name: spec.name,
    kind: 'interaction',
    description: spec.description,
    properties: spec.properties,
    required: spec.required,
    summarize: (args) => oneLine(args[spec.summaryArg]) || spec.name,
    async run(args) {
      for (const name of spec.required) args.string(name);
      return failure(`${spec.name} is not supported in this version of Speculate. ${spec.instead}`);
    },
  });
}
