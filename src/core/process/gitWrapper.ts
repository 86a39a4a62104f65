// The `git` that commands run without approval find first on their PATH: a small bash script in a
// private folder that switches off what git's config and attributes can make it run, then execs git.
//
// What a read-only git can run, and how each is stopped (the rule, derived from git itself):
// - Diff programs (diff.external, diff.<driver>.command) and textconv filters
//   (diff.<driver>.textconv) run wherever git renders file contents: every patch (diff, log -p,
//   show, whatchanged, stash list/show -p, reflog -p, the -m/-c/--cc/--diff-merges forms), blame,
//   grep. They are per-driver settings that cannot be emptied (an empty program fails the diff), so
//   the wrapper puts --no-ext-diff --no-textconv (blame, grep: --no-textconv) right after each such
//   subcommand. A child git that renders a submodule's patches (--submodule=diff) would not get
//   them: the classifier refuses that option and gitNeutralisingEnv sets diff.submodule=short.
// - Filter drivers (filter.<driver>.clean/smudge/process) run whenever git hashes a working-tree
//   file (status, diff, blame, ls-files -m …), also in child gits for every submodule. Each one
//   the repository git runs in defines, or any of its checked-out submodules (recursively), is set
//   to the empty program ("no filter") through GIT_CONFIG_COUNT, which git hands down to the
//   submodules' child processes. The lookup starts at the repository git itself finds (-C, cd
//   and nested repositories included).
// - Files outside the workspace: git must not show a work tree or repository data from elsewhere
//   (core.worktree, a planted .git file or commondir, a repository above the workspace), so the
//   wrapper refuses unless both are the workspace's own (a linked worktree whose repository
//   registered this work tree counts as its own); blame gets --no-ignore-revs-file and config
//   --no-includes (a config include can name any file, and `git config --list` would print it).
// - Objects from elsewhere: an alternates file (objects/info/alternates, which `git clone --shared`
//   or `--reference` writes, followed by git recursively) or a symlink in the object store would let
//   `git cat-file --batch-all-objects` or `log --all` show another repository's files. Every
//   alternate must lie inside the workspace, and the object store may hold no symlink; this holds
//   for the repository and each checked-out submodule.
// - Merge drivers run only when git merges (log --remerge-diff, or -m with log.diffMerges=remerge):
//   the classifier refuses the options, gitNeutralisingEnv pins log.diffMerges, and each driver the
//   repository defines is emptied with the filters (an empty driver runs no program).
// - Single settings (fsmonitor, hooks, pager, gpg, ssh, index refresh) are overridden by
//   gitNeutralisingEnv, which also leaves out the user's global and system config (tokens in
//   url.insteadOf or http.extraHeader); --no-optional-locks keeps status from rewriting the index.
// git named by its full path bypasses the wrapper, so the classifier refuses that form.
import { chmod, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isWithin } from '../fs/paths';

/** How deep submodules inside submodules are followed; deeper ones make git refuse to run. */
const MAX_SUBMODULE_DEPTH = 8;

/** Bash-quotes one word. */
function quoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export interface GitWrapperPrograms {
  /** Absolute paths: the real git, the bash the script runs under, and grep. */
  git: string;
  bash: string;
  grep: string;
}

