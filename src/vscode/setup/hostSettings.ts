// The window's Speculate settings as the session and the chat see them: read with the folder's trust
// (an untrusted folder's own settings do not count, and it runs in plan mode without speculation),
// the endpoint they name, and the key of earlier versions moved to that endpoint once there is one.
import type { LogOutputChannel } from 'vscode';
import type { SessionConfig } from '../../core/session';
import type { SandboxSettings } from '../../core/workspaceServices';
import type { ApiKeyStore, LegacyKeyOutcome } from './apiKeys';
import { readChatSettings, type ChatSettingsValues } from './chatSettings';
import { resolveEndpoint, type Endpoint } from './endpoint';
import { readSettings, type SpeculateSettings } from './settings';

export class HostSettings {
  private trustedNow: boolean;
  private values: SpeculateSettings;
  private chatValues: ChatSettingsValues;

  constructor(
    trusted: boolean,
    private readonly apiKeys: ApiKeyStore,
    private readonly output: LogOutputChannel,
    /** The built-in demo model's URL (npm start), used while no endpoint is set. */
    private readonly demoUrl = process.env.SPECULATE_DEMO_MODEL_URL || undefined,
  ) {
    this.trustedNow = trusted;
    this.values = readSettings(trusted);
    this.chatValues = readChatSettings(trusted);
  }

  /** Whether the open folder is trusted (the agent then runs as the user's settings say). */
  get trusted(): boolean {
    return this.trustedNow;
  }

  get settings(): SpeculateSettings {
    return this.values;
  }

  get chat(): ChatSettingsValues {
    return this.chatValues;
  }

  /** Reads the settings again (they or the keys changed). */
  reload(): void {
    this.values = readSettings(this.trustedNow);
    this.chatValues = readChatSettings(this.trustedNow);
  }

  /** The folder became trusted: its settings count from now on. False when it already was. */
  grantTrust(): boolean {
    if (this.trustedNow) return false;
    this.trustedNow = true;
    this.reload();
    return true;
  }

  endpoint(): Endpoint | undefined {
    return resolveEndpoint(this.values, this.demoUrl);
  }

  sessionConfig(): SessionConfig {
    return {
      model: this.endpoint()?.model ?? '',
      fastModel: this.values.fastModel,
      // Restricted Mode: reads only, and nothing runs ahead unattended.
      approvalMode: this.trustedNow ? this.values.approvalMode : 'plan',
      suggestionsEnabled: this.values.suggestionsEnabled,
      speculationEnabled: this.trustedNow && this.values.speculationEnabled,
      maxTurns: this.values.maxTurns,
      maxMessages: this.values.maxMessages,
      subAgentModel: this.values.subAgentModel ?? 'fast',
    };
  }

  sandboxSettings(): SandboxSettings {
    return { enabled: this.values.sandboxEnabled, timeoutMs: this.values.sandboxTimeoutMs, maxWriteBytes: this.values.sandboxMaxWriteBytes };
  }

  /**
   * The one key of earlier versions goes to the endpoint of the user's settings once there is one
   * (at start and on every settings change until then); never to a workspace's endpoint.
   */
  async migrateLegacyKey(): Promise<LegacyKeyOutcome | undefined> {
    const origin = this.values.baseUrl ? this.endpoint()?.origin : undefined;
    const outcome = await this.apiKeys.adoptLegacyKey(origin).catch((error: unknown) => {
      this.output.warn(`could not move the stored API key: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    if (outcome?.kind === 'adopted') this.output.info(`The API key stored by an earlier version is now the key for ${outcome.origin} (speculate.baseUrl) and is sent only there.`);
    if (outcome?.kind === 'superseded') this.output.info(`${outcome.origin} has a key already; the one stored by an earlier version was removed.`);
    return outcome;
  }
}
