// The speculation engine: runs a shown suggestion ahead of the user, forked from the main chat's
// CacheSafeParams, with every write in a copy-on-write overlay and every tool call through the gate.
// It never touches the main conversation: accept and abort hand results to the caller (the session).
import type { AssistantMessage, ChatMessage, ToolCall, ToolMessage } from '../messages';
import { describeProtected, ProtectedPathError } from '../fs/protectedPaths';
import { EngineFault, PathOutsideWorkspaceError, type WorkspaceFs } from '../fs/workspaceFs';
import { LlmError, type Usage } from '../llm/llmClient';
import { parseToolArguments } from '../llm/toolArguments';
import { commandNeeds } from '../sandbox/commandNeeds';
import type { SandboxRun } from '../tools/types';
import { runForkedQuery } from './forkedQuery';
import { gateNestedCall, gateToolCall, type Boundary } from './speculationToolGate';
import { ensureToolResultPairing } from '../messages/pairing';
import type { CheckpointRecording } from '../checkpoints';
import { checkpointHook } from './acceptCheckpoint';
import { recoverCutOff } from '../chat/lengthRecovery';
import { dropSpeculatedHunk, HunkDropRecord, speculatedHunks, type DroppedHunks } from './hunkDrops';
import { notedForInjection } from './injectionNotes';
import type { Hunk } from '../checkpoints/hunks';
import { processLock } from '../fs/workspaceLock';
import { CommitAhead, type CommittedAhead } from './commitAhead';
import { createOverlayWorded } from './overlay/overlayErrors';
import { SharedSandbox } from './sharedSandbox';
import { MAX_SPECULATION_MESSAGES, MAX_SPECULATION_TURNS, type ApplyResult, type SpeculationEvent, type SpeculationOptions, type SpeculationOverlay, type SpeculationSnapshot, type SpeculationStatus, type ToolCallRecord } from './speculationTypes';

export * from './speculationTypes';

let nextRunNumber = 1;

function emptyUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
}

/**
 * One speculative run. Created by startSpeculation; the caller keeps it until accept or abort.
 */
export class Speculation {
  readonly id: string;
  private status: SpeculationStatus = 'running';
  private boundary: Boundary | null = null;
  private readonly toolCalls: ToolCallRecord[] = [];
  private readonly messages: ChatMessage[];
  private pipelinedSuggestion: string | null = null;
  private error: string | null = null;
  private errorReason: string | null = null;
  private readonly startedAt: number;
  private finishedAt: number | null = null;
  private readonly usage = emptyUsage();
  private turns = 0;
  private overlay: SpeculationOverlay | undefined;
  private readonly controller = new AbortController();
  /** Ends when the run does (any way): the sandbox its shell commands share ends with it. */
  private readonly sharedSandbox: SharedSandbox;
  private readonly listeners = new Set<(event: SpeculationEvent) => void>();
  /** Hunks the user dropped before Tab, per file (the overlay already holds the files without them). */
  private readonly droppedHunkRecord = new HunkDropRecord();
  /** Settles when the run has stopped (any final status) and its pipelined suggestion is known. */
  readonly done: Promise<SpeculationSnapshot>;
  /** Its git commands' private .git and what Tab would commit (commit ahead); opened at the first. */
  private readonly commitAhead = new CommitAhead();

  constructor(readonly suggestion: string, private readonly options: SpeculationOptions) {
    this.id = `spec-${process.pid}-${nextRunNumber++}-${Math.random().toString(36).slice(2, 8)}`;
    this.startedAt = this.now();
    this.sharedSandbox = new SharedSandbox(this.id, options.toolContext);
    this.messages = [{ role: 'user', content: suggestion }];
    if (options.onEvent) this.listeners.add(options.onEvent);
    this.done = this.run();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Subscribes to progress; returns an unsubscribe function. */
  subscribe(listener: (event: SpeculationEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: SpeculationEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.options.log?.(`speculation listener failed: ${String(error)}`);
      }
    }
  }

  private emitStatus(): void {
    this.emit({ type: 'status', snapshot: this.snapshot() });
  }

