// Checkpoints: what each accept and each agent turn changed, kept on disk, with undo and redo.
// The module's exports; the session, the CLI and the editor use only these.
export { CheckpointStore, workspaceKey, type CheckpointStoreOptions, type CheckpointReadResult } from './store';
export { CheckpointRecording, type CaptureRequest, type CaptureResult } from './recording';
export { RecordingWorkspaceFs, CheckpointSaveError } from './recordingFs';
export { RestoreError, type RestoreConflict, type RestoreConflictReason, type RestoreOutcome, type RestorePlan, type RestoreOptions } from './restore';
export { isPlainCheckpointId, summaryOf, changeKindOf, type CheckpointOrigin, type CheckpointRecord, type CheckpointSummary, type ChangeKind } from './record';
export { defaultStateDir } from './stateDir';
export { DEFAULT_PRUNE_LIMITS, type PruneLimits, type PruneReport } from './prune';
export type { CheckpointRecoveryReport } from './recovery';
export type { FileState } from './fileState';
export { CheckpointFolderError } from './privateDir';
