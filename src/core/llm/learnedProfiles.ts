// What each endpoint taught us, kept between runs: optional fields it refused or asked for, thinking
// switches that were refused or had no effect (per model). Persisted through a small store port
// (the CLI's --state-dir, the extension's global storage), never in workspace settings.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { isThinkingSwitchId, type ThinkingSwitchId } from './providerProfile';

/** Request fields we add on our own initiative and can do without. */
export type OptionalField = 'stream_options' | 'reasoning_content' | 'extra_content';
export const OPTIONAL_FIELDS: readonly OptionalField[] = ['stream_options', 'reasoning_content', 'extra_content'];

export interface LearnedModel {
  /** Fields this model's endpoint refused for it: left out from now on. */
  refused: OptionalField[];
  /** Fields it asked for: always sent from now on (wins over the profile). */
  required: OptionalField[];
  /** Thinking switches that were refused or changed nothing; the next one in line is used. */
  thinkingFailed: ThinkingSwitchId[];
}

export interface LearnedEndpoint {
  /** Endpoint-wide refusals (stream_options: every model of Mistral or an old Azure version). */
  refused: OptionalField[];
  models: Record<string, LearnedModel>;
  /** The endpoint answered a streamed request with one JSON completion. */
  ignoresStream?: boolean;
  /** ISO time of the last change. */
  updated?: string;
}

export interface LearnedProfilesData {
  version: 1;
  endpoints: Record<string, LearnedEndpoint>;
}

/** The persistence port: read the last saved data (undefined when none), save all of it. */
export interface LearnedProfileStore {
  load(): Promise<unknown>;
  save(data: LearnedProfilesData): Promise<void>;
}

export function emptyLearnedEndpoint(): LearnedEndpoint {
  return { refused: [], models: {} };
}

export function emptyLearnedModel(): LearnedModel {
  return { refused: [], required: [], thinkingFailed: [] };
}

/** The learned facts of every endpoint, loaded once and saved on each change. */
export class LearnedProfiles {
  private data: LearnedProfilesData | undefined;
  private loading: Promise<LearnedProfilesData> | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly store?: LearnedProfileStore,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** A copy of what is known about the endpoint (empty when nothing is). */
  async endpoint(key: string): Promise<LearnedEndpoint> {
    const data = await this.loaded();
    return structuredClone(data.endpoints[key] ?? emptyLearnedEndpoint());
  }

  /** Applies `change` to the endpoint's entry; saves when it reports a change. */
  async update(key: string, change: (entry: LearnedEndpoint) => boolean): Promise<void> {
    const data = await this.loaded();
    const entry = data.endpoints[key] ?? emptyLearnedEndpoint();
    if (!change(entry)) return;
    entry.updated = new Date().toISOString();
    data.endpoints[key] = entry;
    if (!this.store) return;
    const snapshot = structuredClone(data);
    this.saving = this.saving
      .then(() => this.store?.save(snapshot))
      .catch((error: unknown) => this.log(`could not save what the endpoint taught us: ${error instanceof Error ? error.message : String(error)}`));
    await this.saving;
  }

  private loaded(): Promise<LearnedProfilesData> {
    if (this.data) return Promise.resolve(this.data);
    this.loading ??= (async () => {
      let raw: unknown;
      try {
        raw = await this.store?.load();
      } catch (error) {
        this.log(`could not read the learned provider profiles, starting fresh: ${error instanceof Error ? error.message : String(error)}`);
      }
      this.data = sanitize(raw);
      return this.data;
    })();
    return this.loading;
  }
}

/** Learned facts from a file nobody else writes; anything unexpected in it is dropped, not trusted. */
export function sanitize(raw: unknown): LearnedProfilesData {
  const data: LearnedProfilesData = { version: 1, endpoints: {} };
  if (!isRecord(raw) || raw.version !== 1 || !isRecord(raw.endpoints)) return data;
  for (const [key, value] of Object.entries(raw.endpoints)) {
    if (!isRecord(value)) continue;
    const entry: LearnedEndpoint = { refused: fields(value.refused), models: {} };
    if (value.ignoresStream === true) entry.ignoresStream = true;
    if (typeof value.updated === 'string') entry.updated = value.updated;
    if (isRecord(value.models)) {
      for (const [model, learned] of Object.entries(value.models)) {
        if (!isRecord(learned)) continue;
        entry.models[model] = {
          refused: fields(learned.refused),
          required: fields(learned.required),
          thinkingFailed: Array.isArray(learned.thinkingFailed) ? learned.thinkingFailed.filter(isThinkingSwitchId) : [],
        };
      }
    }
    data.endpoints[key] = entry;
  }
  return data;
}

function fields(value: unknown): OptionalField[] {
  return Array.isArray(value) ? value.filter((v): v is OptionalField => (OPTIONAL_FIELDS as readonly unknown[]).includes(v)) : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const LEARNED_PROFILES_FILE = 'provider-profiles.json';

/** The store as one JSON file in a state folder, replaced atomically; readable by the user only. */
export class FileLearnedProfileStore implements LearnedProfileStore {
  readonly file: string;

  constructor(stateDir: string) {
    this.file = path.join(stateDir, LEARNED_PROFILES_FILE);
  }

  async load(): Promise<unknown> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return JSON.parse(text);
  }

  async save(data: LearnedProfilesData): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, this.file);
  }
}
