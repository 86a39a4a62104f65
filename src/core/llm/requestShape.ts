// Decides, per request, which optional fields go on the wire (profile + what was learned), and reads
// a refusal: a 4xx that names an optional field we sent means "send it without"; one that asks for
// reasoning_content means "send it". Optional fields must never be why a request fails twice.
import type { ServerError } from './errorBody';
import { emptyLearnedModel, type LearnedEndpoint, type OptionalField } from './learnedProfiles';
import { switchField, type ProviderProfile, type ThinkingSwitchId } from './providerProfile';

export interface RequestShape {
  usageInStream: boolean;
  /** The thinking switch this fork sends; null = none (main chat, or no switch left to try). */
  thinkingSwitch: ThinkingSwitchId | null;
  passReasoning: boolean;
  passToolExtras: boolean;
}

/** Changes made for this one request while adapting to refusals (not yet, or never, learned). */
export interface ShapeOverrides {
  dropped: Set<OptionalField | 'thinking'>;
  added: Set<OptionalField>;
}

export function noOverrides(): ShapeOverrides {
  return { dropped: new Set(), added: new Set() };
}

export function resolveShape(profile: ProviderProfile, learned: LearnedEndpoint, model: string, thinkingOff: boolean, overrides: ShapeOverrides = noOverrides()): RequestShape {
  const forModel = learned.models[model] ?? emptyLearnedModel();
  const wants = (field: OptionalField, byProfile: boolean): boolean => {
    if (overrides.dropped.has(field)) return false;
    if (overrides.added.has(field) || forModel.required.includes(field)) return true;
    if (forModel.refused.includes(field) || learned.refused.includes(field)) return false;
    return byProfile;
  };
  let thinkingSwitch: ThinkingSwitchId | null = null;
  if (thinkingOff && !overrides.dropped.has('thinking')) {
    thinkingSwitch = profile.thinkingSwitches.find((id) => !forModel.thinkingFailed.includes(id)) ?? null;
  }
  return {
    usageInStream: wants('stream_options', profile.usageInStream),
    thinkingSwitch,
    passReasoning: wants('reasoning_content', profile.passReasoning),
    passToolExtras: wants('extra_content', profile.passToolExtras),
  };
}

export type Adaptation =
  | { kind: 'drop'; field: OptionalField; named: boolean }
  /** `strict`: refused as an unknown field, so every other non-OpenAI switch would be refused too. */
  | { kind: 'drop_switch'; id: ThinkingSwitchId; named: boolean; strict?: boolean }
  | { kind: 'add'; field: OptionalField };

/** What the request actually carried, to know what a refusal can be about. */
export interface SentOptional {
  usage: boolean;
  thinkingSwitch: ThinkingSwitchId | null;
  /** reasoning_content was on at least one assistant message. */
  reasoning: boolean;
  /** extra_content was on at least one tool call. */
  toolExtras: boolean;
  /** Assistant messages with tool calls exist, so reasoning_content could be sent. */
  couldSendReasoning: boolean;
}

const FIELD_NAMES: Record<OptionalField, readonly string[]> = {
  stream_options: ['stream_options', 'include_usage'],
  reasoning_content: ['reasoning_content'],
  extra_content: ['extra_content', 'thought_signature'],
};

/** Words servers use when they refuse a field they do not know. */
const REFUSAL = /unrecogni[sz]ed|unknown|unsupported|not supported|not permitted|extra (inputs|fields)|extra_forbidden|additional propert|not allowed|unexpected|cannot find field|restricted to|invalid (request|param|argument|value|field)|is invalid|not valid/i;
/** Words of a validator that refuses every field it does not know. */
const UNKNOWN_FIELD = /unrecogni[sz]ed|unknown (name|field|param|argument)|is unsupported|extra_forbidden|extra inputs|additional propert|cannot find field|unexpected (field|keyword|argument)/i;
/** The thinking switches that are not OpenAI request fields: a strict validator refuses them all. */
const NON_OPENAI_SWITCHES: readonly ThinkingSwitchId[] = ['chat_template_kwargs', 'reasoning', 'reasoning_enabled', 'thinking', 'enable_thinking'];
/** Words of a request that is simply too big, which no field can fix. */
const TOO_BIG = /context (length|window)|too long|too large|maximum (context|length)|tokens? (limit|exceed)|reduce the length/i;
/** Words of a server asking for a field. */
const ASKS_FOR = /missing|required|must be (passed|provided|sent|included|set)|needs to be|is expected/i;

