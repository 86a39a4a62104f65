// JSON-lines plumbing shared by the CLI's stream commands (HEADLESS-CLI.md): one object per input
// line, one per output line; a malformed line yields {"error", "line"} and the command goes on.
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export interface JsonLinesIo {
  input: Readable;
  output: Writable;
}

export type LineHandler = (value: Record<string, unknown>) => Promise<object> | object;

function writeLine(output: Writable, value: object): Promise<void> {
  return new Promise((resolve, reject) => {
    output.write(JSON.stringify(value) + '\n', (error) => (error ? reject(error) : resolve()));
  });
}

/** Processes stdin line by line, in order; blank lines are skipped but still counted. */
export async function processJsonLines(io: JsonLinesIo, handle: LineHandler): Promise<void> {
  const lines = createInterface({ input: io.input, crlfDelay: Infinity });
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      await writeLine(io.output, { error: `invalid JSON: ${error instanceof Error ? error.message : String(error)}`, line: lineNumber });
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      await writeLine(io.output, { error: 'each line must be a JSON object', line: lineNumber });
      continue;
    }
    try {
      await writeLine(io.output, await handle(value as Record<string, unknown>));
    } catch (error) {
      if (error instanceof InputError) await writeLine(io.output, { error: error.message, line: lineNumber });
      else throw error;
    }
  }
}

/** A line that is valid JSON but not what the command takes. */
export class InputError extends Error {}

export function requireString(value: Record<string, unknown>, field: string): string {
  const found = value[field];
  if (typeof found !== 'string') throw new InputError(`"${field}" must be a string`);
  return found;
}