/** The wrapper's text for a workspace and the given programs. */
export function gitWrapperScript(programs: GitWrapperPrograms, workspaceRoot: string): string {
  return `#!${programs.bash}
# Written by Speculate for shell commands that run without the user's approval: switches off the
# programs a repository's config and attributes can make git run, then runs git. See gitWrapper.ts.
real=${quoted(programs.git)}
grep=${quoted(programs.grep)}
root=${quoted(workspaceRoot)}
filters='^(filter\\..+\\.(clean|smudge|process)|merge\\..+\\.driver)$'
refuse() { echo "git was not run: $1" >&2; exit 128; }
inside() { [[ $1 == "$root" || $1 == "$root"/* ]]; }

# Prints why the object store at $1 could show objects from outside the workspace (nothing if it
# cannot); $2 counts alternates followed, as git's own limit does.
objects_from_elsewhere() {
  local objects=$1 depth=$2 physical entry line alternate
  [[ -e $objects ]] || return 0
  physical=$(cd "$objects" 2>/dev/null && pwd -P) || { echo "its object store ($objects) cannot be placed"; return; }
  inside "$physical" || { echo "its objects ($physical) lie outside the workspace"; return; }
  for entry in "$physical"/* "$physical"/pack/* "$physical"/info/*; do
    [[ -L $entry ]] && { echo "its object store holds a symlink ($entry), which git would follow"; return; }
  done
  [[ -e $physical/info/alternates ]] || return 0
  ((depth < 5)) || { echo "its object alternates nest too deep to check"; return; }
  [[ -f $physical/info/alternates && -r $physical/info/alternates ]] || { echo "its object alternates ($physical/info/alternates) cannot be read"; return; }
  while IFS= read -r line || [[ -n $line ]]; do
    [[ -z $line || $line == '#'* ]] && continue
    [[ $line == '"'* ]] && { echo "its object alternates name a quoted path this check does not read"; return; }
    [[ $line == /* ]] && alternate=$line || alternate=$physical/$line
    entry=$(cd "$alternate" 2>/dev/null && pwd -P) || { echo "it borrows objects from $line, which cannot be placed"; return; }
    inside "$entry" || { echo "it borrows objects from $entry, outside the workspace (objects/info/alternates)"; return; }
    entry=$(objects_from_elsewhere "$entry" $((depth + 1)))
    [[ -n $entry ]] && { echo "$entry"; return; }
  done < "$physical/info/alternates"
}

globals=()
while (($# > 0)); do
  case $1 in
    -C|-c|--git-dir|--work-tree|--namespace|--super-prefix|--config-env)
      (($# >= 2)) || break
      globals+=("$1" "$2")
      shift 2;;
    -*) globals+=("$1"); shift;;
    *) break;;
  esac
done

# The repository git will use: its work tree and its data must be the workspace's own (or, for a
# linked worktree, data whose repository registered this very work tree). Otherwise core.worktree,
# a planted .git file or a commondir would show files from elsewhere.
{ IFS= read -r gitdir; IFS= read -r common; IFS= read -r top; } < <("$real" "\${globals[@]}" rev-parse --path-format=absolute --absolute-git-dir --git-common-dir --show-toplevel 2>/dev/null)
if [[ -n $gitdir ]]; then
  [[ $gitdir == /* && $common == /* ]] || refuse "this git is too old to be checked (2.31 or newer is needed)"
  if [[ -n $top ]] && ! inside "$top"; then refuse "the repository's work tree ($top) is not the workspace"; fi
  registered=
  if ! inside "$gitdir" || ! inside "$common"; then
    [[ -n $top && $gitdir == "$common"/worktrees/* && -f $gitdir/gitdir ]] && registered=$(< "$gitdir/gitdir")
    [[ -n $registered && $registered == "$top/.git" ]] || refuse "the repository's data ($gitdir) lies outside the workspace"
  fi
  # A linked worktree that its repository registered uses that repository's objects, as its own.
  if [[ -z $registered ]]; then
    why=$(objects_from_elsewhere "$common/objects" 0)
    [[ -z $why ]] || refuse "the repository could show files from outside the workspace: $why"
  fi
fi

# Prints the filter settings of the repository at $1 and of its checked-out submodules.
list_filters() {
  "$real" -C "$1" config --name-only --get-regexp "$filters" 2>/dev/null
  (($2 < ${MAX_SUBMODULE_DEPTH})) || { echo '!too-deep'; return; }
  local entry sub subcommon why
  while IFS= read -r entry; do
    sub=\${entry#*$'\t'}
    case $sub in '"'*) echo '!unquotable'; continue;; esac
    if [[ -e "$1/$sub/.git" ]]; then
      subcommon=$("$real" -C "$1/$sub" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)
      if [[ -n $subcommon ]]; then
        why=$(objects_from_elsewhere "$subcommon/objects" 0)
        [[ -z $why ]] || { echo "!objects the submodule $sub: $why"; continue; }
      fi
      list_filters "$1/$sub" $(($2 + 1))
    fi
  done < <("$real" -C "$1" ls-files --stage 2>/dev/null | "$grep" '^160000 ')
}

if [[ -n $top ]]; then
  count=\${GIT_CONFIG_COUNT:-0}
  while IFS= read -r key; do
    case $key in
      '') continue;;
      '!objects '*) refuse "\${key#!objects }";;
      '!'*) refuse "the repository's submodules could not all be checked for filter programs ($key)";;
    esac
    export "GIT_CONFIG_KEY_$count=$key" "GIT_CONFIG_VALUE_$count="
    count=$((count + 1))
  done < <(list_filters "$top" 0)
  export GIT_CONFIG_COUNT=$count
fi

off='--no-ext-diff --no-textconv'
case \${1-} in
  diff|log|show|whatchanged) set -- "$1" $off "\${@:2}";;
  blame|annotate) set -- "$1" --no-textconv --no-ignore-revs-file "\${@:2}";;
  grep) set -- "$1" --no-textconv "\${@:2}";;
  config) set -- "$1" --no-includes "\${@:2}";;
  stash)
    case \${2-} in show|list) set -- "$1" "$2" $off "\${@:3}";; esac;;
  reflog)
    case \${2-} in
      show) set -- "$1" "$2" $off "\${@:3}";;
      exists|list|expire|delete|drop) ;;
      *) set -- "$1" $off "\${@:2}";;
    esac;;
esac
exec "$real" --no-optional-locks "\${globals[@]}" "$@"
`;
}

