// Environment for commands run because the classifier called them read-only: it switches off the
// programs a repository's own config can make read-only git commands run. Per-driver settings are
// named by the repository, so they need its list: filter drivers (clean/smudge/process, which run
// whenever git status or diff re-reads a working-tree file) are switched off from the output of
// GIT_FILTER_SETTINGS_QUERY; diff drivers (textconv, command) cannot be emptied without breaking
// every diff, so the classifier requires --no-textconv / --no-ext-diff instead.

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
 * git arguments (run in the command's working directory, with gitNeutralisingEnv()) that print the
 * names of the repository's filter-driver programs, one per line; `git config` itself runs none.
 * Exit code 1 with no output means there are none.
 */
export const GIT_FILTER_SETTINGS_QUERY: readonly string[] = ['config', '--name-only', '--get-regexp', '^filter\\..+\\.(clean|smudge|process)$'];

const FILTER_SETTING = /^filter\..+\.(?:clean|smudge|process)$/i;

/**
 * Variables to add to the environment of a command the classifier accepted. `filterSettings` are
 * the lines GIT_FILTER_SETTINGS_QUERY printed; each is overridden with an empty value, which git
 * reads as "no filter". diff.external cannot be emptied (git then fails every diff trying to run
 * ""), so the classifier requires --no-ext-diff. Replace objects only change which objects git
 * shows and run nothing, so GIT_NO_REPLACE_OBJECTS is not needed.
 */
export function gitNeutralisingEnv(filterSettings: readonly string[] = []): Record<string, string> {
  const overrides: Array<readonly [string, string]> = [...CONFIG_OVERRIDES];
  for (const line of filterSettings) {
    const key = line.trim();
    if (FILTER_SETTING.test(key)) overrides.push([key, '']);
  }
  const env: Record<string, string> = {
    GIT_CONFIG_COUNT: String(overrides.length),
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_OPTIONAL_LOCKS: '0', // status must not rewrite .git/index
    GIT_TERMINAL_PROMPT: '0',
    GIT_EDITOR: 'false',
    GIT_SEQUENCE_EDITOR: 'false',
    GIT_ASKPASS: 'false',
  };
  overrides.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}