/**
 * How to change the request after a 4xx: every optional field the refusal names (a validator often
 * lists them all at once), or one guess when it names none; [] when no optional field is to blame.
 * `blindUsed` is set once a refusal that named nothing has already cost a field in this request.
 */
export function adaptationsFor(status: number | undefined, error: ServerError, sent: SentOptional, blindUsed: boolean): Adaptation[] {
  if (status !== 400 && status !== 422) return [];
  const text = `${error.text} ${error.code ?? ''} ${error.type ?? ''}`;
  const names = (field: string): boolean => error.param === field || new RegExp(`(^|[^A-Za-z0-9_])${field}([^A-Za-z0-9_]|$)`).test(text);
  const found: Adaptation[] = [];

  if (names('reasoning_content') && ASKS_FOR.test(text) && !sent.reasoning && sent.couldSendReasoning) found.push({ kind: 'add', field: 'reasoning_content' });
  if (names('thought_signature') && ASKS_FOR.test(text) && !sent.toolExtras) found.push({ kind: 'add', field: 'extra_content' });
  if (found.length > 0) return found;

  // chat_template_kwargs is refused by name even when its inner field is what the error quotes.
  if (sent.thinkingSwitch && (names(switchField(sent.thinkingSwitch)) || names('enable_thinking') || names('chat_template_kwargs'))) {
    found.push({ kind: 'drop_switch', id: sent.thinkingSwitch, named: true, strict: UNKNOWN_FIELD.test(text) });
  }
  const sentFields: OptionalField[] = [];
  if (sent.usage) sentFields.push('stream_options');
  if (sent.toolExtras) sentFields.push('extra_content');
  if (sent.reasoning) sentFields.push('reasoning_content');
  for (const field of sentFields) {
    if (FIELD_NAMES[field].some(names)) found.push({ kind: 'drop', field, named: true });
  }
  if (found.length > 0) return found;

  // A refusal that names no field (or names one we did not send, such as Gemini's "Budget 0 is
  // invalid"): if it reads like a refused parameter and we sent extras, try once without the most
  // likely one. Learned only if the request then succeeds.
  if (blindUsed || !REFUSAL.test(text) || TOO_BIG.test(text)) return [];
  if (sent.thinkingSwitch) return [{ kind: 'drop_switch', id: sent.thinkingSwitch, named: false }];
  const first = sentFields[0];
  return first ? [{ kind: 'drop', field: first, named: false }] : [];
}

/** Applies an adaptation to this request's overrides. */
export function applyAdaptation(overrides: ShapeOverrides, adaptation: Adaptation): void {
  if (adaptation.kind === 'add') {
    overrides.added.add(adaptation.field);
    overrides.dropped.delete(adaptation.field);
  } else if (adaptation.kind === 'drop') {
    overrides.dropped.add(adaptation.field);
    overrides.added.delete(adaptation.field);
  } else {
    overrides.dropped.add('thinking');
  }
}

/** Records an adaptation in the endpoint's learned entry; true when something changed. */
export function learnAdaptation(entry: LearnedEndpoint, model: string, adaptation: Adaptation): boolean {
  const forModel = (entry.models[model] ??= emptyLearnedModel());
  const addTo = <T>(list: T[], value: T): boolean => (list.includes(value) ? false : (list.push(value), true));
  const removeFrom = <T>(list: T[], value: T): boolean => {
    const at = list.indexOf(value);
    if (at < 0) return false;
    list.splice(at, 1);
    return true;
  };
  switch (adaptation.kind) {
    case 'add': {
      const a = removeFrom(forModel.refused, adaptation.field);
      const b = removeFrom(entry.refused, adaptation.field);
      return addTo(forModel.required, adaptation.field) || a || b;
    }
    case 'drop': {
      const removed = removeFrom(forModel.required, adaptation.field);
      // stream_options is refused by the server as a whole; the rest may differ per model.
      const list = adaptation.field === 'stream_options' ? entry.refused : forModel.refused;
      return addTo(list, adaptation.field) || removed;
    }
    case 'drop_switch': {
      let changed = addTo(forModel.thinkingFailed, adaptation.id);
      if (adaptation.strict) for (const id of NON_OPENAI_SWITCHES) changed = addTo(forModel.thinkingFailed, id) || changed;
      return changed;
    }
  }
}

/** A fork that asked for thinking off still streamed reasoning: that switch has no effect there. */
export function learnIneffectiveSwitch(entry: LearnedEndpoint, model: string, id: ThinkingSwitchId): boolean {
  return learnAdaptation(entry, model, { kind: 'drop_switch', id, named: false });
}
