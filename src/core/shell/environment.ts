// Which environment assignments may precede a read-only command (LC_ALL=C sort …): only variables
// that change formatting, never ones that choose programs, libraries, pagers or config files.

const HARMLESS_VARIABLES = new Set([
  'LANG', 'LANGUAGE', 'LC_ALL', 'LC_COLLATE', 'LC_CTYPE', 'LC_MESSAGES', 'LC_NUMERIC', 'LC_TIME',
  'TZ', 'NO_COLOR', 'FORCE_COLOR', 'CLICOLOR', 'COLUMNS', 'LINES', 'TERM',
]);

/**
 * Plain values only: no spaces, quotes or characters a program might interpret as code, and no
 * "/" (a locale name with a slash is read as a path), except in TZ (TZ=Europe/Paris).
 */
const HARMLESS_VALUE = /^[A-Za-z0-9_.,:@%+-]*$/;
const HARMLESS_TZ = /^[A-Za-z0-9_.,:@%+/-]*$/;

export function isHarmlessAssignment(name: string, value: string): boolean {
  if (!HARMLESS_VARIABLES.has(name)) return false;
  return (name === 'TZ' ? HARMLESS_TZ : HARMLESS_VALUE).test(value) && !value.includes('..');
}
