// The fstab the sandbox mounts: what is bound read-only, what is fresh, where the workspace goes,
// and which paths are refused before anything is mounted.
import * as assert from 'node:assert/strict';
import { buildMountPlan, fstabField, unmountablePath, unusableWorkspace, type MountPlanInput } from '../../../src/core/sandbox/mountPlan';

function plan(overrides: Partial<MountPlanInput> = {}) {
  return buildMountPlan({
    skeleton: '/s',
    system: [{ path: '/usr', kind: 'bind' }, { path: '/etc', kind: 'bind' }, { path: '/bin', kind: 'symlink', target: 'usr/bin' }],
    procReadOnly: ['sys'],
    masked: [{ path: '/etc/shadow', type: 'file' }, { path: '/etc/ssl/private', type: 'directory' }],
    toolchains: ['/home/me/.nvm/versions/node/v20/bin'],
    home: '/home/me',
    workspace: { kind: 'overlay', root: '/home/me/project', lowers: ['/l', '/home/me/project'], upper: { upper: '/u', work: '/w' } },
    tmpfsBytes: 1024 * 1024,
    ...overrides,
  });
}

function entry(fstab: string, target: string): string | undefined {
  return fstab.split('\n').find((line) => line.split(' ')[1] === target);
}

describe('sandbox mount plan', () => {
  it('binds the system folders read-only on a read-only root and recreates merged-/usr symlinks', () => {
    const result = plan();
    assert.equal(result.fstab.split('\n')[0], '/s /s none bind,ro 0 0');
    assert.equal(entry(result.fstab, '/s/usr'), '/usr /s/usr none bind,ro 0 0');
    assert.deepEqual(result.symlinks.find((link) => link.path === '/bin'), { path: '/bin', target: 'usr/bin' });
  });

  it('shows secrets that others may not read as empty, and keeps sysctls read-only', () => {
    const result = plan();
    assert.equal(entry(result.fstab, '/s/etc/shadow'), '/dev/null /s/etc/shadow none bind,ro 0 0');
    assert.match(entry(result.fstab, '/s/etc/ssl/private') ?? '', /^tmpfs .* tmpfs ro,/);
    assert.equal(entry(result.fstab, '/s/proc/sys'), '/s/proc/sys /s/proc/sys none bind,ro,nosuid,nodev,noexec 0 0');
  });

  it('gives the command a fresh /tmp and HOME, mounted before what lies inside them', () => {
    const lines = plan().fstab.trim().split('\n');
    const index = (target: string) => lines.findIndex((line) => line.split(' ')[1] === target);
    assert.match(lines[index('/s/tmp')], /^tmpfs \/s\/tmp tmpfs nosuid,nodev,mode=1777,size=1024k /);
    assert.match(lines[index('/s/home/me')], /^tmpfs \/s\/home\/me tmpfs .*X-mount\.mkdir/);
    assert.ok(index('/s/home/me') < index('/s/home/me/.nvm/versions/node/v20/bin'));
    assert.ok(index('/s/home/me') < index('/s/home/me/project'));
  });

  it('mounts the workspace as an overlay at its own path, the layer above the real files', () => {
    const line = entry(plan().fstab, '/s/home/me/project') ?? '';
    assert.match(line, /^overlay \/s\/home\/me\/project overlay lowerdir=\/l:\/home\/me\/project,upperdir=\/u,workdir=\/w,userxattr,redirect_dir=nofollow,/);
  });

  it('commit ahead: .git gets an overlay of its own after the workspace, the git layer above the real .git', () => {
    const git = { target: '/home/me/project/.git', lowers: ['/gl', '/home/me/project/.git'], upper: { upper: '/gu', work: '/gw' } };
    const lines = plan({ git }).fstab.trim().split('\n');
    const at = (target: string) => lines.findIndex((line) => line.split(' ')[1] === target);
    assert.match(lines[at('/s/home/me/project/.git')], /^overlay \/s\/home\/me\/project\/\.git overlay lowerdir=\/gl:\/home\/me\/project\/\.git,upperdir=\/gu,workdir=\/gw,userxattr,/);
    assert.ok(at('/s/home/me/project/.git') > at('/s/home/me/project'), 'mounted over the workspace, not under it');
    assert.equal(entry(plan().fstab, '/s/home/me/project/.git'), undefined, 'only for requests that ask');
    // A later command of the speculation sees its commits, read-only.
    const view = entry(plan({ git: { target: git.target, lowers: git.lowers } }).fstab, '/s/home/me/project/.git') ?? '';
    assert.match(view, /lowerdir=\/gl:\/home\/me\/project\/\.git,userxattr,.*,ro 0 0$/);
    assert.doesNotMatch(view, /upperdir/);
  });

  it('a read-only workspace is a read-only bind, or a read-only overlay when a layer is stacked', () => {
    assert.equal(entry(plan({ workspace: { kind: 'read-only', root: '/ws' } }).fstab, '/s/ws'), '/ws /s/ws none bind,ro,X-mount.mkdir 0 0');
    const stacked = entry(plan({ workspace: { kind: 'overlay', root: '/ws', lowers: ['/l', '/ws'] } }).fstab, '/s/ws') ?? '';
    assert.match(stacked, /lowerdir=\/l:\/ws,/);
    assert.doesNotMatch(stacked, /upperdir/);
    assert.match(stacked, /,ro 0 0$/);
  });

  it('prepares mount points in the skeleton only outside the fresh tmpfs folders', () => {
    const result = plan();
    assert.ok(result.dirs.includes('/usr') && result.dirs.includes('/tmp') && result.dirs.includes('/home/me'));
    assert.ok(!result.dirs.includes('/home/me/project'), 'created inside the fresh HOME by X-mount.mkdir');
    assert.ok(result.files.includes('/dev/null'));
  });

  it('escapes spaces and backslashes in fstab fields', () => {
    assert.equal(fstabField('/a b\\c\td'), '/a\\040b\\134c\\011d');
    assert.match(entry(plan({ workspace: { kind: 'read-only', root: '/my project' } }).fstab, '/s/my\\040project') ?? '', /^\/my\\040project /);
  });

  it('refuses paths mount options cannot carry and workspaces that are system folders', () => {
    assert.match(unmountablePath('/a,b') ?? '', /","/);
    assert.match(unmountablePath('/a:b') ?? '', /":"/);
    assert.match(unmountablePath('relative') ?? '', /absolute/);
    assert.equal(unmountablePath('/fine/path with space'), undefined);
    assert.match(unusableWorkspace('/') ?? '', /system folder/);
    assert.match(unusableWorkspace('/usr/src/app') ?? '', /inside the system folder \/usr/);
    assert.match(unusableWorkspace('/proc/1') ?? '', /\/proc/);
    assert.equal(unusableWorkspace('/home/me/project'), undefined);
  });
});
