// Read-only classification of bash commands for the speculation tool gate, the auto-edit approval
// and the CLI shell-check command; plus the environment that neutralises git's program hooks.
export { isShellCommandReadOnly, type ShellCheckContext } from './classify';
export { configureShellParser, type ShellParserOptions } from './parser';
export { gitNeutralisingEnv } from './gitEnv';
export type { ShellVerdict } from './verdict';
