// `npm run package`: one .vsix per Linux platform (vsce package --target), each with the Landlock
// sandbox's helper built for it: speculate-linux-x64.vsix, speculate-linux-arm64.vsix in the
// repository root (see scripts/lib/package.mjs). `npm run package -- linux-x64` makes one;
// `npm run package -- --universal [out.vsix]` one without a target, holding this machine's helper.
// A target whose compiler is missing (arm64 needs Debian's gcc-aarch64-linux-gnu and
// libc6-dev-arm64-cross) is reported and the command fails, after making the others.
import { join } from 'node:path';
import { packageExtension, PLATFORM_TARGETS } from './lib/package.mjs';
import { repoRoot } from './lib/vscodeServer.mjs';
import { buildNative } from './build-native.mjs';

const args = process.argv.slice(2);
if (args[0] === '--universal') {
  const out = packageExtension(join(repoRoot, args[1] ?? 'speculate.vsix'));
  console.log(`Packaged ${out}`);
} else {
  const targets = args.length > 0 ? args : Object.keys(PLATFORM_TARGETS);
  const failed = [];
  for (const target of targets) {
    try {
      const out = packageExtension(join(repoRoot, `speculate-${target}.vsix`), { target });
      console.log(`Packaged ${out}`);
    } catch (error) {
      failed.push(target);
      console.error(`package: ${target} was not packaged: ${error instanceof Error ? error.message.split('\n')[0] : error}`);
    }
  }
  // The prepublish builds leave dist/native with the last target's helper: put this machine's back.
  buildNative(join(repoRoot, 'dist', 'native'));
  if (failed.length > 0) {
    console.error(`package: not packaged: ${failed.join(', ')} (see above for what to install)`);
    process.exit(1);
  }
}
