// Differential check against real bash: a matrix of quoting contexts around a payload that creates
// a file. Every combination the classifier accepts is run by bash in a scratch folder, which must
// be left exactly as it was. (This matrix found the ${x:-`…`} and "$\<newline>(…)" escapes.)
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isShellCommandReadOnly } from '../../../src/core/shell';

const P = 'touch PWNED';
const WORDS: string[] = [
  `$(${P})`, '`' + P + '`', `'$(${P})'`, `"$(${P})"`, `"'$(${P})'"`, `\${x:-$(${P})}`, `"\${x:-'$(${P})'}"`, `\${x:-'$(${P})'}`,
  `"\${x:-\`${P}\`}"`, `\${x:-\`${P}\`}`, `$'\\x24(${P})'`, `"\${x#'$(${P})'}"`, `\${x/a/$(${P})}`, `"$(( $(${P}) ))"`,
  `$(( '$(${P})' ))`, `\${x:-"\${y:-$(${P})}"}`, `"\\$(${P})"`, `<(${P})`, `>(${P})`, `a#$(${P})`, `#$(${P})`, `{a,$(${P})}`,
  `\${x:0:$(${P})}`, `"\${x[$(${P})]}"`, `'a'"$(${P})"'b'`, `$"$(${P})"`, `$\\\n(${P})`, `"$\\\n(${P})"`, `\${x:-<(${P})}`,
  `"a'$(${P})'"`, `'a'\\''$(${P})'`, `\${x# $(${P})}`, `\${x: #$(${P})}`, `$'\\''$(${P})'`, `\\"$(${P})"`, `"$"'(${P})'`,
  // $(…) of a read-only script is accepted in arguments: where bash and the parser might part ways.
  `$(echo ')'; ${P})`, `"$(echo ")"; ${P})"`, `$(echo $(${P}))`, `$(: <<EOF\n)\nEOF\n${P})`, `$(case x in x) ${P};; esac)`,
  `$(echo \\); ${P})`, `$(# )\n${P})`, `$(echo '\\'')'; ${P})`, `"$(echo '"'; ${P})"`, `$(echo \`${P}\`)`, `$(echo "$(${P})")`,
  `$(echo a)$(${P})`, `"$(echo a)"'$(${P})'`, `$(echo a; cd ..; ${P})`, `<(${P})`, `<(echo a; ${P})`, `$(ls <(${P}))`, `$(echo a) ; ${P}`,
  `$(echo a)\n${P}`, `$(echo {a,b})$(${P})`,
];
const CONTEXTS: Array<(word: string) => string> = [
  (w) => `echo ${w}`, (w) => `echo "${w}"`, (w) => `ls ${w}`, (w) => `[ -n ${w} ]`, (w) => `[[ -n ${w} ]]`, (w) => `[[ x =~ ${w} ]]`,
  (w) => `case ${w} in x) ;; esac`, (w) => `case x in ${w}) ;; esac`, (w) => `for i in ${w}; do :; done`, (w) => `grep ${w} f`,
  (w) => `cat <<EOF\n${w}\nEOF`, (w) => `cat <<-EOF\n\t${w}\n\tEOF`, (w) => `cat <<"EOF"\n${w}\nEOF`, (w) => `cat <<< ${w}`,
  (w) => `cat < ${w}`, (w) => `${w}`, (w) => `echo ${w} # c`, (w) => `bash -c 'echo ${w}'`, (w) => `bash -c "echo ${w}"`,
  (w) => `xargs echo ${w}`, (w) => `(echo ${w})`, (w) => `echo a;echo ${w}`, (w) => `git log -1 --format=${w}`, (w) => `find . -name ${w}`,
  (w) => `cd . && echo ${w}`, (w) => `diff ${w} f`, (w) => `while read -r x; do echo ${w}; done < f`, (w) => `echo "$(echo ${w})"`,
];

describe('shell classifier: differential check with bash', () => {
  let dir: string;
  const snapshot = () => readdirSync(dir).sort().map((name) => `${name}:${statSync(join(dir, name)).mtimeMs}`).join(',');

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'shell-diff-'));
    writeFileSync(join(dir, 'f'), 'x\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('bash changes nothing for any accepted combination of quoting context and substitution', async function () {
    this.timeout(60_000);
    const accepted: string[] = [];
    const changed: string[] = [];
    for (const word of WORDS) {
      for (const context of CONTEXTS) {
        const command = context(word);
        if (!(await isShellCommandReadOnly(command, { workspaceRoot: dir, pathValue: '/usr/bin:/bin' })).readOnly) continue;
        accepted.push(command);
        const before = snapshot();
        spawnSync('bash', ['-c', command], { cwd: dir, stdio: 'ignore', timeout: 2000, env: { PATH: process.env.PATH ?? '', HOME: dir } });
        if (snapshot() !== before) {
          changed.push(command);
          rmSync(join(dir, 'PWNED'), { force: true });
        }
      }
    }
    assert.deepEqual(changed, [], 'accepted commands that created a file');
    // The matrix must really exercise the accept path (single quotes, quoted here-docs, escapes).
    assert.ok(accepted.length >= 50, `only ${accepted.length} combinations accepted`);
  });
});
