// What users read after "stopped:": the reason names the construct or command that was refused.
import * as assert from 'node:assert/strict';
import { isShellCommandReadOnly } from '../../../src/core/shell';

describe('shell classifier: reasons', () => {
  const expectations: Array<[command: string, reason: string | RegExp]> = [
    ['ls -la', 'ok'],
    ['ls > x', 'redirect: output redirection to file'],
    ['rm -rf build', 'command: rm writes or deletes files'],
    ['cd', 'session: cd without a folder goes to the home folder, outside the workspace'],
    ['cd ..', /^session: cd \.\. resolves outside the workspace/],
    ['echo $(rm x)', 'command: rm writes or deletes files'],
    ['echo `whoami`', 'substitution: command substitution runs another command'],
    ['cat /etc/passwd', 'path: /etc/passwd resolves outside the workspace; unattended commands read only inside the workspace'],
    ['FOO=bar', /^assignment: /],
    ['frobnicate --all', 'command: frobnicate is not a known read-only command'],
    ['git diff', 'ok'],
    ['git diff --submodule=diff', "git: git diff --submodule=diff runs the submodule's own diff programs"],
    ['git push', 'git: git push is not read-only'],
    ['sort -o out.txt in.txt', 'argument: sort -o writes its output to a file'],
    ['sed -i s/a/b/ f', 'argument: sed -i edits files in place'],
    ['echo "unterminated', 'parse: the command has a syntax error'],
    ['', 'command: the command is empty'],
  ];
  for (const [command, reason] of expectations) {
    it(`explains ${JSON.stringify(command)}`, async () => {
      const verdict = await isShellCommandReadOnly(command);
      if (typeof reason === 'string') assert.equal(verdict.reason, reason);
      else assert.match(verdict.reason, reason);
    });
  }

  it('refuses a value that is not a string instead of throwing', async () => {
    const verdict = await isShellCommandReadOnly(42 as unknown as string);
    assert.equal(verdict.readOnly, false);
  });
});
