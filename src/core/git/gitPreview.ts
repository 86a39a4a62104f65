// What Tab would commit, in words: for each branch or tag the speculation moved, the commits on it
// (message, author, files and diff), read with git from the speculated objects over the real store.
import * as path from 'node:path';
import type { GitBase } from './gitBase';
import { runGit } from './gitCommand';
import type { LayerEffects } from './gitLayer';
import type { GitRepository } from './repository';

export interface GitPreview {
  /** One line per moved ref: "main: 1a2b3c4 → 5d6e7f8". */
  moves: string[];
  /** git log --stat of the new commits (message, author, files). */
  log: string;
  /** Their patch, cut at PREVIEW_DIFF_BYTES. */
  diff: string;
  /** Said with every preview: Tab keeps the speculated commit as it is, dates included. */
  note: string;
}

const PREVIEW_DIFF_BYTES = 16 * 1024;
export const DATES_NOTE = 'Tab applies this commit as it was made ahead: its author and committer dates are those of the speculation, not of the moment you press Tab.';

function short(name: string): string {
  return name.replace(/^refs\/(heads|tags)\//, '');
}

export async function previewGit(repository: GitRepository, base: GitBase, effects: LayerEffects, layerDir: string): Promise<GitPreview> {
  const env = {
    GIT_OBJECT_DIRECTORY: path.join(layerDir, 'objects'),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(repository.gitDir, 'objects'),
  };
  const moves: string[] = [];
  const ranges: string[] = [];
  for (const ref of effects.refs) {
    const old = base.refs.get(ref.name);
    if (old === ref.oid) continue;
    moves.push(`${short(ref.name)}: ${old ? old.slice(0, 7) : '(new)'} → ${ref.oid.slice(0, 7)}`);
    ranges.push(ref.oid);
  }
  if (effects.head && !(base.head.kind === effects.head.kind && JSON.stringify(base.head) === JSON.stringify(effects.head))) {
    moves.push(`HEAD: ${base.head.kind === 'symbolic' ? short(base.head.ref) : base.head.oid.slice(0, 7)} → ${effects.head.kind === 'symbolic' ? short(effects.head.ref) : effects.head.oid.slice(0, 7)}`);
  }
  if (effects.index) moves.push('index: the staged files as the speculation left them');
  if (ranges.length === 0) return { moves, log: '', diff: '', note: DATES_NOTE };
  // The new commits: reachable from the speculated values, not from any real ref.
  const revisions = [...new Set(ranges), ...[...new Set(base.refs.values())].map((oid) => `^${oid}`)];
  const log = await runGit(['log', '--no-ext-diff', '--no-textconv', '--stat', '--format=commit %H%nAuthor: %an <%ae>%nDate:   %ad%n%n%w(0,4,4)%B', '--stdin'], { gitDir: repository.gitDir, env, input: `${revisions.join('\n')}\n` });
  const patch = await runGit(['log', '--no-ext-diff', '--no-textconv', '-p', '--format=commit %H', '--stdin'], { gitDir: repository.gitDir, env, input: `${revisions.join('\n')}\n` });
  const diff = patch.stdout.length > PREVIEW_DIFF_BYTES ? `${patch.stdout.slice(0, PREVIEW_DIFF_BYTES)}\n[… the rest of the diff is left out]` : patch.stdout;
  return { moves, log: log.stdout.trimEnd(), diff, note: DATES_NOTE };
}

/** The preview as the tool result and the snapshot show it. */
export function previewText(preview: GitPreview): string {
  const lines = ['[Commit ahead — Tab applies this to the repository:]', ...preview.moves.map((move) => `  ${move}`)];
  if (preview.log) lines.push(preview.log);
  lines.push(`[${preview.note}]`);
  return lines.join('\n');
}
