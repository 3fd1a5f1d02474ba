#!/usr/bin/env bash
# Installs the Debian 12 packages nanoserve builds and tests with, only those missing.
# Runs as root (or through sudo when it is available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config g++ clang libclang-rt-14-dev
  ccache    # every build tree compiles through it (cmake/ccache-launcher.sh)
  libhwy-dev libpcre2-dev libcpp-httplib-dev libssl-dev ca-certificates nlohmann-json3-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev gnuplot-nox time
  chromium  # the browser of the chat page's and the lab pages' tests (tests/node/*_page*.test.mjs)
  curl jq   # the commands of docs/guide.md (tests/node/guide.test.mjs runs them)
)
# On x86-64, the Arm64 (NEON) check (scripts/test-arm64.sh): a cross compiler, the arm64 builds of
# the libraries (Debian multiarch; the header-only ones above serve both), qemu-user to run tests.
foreign_arch=""
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  foreign_arch=arm64
  packages+=(
    g++-aarch64-linux-gnu qemu-user
    libhwy-dev:arm64 libpcre2-dev:arm64 libcpp-httplib-dev:arm64 libfmt-dev:arm64 libgtest-dev:arm64
    libgmock-dev:arm64
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from elsewhere than Debian (its npm then conflicts with Debian's): ask for
# Debian's only when there is no node or npm at all.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if [ -n "$foreign_arch" ] && ! dpkg --print-foreign-architectures | grep -qx "$foreign_arch"; then
  $sudo dpkg --add-architecture "$foreign_arch"
fi
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