  get overlayFs(): SpeculationOverlay | undefined {
    return this.overlay;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  snapshot(): SpeculationSnapshot {
    return {
      id: this.id,
      suggestion: this.suggestion,
      status: this.status,
      boundary: this.boundary ? { ...this.boundary } : null,
      toolCalls: this.toolCalls.map((record) => ({
        ...record,
        args: record.args ? structuredClone(record.args) : null,
        ...(record.sandboxed ? { sandboxed: { writable: record.sandboxed.writable, changed: [...record.sandboxed.changed] } } : {}),
      })),
      filesWritten: this.overlay?.writtenFiles() ?? [],
      messages: structuredClone(this.messages),
      pipelinedSuggestion: this.pipelinedSuggestion,
      error: this.error,
      errorReason: this.errorReason,
      startedAt: this.startedAt,
      finishedAt: this.finishedAt,
      usage: { ...this.usage },
      turns: this.turns,
      commitAhead: this.commitAhead.preview,
    };
  }

  /** How long the user did not wait: the run's duration up to completion, or up to now. */
  timeSavedMs(at = this.now()): number {
    return Math.max(0, (this.finishedAt ?? at) - this.startedAt);
  }

  /** Stops the run: closes the model request, deletes the overlay. Idempotent. */
  async abort(): Promise<void> {
    if (this.status === 'running') {
      this.status = 'aborted';
      this.finishedAt = this.now();
    }
    this.controller.abort();
    await this.done.catch(() => undefined);
    await this.disposeOverlay();
  }

  /** Deletes the overlay (after accept or abort). */
  async disposeOverlay(): Promise<void> {
    const overlay = this.overlay;
    try {
      await overlay?.cleanup();
    } catch (error) {
      this.options.log?.(`overlay cleanup failed: ${String(error)}`);
    }
    // After the overlay, as before commit ahead: its private git layer (if it opened one) goes too.
    await this.commitAhead.dispose();
  }

  private finish(status: Exclude<SpeculationStatus, 'running'>, detail?: { boundary?: Boundary; error?: string; errorReason?: string }): void {
    if (this.status !== 'running') return;
    this.status = status;
    this.boundary = detail?.boundary ?? null;
    this.error = detail?.error ?? null;
    this.errorReason = detail?.errorReason ?? detail?.error ?? null;
    this.finishedAt = this.now();
  }

  private async run(): Promise<SpeculationSnapshot> {
    try {
      this.overlay = await createOverlayWorded(this.options.createOverlay, this.options.log);
      this.sharedSandbox.prepare(this.overlay.root);
      await this.loop();
      await this.sharedSandbox.end();
      if (this.status === 'completed' && this.options.generatePipelinedSuggestion && !this.controller.signal.aborted) {
        const conversation = [...this.options.params.history, ...this.messages];
        try {
          this.pipelinedSuggestion = await this.options.generatePipelinedSuggestion(structuredClone(conversation), this.controller.signal);
        } catch (error) {
          this.options.log?.(`pipelined suggestion failed: ${String(error)}`);
        }
      }
    } catch (error) {
      // Fail open: whatever went wrong, the run stops and the normal path stays untouched.
      if (this.controller.signal.aborted || (error instanceof LlmError && error.kind === 'aborted')) this.finish('aborted');
      else {
        const message = error instanceof Error ? error.message : String(error);
        this.finish('failed', { error: message, errorReason: error instanceof LlmError ? error.reason : message });
      }
      this.options.log?.(`speculation ${this.id} ${this.status}: ${this.error ?? 'aborted'}`);
    }
    await this.sharedSandbox.end();
    if (this.status === 'aborted' || this.status === 'failed') await this.disposeOverlay();
    this.emitStatus();
    return this.snapshot();
  }

  private async loop(): Promise<void> {
    const maxTurns = Math.min(this.options.maxTurns ?? MAX_SPECULATION_TURNS, MAX_SPECULATION_TURNS);
    const maxMessages = Math.min(this.options.maxMessages ?? MAX_SPECULATION_MESSAGES, MAX_SPECULATION_MESSAGES);
    // As in the main chat: one recovery from an answer cut inside a tool call, its retry with a higher limit.
    let cutOffRetried = false;
    let maxTokens: number | undefined;
    for (;;) {
      if (this.controller.signal.aborted) return this.finish('aborted');
      if (this.turns >= maxTurns) {
        return this.finish('boundary', { boundary: { type: 'limit', tool: '', detail: `stopped after ${maxTurns} model turns` } });
      }
      if (this.messages.length >= maxMessages) {
        return this.finish('boundary', { boundary: { type: 'limit', tool: '', detail: `stopped after ${maxMessages} messages` } });
      }
      this.turns++;
      this.emit({ type: 'assistant_start' });
      const turn = await this.streamTurn(maxTokens, !cutOffRetried);
      if (this.controller.signal.aborted) return this.finish('aborted');
      if (turn.cutOff) {
        cutOffRetried = true;
        const recovery = recoverCutOff(turn.message, turn.completionTokens, turn.finishReason);
        this.messages.push(recovery.message, ...recovery.results);
        maxTokens = recovery.maxTokens;
        this.emitStatus();
        continue;
      }
      maxTokens = undefined;
      const assistant = turn.message;
      const calls = assistant.tool_calls ?? [];
      if (calls.length === 0) {
        this.messages.push(assistant);
        this.emitStatus();
        return this.finish('completed');
      }
      const stop = await this.runToolCalls(assistant, calls, maxMessages);
      this.emitStatus();
      if (stop) return this.finish('boundary', { boundary: stop });
    }
  }

  /** One model round trip as a fork: the main chat's exact prefix, then the speculated messages. */
  private async streamTurn(maxTokens: number | undefined, recoverCutToolCalls: boolean): Promise<{ message: AssistantMessage; cutOff: boolean; completionTokens: number; finishReason: string | null }> {
    const { message, usage, cutOff, finishReason } = await runForkedQuery({
      params: this.options.params,
      llm: this.options.llm,
      extraMessages: this.messages,
      ...(this.options.model ? { model: this.options.model } : {}),
      signal: this.controller.signal,
      recoverCutToolCalls,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      onEvent: (event) => {
        if (event.type === 'text' && !this.controller.signal.aborted) this.emit({ type: 'text', delta: event.delta });
      },
    });
    if (this.controller.signal.aborted) throw new LlmError('aborted', 'Speculation aborted.');
    this.usage.promptTokens += usage.promptTokens;
    this.usage.completionTokens += usage.completionTokens;
    this.usage.cachedTokens += usage.cachedTokens;
    return { message, cutOff: cutOff === true, completionTokens: usage.completionTokens, finishReason };
  }

  /**
   * Runs one assistant message's tool calls in order through the gate. At a boundary the calls
   * already executed are kept (by index), the rest are removed from the assistant message, and the
   * partial results join the history. Returns the boundary, or undefined when all calls ran.
   */
  private async runToolCalls(assistant: AssistantMessage, calls: ToolCall[], maxMessages: number): Promise<Boundary | undefined> {
    const results: ToolMessage[] = [];
    const executedCalls: ToolCall[] = [];
    let stop: Boundary | undefined;
    for (const call of calls) {
      if (this.controller.signal.aborted) throw new LlmError('aborted', 'Speculation aborted.');
      if (this.messages.length + 1 + results.length + 1 > maxMessages) {
        stop = { type: 'limit', tool: call.function.name, detail: `stopped after ${maxMessages} messages` };
        break;
      }
      const record = await this.runOneCall(call);
      if (!record.executed) {
        stop = this.boundaryOf(record);
        break;
      }
      executedCalls.push(call);
      results.push({ role: 'tool', tool_call_id: call.id, content: record.result ?? '' });
    }
    if (executedCalls.length > 0) {
      this.messages.push({ ...assistant, tool_calls: executedCalls }, ...results);
    }
    // With no call executed, the turn's assistant message is dropped whole: the live continuation
    // after accept will produce it again, with the tool call going through approval as usual.
    this.messages.splice(0, this.messages.length, ...ensureToolResultPairing(this.messages));
    return stop;
  }

  private readonly boundaries = new Map<number, Boundary>();
  /** Workspace paths each executed call wrote (by call id), so a note lands only on the right results. */
  private readonly filesChangedBy = new Map<string, string[]>();

  private boundaryOf(record: ToolCallRecord): Boundary {
    return this.boundaries.get(record.index) ?? { type: 'unknown_tool', tool: record.name, detail: 'stopped' };
  }

  private async runOneCall(call: ToolCall): Promise<ToolCallRecord> {
    const tool = this.options.tools.get(call.function.name);
    const parsed = parseToolArguments(call.function.arguments);
    const record: ToolCallRecord = {
      index: this.toolCalls.length,
      id: call.id,
      name: call.function.name,
      args: parsed.ok ? parsed.args : null,
      rawArgs: call.function.arguments,
      summary: '',
      decision: 'boundary',
      executed: false,
      ok: null,
      result: null,
    };
    this.toolCalls.push(record);
    const overlay = this.overlay!;
    if (!parsed.ok) {
      // Malformed arguments change nothing: the model gets the error, as in the main chat.
      record.decision = 'allow';
      record.executed = true;
      record.ok = false;
      record.result = `Error: the arguments of ${call.function.name} are not valid JSON (${parsed.error}). Send the call again with valid JSON arguments.`;
      this.emit({ type: 'tool_end', record: { ...record } });
      return record;
    }
    try {
      record.summary = tool ? tool.summarize(parsed.args) : call.function.name;
    } catch {
      record.summary = call.function.name;
    }
    const sandbox = tool?.kind === 'shell' ? await this.sharedSandbox.availability() : undefined;
    const decision = await gateToolCall(call.function.name, tool, parsed.args, {
      approvalMode: this.options.approvalMode,
      fs: overlay,
      overlayHasWrites: overlay.writtenFiles().length > 0,
      classifyShell: this.options.classifyShell,
      protectedPaths: this.options.toolContext?.protectedPaths,
      ...(sandbox ? { sandboxAvailable: sandbox.available, commandNeeds, gitAhead: true, ...(sandbox.available ? { sandboxWrites: sandbox.writes, ...(sandbox.why ? { sandboxWhy: sandbox.why } : {}) } : {}) } : {}),
    });
    record.decision = decision.decision;
    if (decision.decision === 'boundary') {
      const stop = decision.boundary;
      // Where the machine has no sandbox, say why commands stop here and what would change that.
      if (stop.type === 'shell' && sandbox && !sandbox.available) {
        stop.detail = `${stop.detail}. Commands that change files stop speculation here: ${sandbox.reason}.${sandbox.action ? ` ${sandbox.action}` : ''}`;
      }
      this.boundaries.set(record.index, stop);
      return record;
    }
    this.emit({ type: 'tool_start', record: { ...record } });
    try {
      // Nothing here was approved by the user: a shell command runs only because the gate found it
      // read-only (in the environment that verdict assumes), or in the sandbox over the overlay.
      const sandboxRun = decision.decision === 'sandbox' ? this.sandboxRun(overlay, decision.writable, decision.git === true) : undefined;
      const result = await tool!.execute(parsed.args, {
        ...this.options.toolContext,
        fs: overlay,
        signal: this.controller.signal,
        approvedAsReadOnly: sandboxRun === undefined,
        ...(sandboxRun ? { sandboxRun } : {}),
        // A sub-agent's own calls: each must pass this gate, or the agent call is a boundary.
        speculationGate: (name, args) =>
          gateNestedCall(name, this.options.tools.get(name), args, {
            approvalMode: this.options.approvalMode,
            fs: overlay,
            overlayHasWrites: overlay.writtenFiles().length > 0,
            classifyShell: this.options.classifyShell,
            protectedPaths: this.options.toolContext?.protectedPaths,
          }),
      });
      if (result.usage) {
        this.usage.promptTokens += result.usage.promptTokens;
        this.usage.completionTokens += result.usage.completionTokens;
        this.usage.cachedTokens += result.usage.cachedTokens;
      }
      if (result.boundary !== undefined) {
        // It ran, but not as it would for real (the sandbox was in its way, a sub-agent's call): stop before it; the live agent runs it after Tab.
        const command = typeof parsed.args.command === 'string' ? parsed.args.command : call.function.name;
        record.decision = 'boundary';
        const stop: Boundary = tool!.kind === 'shell'
          ? { type: 'shell', tool: call.function.name, detail: `\`${command}\` ${result.boundary}` }
          : { type: 'denied_tool', tool: call.function.name, detail: result.boundary };
        this.boundaries.set(record.index, stop);
        this.emit({ type: 'tool_end', record: { ...record } });
        return record;
      }
      record.executed = true;
      record.ok = result.ok;
      record.result = result.output;
      if (result.sandboxed) record.sandboxed = { writable: result.sandboxed.writable, changed: [...result.sandboxed.changed] };
      if (result.filesChanged?.length) {
        this.filesChangedBy.set(call.id, [...result.filesChanged]);
        this.sharedSandbox.refresh(overlay);
      }
    } catch (error) {
      if (error instanceof PathOutsideWorkspaceError) {
        // Path rewriting that fails is a boundary, like any path outside the workspace.
        record.decision = 'boundary';
        this.boundaries.set(record.index, { type: 'path', tool: call.function.name, detail: error.message });
        return record;
      }
      if (error instanceof ProtectedPathError) {
        // The overlay refused a protected path the gate could not see coming: a boundary all the same.
        record.decision = 'boundary';
        this.boundaries.set(record.index, { type: 'edit', tool: call.function.name, detail: `${describeProtected(error.match)}; writing it needs your approval` });
        return record;
      }
      // The engine's own failure (the overlay's disk): the run fails; the model never sees it.
      if (error instanceof EngineFault) throw error;
      if (this.controller.signal.aborted) throw new LlmError('aborted', 'Speculation aborted.');
      record.executed = true;
      record.ok = false;
      record.result = `Error: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.emit({ type: 'tool_end', record: { ...record } });
    return record;
  }

  /** How a `sandbox` decision runs: over this overlay (writable or read-only); the overlay refuses protected paths. */
  private sandboxRun(overlay: SpeculationOverlay, writable: boolean, git: boolean): SandboxRun {
    return {
      writable,
      target: { layer: () => overlay.sandboxLayer(), apply: (changes, startedAt) => overlay.applySandboxChanges(changes, startedAt) },
      // Every other command sees the commits made ahead so far, read-only (git log, git status).
      git: this.commitAhead.target(overlay.root, () => this.emitStatus(), !git),
      session: this.sharedSandbox.session,
    };
  }

  /**
   * Accept step 1: applies the overlay to the workspace. Conflicting files are not written; the
   * caller decides (overwrite / keep mine) and may call again with `overwrite` or `skip`. With a
   * `checkpoint`, the state of every file about to be replaced is saved in it (durably) before the
   * first is replaced, from what the accept's own check found; the caller finishes the checkpoint
   * with the applied paths.
   */
  async apply(options: { overwrite?: readonly string[]; skip?: readonly string[]; checkpoint?: CheckpointRecording } = {}): Promise<ApplyResult> {
    if (this.status === 'running' || this.status === 'aborted' || this.status === 'failed') {
      throw new Error(`A ${this.status} speculation cannot be applied.`);
    }
    if (!this.overlay) return { applied: [], conflicts: [] };
    const { checkpoint, ...applyOptions } = options;
    // Commit ahead first (once): a conflict there stops the accept before any file is written.
    const gitNote = await this.commitAhead.applyOnce({ lock: this.overlay.writerLock ?? processLock(this.overlay.root), ...(checkpoint ? { checkpoint } : {}) });
    const beforeReplace = checkpoint ? checkpointHook(checkpoint, new Set(options.overwrite ?? [])) : undefined;
    // The checkpoint's folder holds the accept's redo log: its before-state rides in the same append.
    const applied = await this.overlay.applyToReal({ ...applyOptions, ...(beforeReplace && checkpoint ? { beforeReplace, redoDir: checkpoint.redoDir } : {}) });
    return gitNote ? { ...applied, git: gitNote } : applied;
  }

  /** What the accept did in the repository, once it applied a commit made ahead. */
  get committedAhead(): CommittedAhead | null {
    return this.commitAhead.applied;
  }

  /** The hunks of a modified file against the real workspace's `real` copy (what the preview diff shows). */
  hunksOf(path: string, real: WorkspaceFs): Promise<Hunk[]> {
    if (!this.overlay) throw new Error('This speculation has no files yet.');
    return speculatedHunks(this.overlay, real, path);
  }

  /**
   * Drops one hunk before Tab: the overlay's copy of `path` is rewritten without it (an overlay
   * write like any other, so Tab checks it for conflicts the same way), and the drop is recorded
   * for the note the injected turns carry. Only a finished run: a running one could write it again.
   */
  async dropHunk(path: string, hunkId: string, real: WorkspaceFs): Promise<DroppedHunks> {
    if (this.status === 'running') throw new Error('The speculation is still running; drop its changes once it has finished.');
    if (this.status === 'aborted' || this.status === 'failed' || !this.overlay) throw new Error(`A ${this.status} speculation has no changes to drop.`);
    const { hunk, before } = await dropSpeculatedHunk(this.overlay, real, path, hunkId);
    this.droppedHunkRecord.add(path, hunk, before + this.droppedHunkRecord.droppedIn(path));
    this.emitStatus();
    return this.droppedHunks().find((entry) => entry.path === path)!;
  }

  /** What the user dropped before Tab, per file, sorted by path. */
  droppedHunks(): DroppedHunks[] {
    return this.droppedHunkRecord.list();
  }

  /**
   * The speculated messages, paired and ready to join the main conversation, with notes on the
   * results of the calls whose files the user kept, left out or trimmed (injectionNotes.ts).
   */
  messagesForInjection(notApplied: readonly string[] = [], excluded: readonly string[] = []): ChatMessage[] {
    return notedForInjection(ensureToolResultPairing(this.messages), this.filesChangedBy, this.droppedHunks(), notApplied, excluded);
  }
}

/** Starts speculating on a suggestion in the background. */
export function startSpeculation(suggestion: string, options: SpeculationOptions): Speculation {
  return new Speculation(suggestion, options);
}

/** Aborts a run: closes its request and deletes its overlay. */
export async function abortSpeculation(speculation: Speculation | undefined): Promise<void> {
  await speculation?.abort();
}
