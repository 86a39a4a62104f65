// Environment for commands run because the classifier called them read-only: single git settings
// that override the repository's (command-scope config wins, and git hands it down to the child
// gits it starts in submodules). Per-driver programs (filters, diff drivers, textconv) are named by
// the repository, so the git wrapper (src/core/process/gitWrapper.ts) switches those off.

/** Single-valued settings that override the repository's. */
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
  // git diff rewrites .git/index after a stat refresh whatever GIT_OPTIONAL_LOCKS says.
  ['diff.autoRefreshIndex', 'false'],
  // A submodule's patches come from a child git that the wrapper's --no-ext-diff does not reach.
  ['diff.submodule', 'short'],
  // -m and --diff-merges=on take their format from here; "remerge" re-merges, running merge drivers.
  ['log.diffMerges', 'separate'],
  // Files git reads lines of and can echo back (check-ignore -v, attributes, mailmap): none outside.
  ['core.excludesFile', '/dev/null'],
  ['core.attributesFile', '/dev/null'],
  ['mailmap.file', '/dev/null'],
];

/**
 * Variables to add to the environment of a command the classifier accepted. Replace objects only
 * change which objects git shows and run nothing, so GIT_NO_REPLACE_OBJECTS is not needed.
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
    GIT_ATTR_NOSYSTEM: '1',
    // The user's own config stays out of unattended runs: it may hold tokens (url.insteadOf,
    // http.extraHeader) that `git remote -v` or `git config --list` would print.
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
  };
  CONFIG_OVERRIDES.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}
