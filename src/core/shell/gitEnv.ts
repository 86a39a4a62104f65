// Environment for commands run because the classifier called them read-only: it switches off the
// programs a repository's own config can make read-only git commands run. What it cannot switch
// off (per-driver diff.<d>.textconv / diff.<d>.command / filter.<d>.clean, whose names are only
// known to the repository) is handled by the classifier (--no-textconv, --no-ext-diff) or noted
// in the docs: clean filters still run when git status/diff compare the working tree.

/** Single-valued settings that override the repository's (command-scope config wins). */
const CONFIG_OVERRIDES: ReadonlyArray<readonly [key: string, value: string]> = [
  ['core.fsmonitor', 'false'], // runs a hook program on every status/diff/ls-files
  ['core.hooksPath', '/dev/null'], // post-index-change runs when status refreshes the index
  ['core.pager', 'cat'],
  ['log.showSignature', 'false'], // would run gpg on signed commits
  ['gpg.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['core.sshCommand', 'false'],
  ['protocol.allow', 'never'], // no transport at all (ext:: runs commands)
];

/**
 * Variables to add to the environment of a command the classifier accepted. diff.external cannot
 * be set empty here (git then fails every diff trying to run ""), so the classifier requires
 * --no-ext-diff instead. Replace objects only change which objects git shows and run nothing, so
 * GIT_NO_REPLACE_OBJECTS is not needed.
 */
export function gitNeutralisingEnv(): Record<string, string> {
  const env: Record<string, string> = {
    GIT_CONFIG_COUNT: String(CONFIG_OVERRIDES.length),
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_OPTIONAL_LOCKS: '0', // status must not rewrite .git/index
    GIT_TERMINAL_PROMPT: '0',
    GIT_EDITOR: 'false',
    GIT_SEQUENCE_EDITOR: 'false',
    GIT_ASKPASS: 'false',
  };
  CONFIG_OVERRIDES.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}
