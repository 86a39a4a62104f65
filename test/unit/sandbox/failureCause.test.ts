// Which failed runs failed because of the sandbox: these become boundaries, the rest are results.
import * as assert from 'node:assert/strict';
import { sandboxFailureCause, type FailureCauseInput } from '../../../src/core/sandbox/failureCause';

function cause(output: string, overrides: Partial<FailureCauseInput> = {}) {
  return sandboxFailureCause({ exitCode: 1, timedOut: false, output, hostHome: '/home/me', workspaceWritable: true, hiddenPath: (p) => p.startsWith('/home/me/') || p.startsWith('/srv/'), ...overrides });
}

describe('sandbox failure causes', () => {
  it('a successful run is a result, whatever its output says', () => {
    assert.equal(cause('npm warn: getaddrinfo ENOTFOUND registry.npmjs.org', { exitCode: 0 }), null);
  });

  it('no network: failed lookups and refused connections', () => {
    for (const line of ['npm ERR! network request failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org', 'curl: (6) Could not resolve host: example.com', 'Error: connect ECONNREFUSED 127.0.0.1:5432', 'bash: connect: Network is unreachable', "fatal: unable to access 'https://github.com/x/y/': Could not resolve host"]) {
      assert.equal(cause(`some output\n${line}\n`)?.kind, 'network', line);
    }
  });

  it('writes outside the workspace, or any write when the workspace is read-only', () => {
    assert.match(cause("EROFS: read-only file system, open '/usr/lib/x'")?.detail ?? '', /writes outside the workspace/);
    assert.match(cause('bash: a.txt: Read-only file system', { workspaceWritable: false })?.detail ?? '', /may not/);
  });

  it('a file of another user that overlayfs cannot copy up, even when the command carried on and succeeded', () => {
    assert.equal(cause('sed: couldn\'t open temporary file ./x: Value too large for defined data type')?.kind, 'ownership');
    assert.equal(cause('bash: line 1: shared.txt: Value too large for defined data type\nrc=1', { exitCode: 0 })?.kind, 'ownership');
  });

  it('a missing file that exists outside, in the home folder or elsewhere', () => {
    assert.equal(cause("Error: ENOENT: no such file or directory, open '/home/me/.config/tool.json'")?.kind, 'home');
    assert.equal(cause('cat: /srv/data/input.csv: No such file or directory')?.kind, 'outside');
  });

  it('a missing file that is missing outside too is the command\'s own failure', () => {
    assert.equal(cause('cat: /nowhere/input.csv: No such file or directory'), null);
    assert.equal(cause('1 failing\n  AssertionError: expected 2 to equal 3'), null);
  });
});
