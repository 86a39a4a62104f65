// "Changes" on a turn's line: the multi-file diff of exactly the files that step changed, each its
// saved copy from before (speculate-checkpoint:) against the file now (file:), or what undo replaced.
import * as vscode from 'vscode';
import type { CheckpointRecord, CheckpointStore } from '../../core/checkpoints';
import { checkpointUri } from './checkpointDocuments';

const MAX_TITLE = 60;

export function checkpointLabel(record: Pick<CheckpointRecord, 'origin'>): string {
  const words = record.origin.kind === 'accept' ? record.origin.suggestion : record.origin.prompt;
  const line = words.replace(/\s+/g, ' ').trim() || 'a turn';
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1)}…` : line;
}

/**
 * [resource, left, right] per file, as `vscode.changes` takes them; a side that does not exist is
 * left out (undefined), so the editor shows the file as added or deleted rather than renamed.
 */
export function changeTriples(record: CheckpointRecord, workspace: vscode.Uri): [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined][] {
  return record.files.map((file) => {
    const real = vscode.Uri.joinPath(workspace, ...file.path.split('/'));
    const left = file.before.exists ? checkpointUri(record.id, 'before', file.path) : undefined;
    let right: vscode.Uri | undefined;
    if (record.state === 'undone') {
      // The file is back as before: its "after" is the copy the undo saved.
      const replaced = record.undo?.paths.find((p) => p.path === file.path)?.replaced ?? file.after;
      right = replaced?.exists ? checkpointUri(record.id, 'after', file.path) : undefined;
    } else {
      right = file.after?.exists ? real : undefined;
    }
    return [real, left, right];
  });
}

/** Opens the review; returns the record shown (undefined when it could not be read). */
export async function openCheckpointChanges(store: CheckpointStore, checkpointId: string, workspace: vscode.Uri): Promise<CheckpointRecord | undefined> {
  const read = await store.read(checkpointId);
  if (!read.ok) {
    void vscode.window.showWarningMessage(`Speculate: ${read.message}`);
    return undefined;
  }
  const record = read.record;
  const title = `Changes: ${checkpointLabel(record)}${record.state === 'undone' ? ' (undone)' : ''}`;
  await vscode.commands.executeCommand('vscode.changes', title, changeTriples(record, workspace));
  return record;
}
