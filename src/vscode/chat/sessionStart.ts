// Starts the chat session for a folder: the workspace's services (tools, sandbox, instructions, MCP
// tools after the built-ins), its checkpoint store, and the session over them with the window's settings.
import * as vscode from 'vscode';
import type { ApprovalPrompter } from '../../core/chat/approvals';
import { ChatSession } from '../../core/session';
import type { SpeculateStats } from '../../core/stats/speculateStats';
import { urlTemplateSearchProvider } from '../../core/tools/urlTemplateSearch';
import { openWorkspaceServices, type WorkspaceServices, type WorkspaceServicesOptions } from '../../core/workspaceServices';
import { openCheckpointStore } from '../checkpoints/checkpointStorage';
import type { SettingsLlmClient } from '../setup/endpoint';
import type { HostSettings } from '../setup/hostSettings';
import { EditorLspProvider } from './lspProvider';
import { memoryDir } from './memoryFile';

export interface SessionStartDeps {
  context: vscode.ExtensionContext;
  output: vscode.LogOutputChannel;
  /** Settles when the start-up recovery of crashed accepts is done (checkpoint recovery waits for it). */
  housekeeping: Promise<void>;
  host: HostSettings;
  llm: SettingsLlmClient;
  prompter: ApprovalPrompter;
  stats: SpeculateStats;
  mcpTools?: WorkspaceServicesOptions['extraTools'];
  /** A warning for the chat (checkpoints off in this window). */
  notice(text: string): void;
}

export async function startChatSession(
  folder: vscode.WorkspaceFolder,
  otherFolders: readonly vscode.WorkspaceFolder[],
  deps: SessionStartDeps,
): Promise<{ session: ChatSession; services: WorkspaceServices }> {
  const { host } = deps;
  const memory = memoryDir(deps.context);
  const services = await openWorkspaceServices(folder.uri.fsPath, {
    protectedPaths: host.settings.protectedPaths,
    otherWorkspaces: otherFolders.map((f) => f.uri.fsPath),
    toolContext: {
      lsp: new EditorLspProvider(folder.uri),
      // Reads the setting on each search, so configuring it later needs no reload.
      webSearch: urlTemplateSearchProvider(() => host.settings.webSearchUrl),
    },
    sandbox: host.sandboxSettings(),
    ...(memory ? { memoryDir: memory } : {}),
    ...(deps.mcpTools ? { extraTools: deps.mcpTools } : {}),
  });
  const checkpoints = await openCheckpointStore(deps.context, services.fs.root, deps.output, deps.housekeeping);
  if (!checkpoints.store) deps.notice(`Checkpoints are off in this window (${checkpoints.error}); changes cannot be undone from the chat.`);
  for (const warning of services.warnings) deps.output.warn(warning);
  const session = new ChatSession({
    llm: deps.llm,
    config: host.sessionConfig(),
    systemPrompt: services.systemPrompt,
    tools: services.tools,
    toolContext: services.toolContext,
    prompter: deps.prompter,
    classifyShell: services.classifyShell,
    createOverlay: services.createOverlay,
    turnContext: services.turnContext,
    // Restricted Mode keeps plan mode: an approved plan cannot switch an untrusted folder to edits.
    planExitBlocked: () => (host.trusted ? undefined : 'this folder is in Restricted Mode, where Speculate only reads. Trust the folder to let it carry out the plan.'),
    ...(checkpoints.store ? { checkpoints: checkpoints.store } : {}),
    stats: deps.stats,
    log: (line) => deps.output.info(line),
  });
  return { session, services };
}
