// Typed reading of the `speculate.*` settings under the trust rules of settingPolicy.ts: user-only
// settings come from the user's settings alone, the rest from a workspace only once it is trusted.
// Every value is checked for its type: a workspace's settings file may hold anything.
import * as vscode from 'vscode';
import { APPROVAL_MODES, type ApprovalMode } from '../../core/chat/approvals';
import { DEFAULT_PROTECTED_PATHS } from '../../core/fs/protectedPaths';
import type { PrefixCaching } from '../../core/llm/requestBody';
import { narrowedValue, restrictedValue, userValue, type Inspection, type UserOnlySetting } from './settingPolicy';

export interface SpeculateSettings {
  baseUrl: string;
  model: string;
  fastModel: string;
  approvalMode: ApprovalMode;
  suggestionsEnabled: boolean;
  speculationEnabled: boolean;
  maxTurns: number;
  maxMessages: number;
  enterAcceptsSuggestion: boolean;
  prefixCaching: PrefixCaching;
  requestTimeoutMs: number;
  webSearchUrl: string;
  /** Azure OpenAI api-version for deployment URLs that name none. */
  azureApiVersion: string;
  /** Globs of protected paths (speculate.protectedPaths); TOOLS.md's list by default. */
  protectedPaths: string[];
  sandboxEnabled: boolean;
  sandboxTimeoutMs: number;
  sandboxMaxWriteBytes: number;
  /** What the agent tool's sub-agents run on (speculate.subAgent.model). */
  subAgentModel?: 'fast' | 'main';
}


const asString = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');
/** A list of strings; anything else (a hand-edited settings file) falls back to the default. */
const asStringList = (value: unknown, fallback: readonly string[]): string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? [...value] : [...fallback];
const asBoolean = (fallback: boolean) => (value: unknown): boolean => (typeof value === 'boolean' ? value : fallback);
const clamped = (min: number, max: number, fallback: number) => (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? Math.min(max, Math.max(min, Math.round(value))) : fallback;

/** Reads settings for a workspace that is (or is not) trusted. */
export function readSettings(trusted: boolean): SpeculateSettings {
  const config = vscode.workspace.getConfiguration('speculate');
  const inspect = (key: string): Inspection | undefined => config.inspect(key);
  /** User-only (scope application): the user's value, whatever the workspace says. */
  const user = (key: UserOnlySetting): unknown => userValue(inspect(key.slice('speculate.'.length)));
  /** Restricted: a trusted workspace's value counts, an untrusted one's does not. */
  const restricted = (key: string): unknown => restrictedValue(inspect(key), config.get(key), trusted);
  const approval = asString(user('speculate.approvalMode'));
  const prefixCaching = restricted('prefixCaching');
  return {
    baseUrl: asString(user('speculate.baseUrl')),
    model: asString(restricted('model')),
    fastModel: asString(restricted('fastModel')),
    approvalMode: (APPROVAL_MODES as readonly string[]).includes(approval) ? (approval as ApprovalMode) : 'default',
    suggestionsEnabled: asBoolean(true)(restricted('suggestions.enabled')),
    speculationEnabled: narrowedValue(inspect('speculation.enabled'), trusted, asBoolean(true), (a, b) => a && b),
    maxTurns: narrowedValue(inspect('speculation.maxTurns'), trusted, clamped(1, 20, 20), Math.min),
    maxMessages: narrowedValue(inspect('speculation.maxMessages'), trusted, clamped(2, 100, 100), Math.min),
    enterAcceptsSuggestion: asBoolean(false)(restricted('enterAcceptsSuggestion')),
    prefixCaching: prefixCaching === 'dashscope' ? 'dashscope' : 'none',
    requestTimeoutMs: clamped(5, 3600, 60)(restricted('requestTimeoutSeconds')) * 1000,
    webSearchUrl: asString(user('speculate.webSearchUrl')),
    azureApiVersion: asString(restricted('azureApiVersion')),
    protectedPaths: asStringList(user('speculate.protectedPaths'), DEFAULT_PROTECTED_PATHS),
    sandboxEnabled: asBoolean(true)(user('speculate.sandbox.enabled')),
    sandboxTimeoutMs: narrowedValue(inspect('sandbox.timeoutSeconds'), trusted, clamped(5, 3600, 120), Math.min) * 1000,
    subAgentModel: restricted('subAgent.model') === 'main' ? 'main' : 'fast',
    sandboxMaxWriteBytes: narrowedValue(inspect('sandbox.maxWriteMegabytes'), trusted, clamped(1, 4096, 256), Math.min) * 1024 * 1024,
  };
}

/**
 * Writes a model choice where it takes effect: into the workspace when a trusted workspace sets
 * it already (so its value does not silently shadow the choice), else into the user settings.
 */
export async function updateSetting(key: 'model' | 'fastModel', value: string, trusted: boolean): Promise<void> {
  const config = vscode.workspace.getConfiguration('speculate');
  const inspected = config.inspect(key);
  const target = trusted && inspected?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update(key, value, target);
}
