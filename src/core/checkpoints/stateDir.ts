// Where the engine keeps what must outlive a run (checkpoints) when no editor gives it a folder:
// $XDG_STATE_HOME/speculate, else ~/.local/state/speculate (HEADLESS-CLI.md, `--state-dir`).
import * as os from 'node:os';
import * as path from 'node:path';

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  // The XDG spec says a relative value is invalid and must be ignored.
  const xdg = env.XDG_STATE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'speculate');
  return path.join(home, '.local', 'state', 'speculate');
}
