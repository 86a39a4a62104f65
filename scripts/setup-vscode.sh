#!/usr/bin/env bash
# Installs what the real-VS-Code tests and `npm start` need, idempotently and quickly when present:
# Debian's Chromium (+ ripgrep, libkrb5-dev for code-server's build) and VS Code's server from the
# npm package code-server@4.100.3 into .vscode-test/ (git-ignored). See TESTING-IN-REAL-VSCODE.md.
set -euo pipefail

CODE_SERVER_VERSION=4.100.3
RIPGREP_VERSION=1.15.11
here=$(cd "$(dirname "$0")/.." && pwd)
target="$here/.vscode-test/code-server-$CODE_SERVER_VERSION"
server_main="$target/node_modules/code-server/lib/vscode/out/server-main.js"

log() { printf '[setup-vscode] %s\n' "$*" >&2; }

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v rg >/dev/null 2>&1 || need_apt+=(ripgrep)
# The sandbox brings up loopback in its network namespace with ip (SANDBOX.md); the rest is util-linux.
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || need_apt+=(iproute2)
# The Landlock sandbox's helper is C, compiled by the build (scripts/build-native.mjs).
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
# `npm run bench -- sandbox` sets the backends beside Debian's bubblewrap.
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
[ -f /usr/include/gssapi/gssapi.h ] || [ -f "$server_main" ] || need_apt+=(libkrb5-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    log "missing Debian packages: ${need_apt[*]} — install them with: sudo apt-get install -y ${need_apt[*]}"
    exit 1
  fi
  log "installing Debian packages: ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ -f "$server_main" ] && [ -f "$target/.complete" ]; then
  exit 0
fi

log "installing code-server@$CODE_SERVER_VERSION (VS Code 1.100.3 server) into .vscode-test/ — about 2 minutes"
rm -rf "$target"
mkdir -p "$target"
work_tmp=$(mktemp -d)
trap 'rm -rf "$work_tmp"' EXIT

# @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache holds the tarball:
# seed the cache with Debian's rg so nothing is fetched from outside the npm registry.
cache="$work_tmp/vscode-ripgrep-cache-$RIPGREP_VERSION"
mkdir -p "$cache" "$work_tmp/rg"
cp "$(command -v rg)" "$work_tmp/rg/rg"
tar -czf "$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$work_tmp/rg" rg

cd "$target"
echo '{"name":"speculate-vscode-server","private":true}' > package.json
# node-pty's postinstall runs `npx node-gyp`, which needs yes=true on this machine's npm config.
TMPDIR="$work_tmp" npm_config_yes=true npm install --no-save --no-audit --no-fund --unsafe-perm \
  --foreground-scripts=false "code-server@$CODE_SERVER_VERSION" >"$work_tmp/install.log" 2>&1 || {
  tail -40 "$work_tmp/install.log" >&2
  log "code-server install failed (log above)"
  exit 1
}
[ -f "$server_main" ] || { log "server-main.js missing after install"; exit 1; }
touch "$target/.complete"
log "code-server installed"
