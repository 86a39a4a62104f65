// An MCP tool's inputSchema reshaped into the JSON Schema subset every provider we talk to accepts.
// OpenAI refuses a top level that is not `type: "object"` and arrays without `items`; Gemini (also
// through its OpenAI-compatible endpoint) refuses `$schema`, `additionalProperties`, `default`,
// `const`, `$ref`, type lists, unknown `format`s, `properties`/`required` on non-objects and
// `required` names that are not properties; vLLM's guided decoding trips on `$ref` cycles. The
// hints a model can use anyway (default, format, examples, const) move into the description.
import type { JsonSchema } from '../messages';

/** Keywords kept as they are (after their sub-schemas are normalised). */
const KEPT = new Set(['type', 'description', 'properties', 'required', 'items', 'enum', 'anyOf', 'minimum', 'maximum', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern']);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
/** Deeper nesting than this is cut to "any value": no real tool needs it, and a `$ref` loop must end. */
const MAX_DEPTH = 10;

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The normalised parameters of a tool: always `{type: "object", properties: {...}}` at the top. */
export function normalizeToolSchema(input: unknown): JsonSchema {
  const given = isObject(input) ? input : {};
  // Schemas that are only a union of object shapes (no top-level type) are objects too.
  const root = given.type === undefined && (Array.isArray(given.anyOf) || Array.isArray(given.oneOf)) ? { ...given, type: 'object' } : given;
  const defs = { ...(isObject(root.$defs) ? root.$defs : {}), ...(isObject(root.definitions) ? root.definitions : {}) };
  const top = normalizeNode(root, defs, 0, []) as Record<string, unknown>;
  // A top level that is not an object (a bare string, a union) has no arguments a model could name;
  // it is offered as an object without properties rather than sent for the provider to refuse.
  if (top.type !== 'object') return { type: 'object', properties: {}, ...(typeof top.description === 'string' ? { description: top.description } : {}) };
  // OpenAI refuses anyOf/oneOf at the top: the branches' properties become optional properties.
  if (Array.isArray(top.anyOf)) {
    const properties = { ...(top.properties as Record<string, JsonSchema>) };
    for (const branch of top.anyOf as JsonSchema[]) Object.assign(properties, branch.properties ?? {});
    const { anyOf: _branches, ...rest } = top;
    return { ...rest, properties } as JsonSchema;
  }
  return top as JsonSchema;
}

function normalizeNode(node: Raw, defs: Raw, depth: number, refs: readonly string[]): JsonSchema {
  if (depth > MAX_DEPTH) return { description: 'any JSON value' };
  if (typeof node.$ref === 'string') {
    const ref = node.$ref;
    const target = resolveRef(ref, defs);
    if (!target || refs.includes(ref)) return withNote({}, node, `any JSON value${refs.includes(ref) ? ' (recursive)' : ''}`);
    return normalizeNode({ ...target, ...withoutKey(node, '$ref') }, defs, depth + 1, [...refs, ref]);
  }
  const out: Record<string, unknown> = {};
  const notes: string[] = [];
  let type = pickType(node, notes);
  // allOf of objects (a common way to extend a base shape) becomes one object.
  const merged = mergeAllOf(node);
  if (merged !== node) return normalizeNode(merged, defs, depth, refs);
  const union = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (union) {
    const options = union.filter(isObject);
    const nonNull = options.filter((o) => o.type !== 'null');
    if (nonNull.length < options.length) notes.push('may be null');
    if (nonNull.length === 1) return normalizeNode({ ...withoutKey(withoutKey(node, 'anyOf'), 'oneOf'), ...nonNull[0], description: joinText(node.description, nonNull[0].description, notes) }, defs, depth, refs);
    if (nonNull.length > 1) out.anyOf = nonNull.map((o) => normalizeNode(o, defs, depth + 1, refs));
  }
  if (type === undefined && isObject(node.properties)) type = 'object';
  if (type === undefined && node.items !== undefined) type = 'array';
  if (type !== undefined) out.type = type;
  for (const [key, value] of Object.entries(node)) {
    if (!KEPT.has(key) || key === 'type' || key === 'description' || key === 'anyOf') continue;
    if (key === 'properties' || key === 'required' || key === 'items') continue;
    if (key === 'enum') {
      if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) out.enum = value;
      continue;
    }
    if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') out[key] = value;
  }
  if (node.const !== undefined) {
    if (typeof node.const === 'string' || typeof node.const === 'number' || typeof node.const === 'boolean') out.enum = [node.const];
    else notes.push(`must be ${JSON.stringify(node.const)}`);
  }
  if (typeof node.format === 'string') notes.push(`format: ${node.format}`);
  if (node.default !== undefined) notes.push(`default: ${JSON.stringify(node.default)}`);
  if (Array.isArray(node.examples) && node.examples.length > 0) notes.push(`e.g. ${node.examples.slice(0, 3).map((e) => JSON.stringify(e)).join(', ')}`);
  if (typeof node.exclusiveMinimum === 'number') notes.push(`greater than ${node.exclusiveMinimum}`);
  if (typeof node.exclusiveMaximum === 'number') notes.push(`less than ${node.exclusiveMaximum}`);
  if (type === 'object') {
    const properties: Record<string, JsonSchema> = {};
    if (isObject(node.properties)) {
      for (const [name, sub] of Object.entries(node.properties)) properties[name] = normalizeNode(isObject(sub) ? sub : {}, defs, depth + 1, refs);
    }
    out.properties = properties;
    const required = Array.isArray(node.required) ? node.required.filter((r): r is string => typeof r === 'string' && r in properties) : [];
    if (required.length > 0) out.required = [...new Set(required)];
  }
  if (type === 'array') out.items = isObject(node.items) ? normalizeNode(node.items, defs, depth + 1, refs) : {};
  const description = joinText(node.description, undefined, notes);
  if (description) out.description = description;
  return out as JsonSchema;
}

/** One JSON type: a list with null becomes its other type (noted), a list of several keeps the first and notes the rest. */
function pickType(node: Raw, notes: string[]): string | undefined {
  const raw = node.type;
  if (typeof raw === 'string') return TYPES.has(raw) && raw !== 'null' ? raw : undefined;
  if (!Array.isArray(raw)) return undefined;
  const types = raw.filter((t): t is string => typeof t === 'string' && TYPES.has(t));
  const nonNull = types.filter((t) => t !== 'null');
  if (nonNull.length < types.length) notes.push('may be null');
  if (nonNull.length > 1) notes.push(`may also be ${nonNull.slice(1).join(' or ')}`);
  return nonNull[0];
}

function mergeAllOf(node: Raw): Raw {
  if (!Array.isArray(node.allOf)) return node;
  const parts = node.allOf.filter(isObject);
  const merged: Raw = withoutKey(node, 'allOf');
  const properties: Raw = { ...(isObject(node.properties) ? node.properties : {}) };
  const required = new Set<unknown>(Array.isArray(node.required) ? node.required : []);
  for (const part of parts) {
    if (isObject(part.properties)) Object.assign(properties, part.properties);
    if (Array.isArray(part.required)) part.required.forEach((r) => required.add(r));
    for (const [key, value] of Object.entries(part)) if (key !== 'properties' && key !== 'required' && !(key in merged)) merged[key] = value;
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

function resolveRef(ref: string, defs: Raw): Raw | undefined {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  if (!match) return undefined;
  const target = defs[decodeURIComponent(match[1]).replace(/~1/g, '/').replace(/~0/g, '~')];
  return isObject(target) ? target : undefined;
}

function withoutKey(node: Raw, key: string): Raw {
  const { [key]: _dropped, ...rest } = node;
  return rest;
}

function withNote(out: Raw, node: Raw, note: string): JsonSchema {
  const description = joinText(node.description, undefined, [note]);
  return { ...out, ...(description ? { description } : {}) } as JsonSchema;
}

function joinText(first: unknown, second: unknown, notes: readonly string[]): string | undefined {
  const parts = [first, second].filter((p): p is string => typeof p === 'string' && p.trim() !== '');
  const text = [...new Set(parts)].join(' ');
  const extra = notes.length > 0 ? `(${notes.join('; ')})` : '';
  const all = [text, extra].filter((p) => p !== '').join(' ');
  return all === '' ? undefined : all;
}
