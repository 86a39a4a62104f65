// The engine's own state files (journals, records, redo logs) are JSON objects; anything else in
// their place — a torn write, another program's file — is not one of ours and is left alone.

/** The object `text` holds, or undefined when it is not valid JSON or not an object. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
