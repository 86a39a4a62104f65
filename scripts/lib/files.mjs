// Small file helpers shared by the build, test and bench scripts.
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Every file below dir whose name ends with suffix, absolute and sorted. */
export function findFiles(dir, suffix) {
  const found = [];
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return found;
  }
  for (const name of names) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) found.push(...findFiles(full, suffix));
    else if (name.endsWith(suffix)) found.push(resolve(full));
  }
  return found.sort();
}
