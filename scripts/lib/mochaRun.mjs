// Runs a set of compiled mocha test files in this process and resolves with pass/fail counts.
import Mocha from 'mocha';

/**
 * @param {string[]} files absolute paths of compiled test files
 * @param {{grep?: string, timeout?: number}} options
 * @returns {Promise<{passed: number, failed: number}>}
 */
export function runMocha(files, options = {}) {
  const mocha = new Mocha({ ui: 'bdd', color: true, timeout: options.timeout ?? 10_000, reporter: 'spec' });
  if (options.grep) mocha.grep(options.grep);
  for (const file of files) mocha.addFile(file);
  return new Promise((resolve, reject) => {
    try {
      const runner = mocha.run(() => {
        resolve({ passed: runner.stats?.passes ?? 0, failed: runner.stats?.failures ?? 0 });
      });
    } catch (error) {
      reject(error);
    }
  });
}
