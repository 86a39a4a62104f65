// Checks one command's .git writes before they join the speculation's layer: what a sandboxed
// command leaves is untrusted (it could write any bytes there), so the index must be one git reads,
// naming only safe paths and objects that exist, and every new ref value must reach only objects
// that exist (a ref over a missing object would corrupt the repository once Tab moved it).
import * as path from 'node:path';
import { runGit } from './gitCommand';
import type { GitRepository } from './repository';

export interface LayerView {
  /** Object folders above the real store, top first (the command's upper, then the layer). */
  objectDirs: string[];
  /** The index the speculation would leave, if any command wrote one. */
  index?: string;
  /** New ref values to check for connectivity. */
  tips: string[];
  /** Values every real ref had: objects reachable from them exist already. */
  known: string[];
}

/** A path git would refuse to check out (verify_path): absolute, `..`, `.git` in any case. */
function unsafeIndexPath(file: string): boolean {
  if (file.startsWith('/') || file === '') return true;
  return file.split('/').some((part) => part === '' || part === '.' || part === '..' || part.toLowerCase() === '.git');
}

/** Undefined when the view is sound; otherwise why not, in words. */
export async function checkLayerView(repository: GitRepository, view: LayerView): Promise<string | undefined> {
  const [top, ...rest] = view.objectDirs;
  const env = {
    GIT_OBJECT_DIRECTORY: top,
    GIT_ALTERNATE_OBJECT_DIRECTORIES: [...rest, path.join(repository.gitDir, 'objects')].join(':'),
  };
  if (view.index) {
    const listed = await runGit(['ls-files', '--stage', '-z'], { gitDir: repository.gitDir, env: { ...env, GIT_INDEX_FILE: view.index } });
    if (listed.code !== 0) return `git cannot read the index it left (${listed.stderr.trim().split('\n')[0] ?? 'unknown error'})`;
    const oids = new Set<string>();
    for (const entry of listed.stdout.split('\0').filter(Boolean)) {
      const tab = entry.indexOf('\t');
      const [mode, oid] = entry.slice(0, tab).split(' ');
      const file = entry.slice(tab + 1);
      if (unsafeIndexPath(file)) return `the index it left names a path git must not check out (${JSON.stringify(file)})`;
      // Submodule entries (160000) name commits of another repository.
      if (mode !== '160000') oids.add(oid);
    }
    if (oids.size > 0) {
      const checked = await runGit(['cat-file', '--batch-check=%(objectname)'], { gitDir: repository.gitDir, env, input: `${[...oids].join('\n')}\n` });
      const missing = checked.stdout.split('\n').find((line) => line.endsWith(' missing'));
      if (checked.code !== 0 || missing) return `the index it left names an object that does not exist (${missing?.split(' ')[0] ?? 'cat-file failed'})`;
    }
  }
  if (view.tips.length > 0) {
    const input = [...view.tips, ...view.known.map((oid) => `^${oid}`)].join('\n');
    const walked = await runGit(['rev-list', '--objects', '--quiet', '--stdin'], { gitDir: repository.gitDir, env, input: `${input}\n` });
    if (walked.code !== 0) return `a ref it moved reaches objects that do not exist (${walked.stderr.trim().split('\n')[0] ?? `exit ${walked.code}`})`;
  }
  return undefined;
}
