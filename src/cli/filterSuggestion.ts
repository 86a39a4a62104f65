// `filter-suggestion`: runs the 12 suggestion filter rules over candidate texts.
import { filterSuggestion } from '../core/followup/suggestionFilter';
import { processJsonLines, requireString, type JsonLinesIo } from './jsonLines';

export async function runFilterSuggestion(io: JsonLinesIo): Promise<number> {
  await processJsonLines(io, (value) => {
    const text = requireString(value, 'text');
    return { text, reason: filterSuggestion(text) };
  });
  return 0;
}
