// What an overlay is made with: the real workspace under it, where its private folder may go, the
// protected paths it refuses, the locks and disk operations its accept shares, the clock.
import type { Placer } from '../../fs/paths';
import type { ProtectedPaths } from '../../fs/protectedPaths';
import type { WorkspaceFs } from '../../fs/workspaceFs';
import type { WorkspaceLock } from '../../fs/workspaceLock';
import type { ApplyFs } from './applyFs';
import type { ApplyStepHook } from './applyOverlay';

export interface OverlayFsOptions {
  /** The real workspace; reads fall through to it and accept writes to its root. */
  base: WorkspaceFs & Placer;
  /**
   * The temp folder under which `speculate-<uid>/<pid>/<id>/` is created; defaults to the OS temp
   * folder. When it lies inside the workspace (or `avoidRoots`), a fallback outside is taken.
   */
  tmpRoot?: string;
  /** Tried in order when tmpRoot lies inside a workspace; fallbackTempFolders() by default. */
  fallbackTmpRoots?: readonly string[];
  /** Other open workspaces the overlay must not live in (the base's own root always counts). */
  avoidRoots?: readonly string[];
  /**
   * speculate.protectedPaths (TOOLS.md's defaults when absent): a change to one of them is refused
   * with ProtectedPathError, whoever asks, so nothing that runs programs or holds secrets is ever
   * in an overlay to be applied by Tab.
   */
  protectedPaths?: ProtectedPaths;
  /**
   * The workspace lock held from an accept's check to its last rename (every accept and live
   * write into the folder takes it); by default the one this process shares for the folder.
   */
  lock?: WorkspaceLock;
  /** Names the overlay folder; defaults to a random UUID. */
  id?: string;
  /** Defaults to this process; stale cleanup removes folders of pids that no longer run. */
  pid?: number;
  /** Disk operations of accept; tests inject faults here. */
  applyFs?: ApplyFs;
  /**
   * The state folder accepts keep their redo log in (one fsync commits an accept; see applyEntries).
   * An accept with a checkpoint uses the checkpoint's folder; without either, the journal in the overlay.
   */
  redoDir?: string;
  /** Called after each staged and committed file of an accept; a throw acts like a crash (tests). */
  onApplyStep?: ApplyStepHook;
  /**
   * The wall clock files' times are compared with, to tell a file that changed just now (whose
   * next change may keep its times) from one that is sure to show any change; tests move it on.
   */
  clock?: () => number;
}
