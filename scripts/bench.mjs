// `npm run bench [-- name…]`: builds, runs the suites under bench/suites/ (all, or those named), and
// writes bench/results.json and bench/RESULTS.md (machine, date, commit; median and spread per figure).
// Benchmarks are never part of npm test.
import { execFileSync, execSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { basename, join } from 'node:path';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { findFiles } from './lib/files.mjs';
import { repoRoot } from './lib/vscodeServer.mjs';

process.chdir(repoRoot);
const OUT = 'out-bench';
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));

// The tab and activation suites run the real VS Code server: install it on a fresh clone.
execFileSync('bash', ['scripts/setup-vscode.sh'], { stdio: 'inherit' });
execFileSync(process.execPath, ['esbuild.mjs', '--tests'], { stdio: 'inherit', env: { ...process.env, SPECULATE_OUT_DIR: OUT } });
const suites = findFiles(join(OUT, 'bench/suites'), '.js').map((file) => ({ name: basename(file, '.js'), file }));
const selected = wanted.length === 0 ? suites : suites.filter((s) => wanted.some((w) => s.name === w || s.name.startsWith(`${w}-`)));
if (selected.length === 0) {
  console.error(`No benchmark named ${wanted.join(', ')}. Available: ${suites.map((s) => s.name).join(', ')}`);
  process.exit(2);
}

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[at];
}

export function summarise(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { n: sorted.length, median, p99: quantile(sorted, 0.99), min: sorted[0], max: sorted[sorted.length - 1] };
}

const round = (value) => (Number.isFinite(value) ? (Math.abs(value) >= 100 ? Math.round(value) : Number(value.toPrecision(3))) : value);
let commit = 'unknown';
try { commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim(); } catch { /* not a checkout */ }
const machine = `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`;

const resultsPath = 'bench/results.json';
const previous = existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, 'utf8')) : { suites: {} };
const results = { machine, date: new Date().toISOString(), commit, suites: { ...previous.suites } };

for (const suite of selected) {
  console.log(`\n=== bench: ${suite.name} ===`);
  const started = Date.now();
  const module = await import(suite.file);
  // esbuild's CommonJS output imported from ESM: the suite's default export is module.default.default.
  const run = typeof module.default === 'function' ? module.default : (module.default?.default ?? module.run);
  const figures = await run();
  results.suites[suite.name] = {
    date: results.date, commit, machine, seconds: Math.round((Date.now() - started) / 1000),
    figures: figures.map((f) => ({ name: f.name, unit: f.unit, target: f.target ?? null, note: f.note ?? null, ...summarise(f.samples) })),
  };
  for (const f of results.suites[suite.name].figures) {
    console.log(`  ${f.name}: median ${round(f.median)} ${f.unit} (p99 ${round(f.p99)}, min ${round(f.min)}, max ${round(f.max)}, n=${f.n})${f.target ? `  target ${f.target}` : ''}`);
  }
}

writeFileSync(resultsPath, JSON.stringify(results, null, 2) + '\n');

// What people wrote into RESULTS.md by hand survives a run: a section whose heading names no suite
// is kept whole (after the suites), and inside a suite's section the text between NOTES_START and
// NOTES_END is kept under its machine line. Everything else is generated from results.json.
const NOTES_START = '<!-- notes -->';
const NOTES_END = '<!-- /notes -->';
function handWritten(markdown) {
  const notes = new Map();
  const sections = [];
  for (const part of markdown.split(/^(?=## )/m).slice(1)) {
    const heading = part.slice(3, part.indexOf('\n') === -1 ? undefined : part.indexOf('\n')).trim();
    if (!(heading in results.suites)) {
      sections.push(part.trimEnd());
      continue;
    }
    const blocks = [...part.matchAll(new RegExp(`${NOTES_START}[\\s\\S]*?${NOTES_END}`, 'g'))].map((m) => m[0]);
    if (blocks.length > 0) notes.set(heading, blocks);
  }
  return { notes, sections };
}
const kept = existsSync('bench/RESULTS.md') ? handWritten(readFileSync('bench/RESULTS.md', 'utf8')) : { notes: new Map(), sections: [] };
const lines = [
  '# Benchmark results', '',
  `Written by \`npm run bench\`. Each suite notes the machine, date and commit it ran on; these machines are noisy, so read medians and spreads, not single runs. Notes between \`${NOTES_START}\` and \`${NOTES_END}\` in a suite's section, and sections named after no suite, are written by hand and kept by every run.`, '',
];
for (const [name, suite] of Object.entries(results.suites)) {
  lines.push(`## ${name}`, '', `${suite.machine} · ${suite.date.slice(0, 16).replace('T', ' ')} UTC · commit ${suite.commit} · ${suite.seconds} s`, '');
  for (const block of kept.notes.get(name) ?? []) lines.push(block, '');
  lines.push('| figure | median | p99 | min | max | n | target | note |', '|---|---|---|---|---|---|---|---|');
  for (const f of suite.figures) {
    lines.push(`| ${f.name} | ${round(f.median)} ${f.unit} | ${round(f.p99)} | ${round(f.min)} | ${round(f.max)} | ${f.n} | ${f.target ?? ''} | ${f.note ?? ''} |`);
  }
  lines.push('');
}
for (const section of kept.sections) lines.push(section, '');
writeFileSync('bench/RESULTS.md', lines.join('\n'));
console.log('\nWrote bench/results.json and bench/RESULTS.md');
process.exit(0);
