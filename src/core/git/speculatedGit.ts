// One speculation's git: the repository it may commit ahead in, what the repository held when its
// first git command ran (the compare-and-swap's old values), and the private layer its sandboxed
// git commands wrote. The speculation creates it at the first such command and drops it with its overlay.
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkspaceLock } from '../fs/workspaceLock';
import { applyGitLayer, type GitApplyResult } from './applyGitLayer';
import { readBase, type GitBase } from './gitBase';
import { runGit } from './gitCommand';
import { GitLayer, type LayerEffects } from './gitLayer';
import { checkLayerView } from './layerCheck';
import { previewGit, type GitPreview } from './gitPreview';
import { checkRepository, type GitRepository } from './repository';

/** What a sandboxed git command is given: the .git overlay's parts and the variables it runs with. */
export interface GitSandboxAccess {
  gitDir: string;
  layer: string;
  env: Record<string, string>;
}

/**
 * Inside the sandbox: no automatic gc or maintenance (they would pack objects, which the accept
 * does not carry over), and the user's identity as the live commit would take it from their config
 * (the sandbox's HOME is empty).
 */
async function sandboxGitEnv(gitDir: string): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'gc.auto',
    GIT_CONFIG_VALUE_0: '0',
    GIT_CONFIG_KEY_1: 'maintenance.auto',
    GIT_CONFIG_VALUE_1: 'false',
    GIT_TERMINAL_PROMPT: '0',
    GIT_EDITOR: 'false',
  };
  for (const [role, prefix] of [['GIT_AUTHOR_IDENT', 'GIT_AUTHOR'], ['GIT_COMMITTER_IDENT', 'GIT_COMMITTER']] as const) {
    const ident = await runGit(['var', role], { gitDir, userConfig: true });
    const match = /^(.*) <([^>]*)> \d+ [+-]\d{4}$/.exec(ident.stdout.trim());
    if (ident.code === 0 && match) {
      env[`${prefix}_NAME`] = match[1];
      env[`${prefix}_EMAIL`] = match[2];
    }
  }
  return env;
}

export class SpeculatedGit {
  private base: GitBase | undefined;
  private env: Record<string, string> | undefined;
  /** True once a command's writes joined the layer. */
  private touched = false;

  private constructor(readonly repository: GitRepository, readonly layer: GitLayer) {}

  /** The workspace's repository, or why commit-ahead does not take it on. */
  static async open(root: string, tmpRoot = os.tmpdir()): Promise<SpeculatedGit | { refused: string }> {
    const checked = await checkRepository(root);
    if (!checked.ok) return { refused: checked.reason };
    const dir = await realpath(await mkdtemp(path.join(tmpRoot, 'speculate-git-layer-')));
    // git reads the layer's objects through GIT_OBJECT_DIRECTORY for the preview, so the folder must exist.
    await mkdir(path.join(dir, 'objects'), { mode: 0o755 });
    return new SpeculatedGit(checked.repository, new GitLayer(dir, checked.repository.oidLength));
  }

  /** The sandbox option for the next git command; the first call records what the repository holds. */
  async access(): Promise<GitSandboxAccess> {
    this.base ??= await readBase(this.repository);
    this.env ??= await sandboxGitEnv(this.repository.gitDir);
    return { gitDir: this.repository.gitDir, layer: this.layer.dir, env: this.env };
  }

  /** Takes a finished command's .git writes into the layer; the preview when it did, or why not. */
  async absorb(upper: string): Promise<{ ok: true; preview: GitPreview | null } | { ok: false; detail: string }> {
    const known = [...new Set(this.base?.refs.values() ?? [])];
    const absorbed = await this.layer.absorb(upper, (written) => checkLayerView(this.repository, { ...written, known }));
    if (!absorbed.ok) return absorbed;
    if (absorbed.paths.length === 0 && !this.touched) return { ok: true, preview: null };
    this.touched = true;
    return { ok: true, preview: await this.preview() };
  }

  /** Whether Tab has anything to do in the repository. */
  async hasChanges(): Promise<boolean> {
    if (!this.touched || !this.base) return false;
    const effects = await this.layer.effects();
    return this.changesIn(effects, this.base);
  }

  private changesIn(effects: LayerEffects, base: GitBase): boolean {
    return effects.refs.some((ref) => base.refs.get(ref.name) !== ref.oid) || effects.index !== undefined || (effects.head !== undefined && JSON.stringify(effects.head) !== JSON.stringify(base.head));
  }

  async preview(): Promise<GitPreview | null> {
    if (!this.base || !this.touched) return null;
    const effects = await this.layer.effects();
    if (!this.changesIn(effects, this.base)) return null;
    return previewGit(this.repository, this.base, effects, this.layer.dir);
  }

  async apply(options: { lock: WorkspaceLock; journalDir: string; step?: Parameters<typeof applyGitLayer>[0]['step'] }): Promise<GitApplyResult | null> {
    if (!(await this.hasChanges())) return null;
    return applyGitLayer({ repository: this.repository, base: this.base!, layer: this.layer, lock: options.lock, journalDir: options.journalDir, ...(options.step ? { step: options.step } : {}) });
  }

  async dispose(): Promise<void> {
    await rm(this.layer.dir, { recursive: true, force: true });
  }
}
