// Which commands stay boundaries with a sandbox: they need the network, a person, or write the git
// repository. The rest (tests, builds, linters, formatters, read-only git) may run inside.
import * as assert from 'node:assert/strict';
import { commandNeeds } from '../../../src/core/sandbox/commandNeeds';

async function need(command: string): Promise<string | null> {
  return (await commandNeeds(command))?.kind ?? null;
}

describe('sandbox command needs', () => {
  it('tests, builds, linters, formatters and read-only git run inside', async () => {
    for (const command of ['npm test', 'npm run build', 'npx tsc -p .', 'yarn test', 'pnpm run lint', 'cargo build', 'go test ./...', 'make', 'pytest -q', 'python -m pytest', 'prettier --write src', 'eslint --fix .', 'git diff', 'git status', 'git log -p -3', 'git branch', 'git branch -a', 'git tag -l', 'git stash list', 'git config --get user.name', 'git -C sub show HEAD', 'node --test', 'bash -c "npm test"', 'env CI=1 npm test', 'timeout 60 npm test', '$RUNNER test']) {
      assert.equal(await need(command), null, command);
    }
  });

  it('installs, fetches, pushes and network tools need the network', async () => {
    for (const command of ['npm install', 'npm i left-pad', 'npm ci', 'yarn', 'yarn add react', 'pnpm install', 'pip install -r requirements.txt', 'python3 -m pip install x', 'cargo install ripgrep', 'go get example.com/x', 'curl https://example.com', 'wget x', 'git fetch', 'git pull --rebase', 'git push origin main', 'git clone https://x/y', 'ssh host ls', 'apt-get install -y jq', 'npm test && npm publish', 'cd sub && npm install', 'echo $(curl -s x)', 'sh -c "wget x"', 'env FOO=1 npm install', 'sudo apt install x']) {
      assert.ok((await need(command)) !== null, command);
    }
    assert.equal(await need('git push'), 'network');
    assert.equal(await need('npm install'), 'network');
  });

  it('editors, pagers, sudo and read need a person', async () => {
    for (const command of ['vim a.txt', 'nano x', 'less README.md', 'sudo make install', 'read -p "name? " NAME', 'top', 'select x in a b; do echo $x; done']) {
      assert.equal(await need(command), 'person', command);
    }
  });

  it('git commands that write the repository stay boundaries', async () => {
    for (const command of ['git commit -m x', 'git add .', 'git checkout main', 'git switch -c new', 'git stash', 'git stash pop', 'git reset --hard', 'git rebase main', 'git merge x', 'git tag v1', 'git branch -d old', 'git branch new-branch', 'git config user.name x', 'git remote add o x', 'git restore --staged a', 'git -c core.pager=cat commit -am x', 'git apply --index p.diff']) {
      assert.equal(await need(command), 'git-write', command);
    }
  });

  it('commit ahead: add, commit with a message, a new branch or tag, restore --staged are git writes it can take', async () => {
    const ahead = async (command: string) => {
      const found = await commandNeeds(command);
      return found?.kind === 'git-write' && found.ahead === true;
    };
    for (const command of ['git add .', 'git commit -m x', 'git commit -am "fix it"', 'git commit --message=x', 'git -c core.pager=cat commit -am x', 'git switch -c new', 'git checkout -b new', 'git branch new-branch', 'git branch new-branch main', 'git tag v1', 'git tag -a v1 -m release', 'git restore --staged a', 'git add . && git commit -m x', 'npm test && git commit -am x', 'git switch -q -c topic && git commit -q -am x']) {
      assert.equal(await ahead(command), true, command);
    }
    for (const command of ['git checkout main', 'git switch main', 'git switch -c new origin/main', 'git checkout -b new main', 'git stash', 'git reset --hard', 'git rebase main', 'git branch -d old', 'git branch -m a b', 'git tag -d v1', 'git tag -f v1', 'git config user.name x', 'git --git-dir=/elsewhere/.git commit -m x', 'git restore --staged --worktree a', 'git commit --amend -m x && git stash']) {
      assert.equal(await ahead(command), false, command);
    }
  });

  it('commit ahead: whatever else a command needs outranks the git write, and a commit without a message needs a person', async () => {
    assert.equal(await need('git commit -am x && git push'), 'network');
    assert.equal(await need('git push && git commit -am x'), 'network');
    assert.equal(await need('git commit'), 'person');
    assert.equal(await need('git commit -a'), 'person');
    assert.equal(await need('git add -p'), 'person');
    assert.equal(await need('git tag -a v1'), 'person');
  });
});