export type GitWrapperResult = { ok: true; dir: string } | { ok: false; reason: string };

const written = new Map<string, Promise<string>>();
/** Wrapper folders this process made; removed when it exits. */
const made = new Set<string>();
let cleanupRegistered = false;

function removeAtExit(dir: string): void {
  made.add(dir);
  if (cleanupRegistered) return;
  cleanupRegistered = true;
  process.once('exit', () => {
    for (const folder of made) rmSync(folder, { recursive: true, force: true });
  });
}

async function writeWrapper(script: string): Promise<string> {
  // mkdtemp makes the folder 0700: nobody else can swap the script.
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-git-')));
  const file = path.join(dir, 'git');
  await writeFile(file, script, { mode: 0o700 });
  await chmod(file, 0o700);
  removeAtExit(dir);
  return dir;
}

/**
 * The folder holding the wrapper for these programs and this workspace, written once per process
 * (and again if a temp cleaner removed or anything changed it). Refused when that folder would lie inside the workspace, where the
 * model could rewrite it.
 */
export async function gitWrapperDir(programs: GitWrapperPrograms, workspaceRoot: string): Promise<GitWrapperResult> {
  const script = gitWrapperScript(programs, workspaceRoot);
  const key = `${os.tmpdir()}\u0000${script}`;
  let dir: string;
  try {
    let pending = written.get(key);
    if (pending) {
      const current = await pending;
      const intact = await readFile(path.join(current, 'git'), 'utf8').then((text) => text === script, () => false);
      if (!intact) {
        await rm(current, { recursive: true, force: true });
        made.delete(current);
        pending = undefined;
      }
    }
    if (!pending) {
      pending = writeWrapper(script);
      written.set(key, pending);
      pending.catch(() => written.delete(key));
    }
    dir = await pending;
  } catch (error) {
    return { ok: false, reason: `git's safe wrapper could not be written to the temporary folder (${error instanceof Error ? error.message : String(error)})` };
  }
  if (isWithin(workspaceRoot, dir)) {
    return { ok: false, reason: `the temporary folder (${os.tmpdir()}) is inside the workspace, where git's safe wrapper could be changed by the model` };
  }
  return { ok: true, dir };
}
