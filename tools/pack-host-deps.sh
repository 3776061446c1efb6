#!/usr/bin/env bash
# Packs, from this Debian machine, the build-time pieces a bare GPU host may lack into .deps/
# (ignored by git): header-only libraries with their CMake configs, the curl and SQLite headers,
# the GoogleTest sources, and bubblewrap. Nothing here is vendored into the repository; it travels with a
# build to hosts that cannot reach a package registry. Then on the host:
#   KWB_DEPS_PREFIX=.deps/prefix KWB_GTEST_SOURCE=.deps/googletest tools/gpu-host-build.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$repo/.deps"
rm -rf "$out"
mkdir -p "$out/prefix/include" "$out/prefix/share/cmake"
cp -r /usr/include/CLI /usr/include/nlohmann "$out/prefix/include/"
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$out/prefix/share/cmake/"
cp -r /usr/include/x86_64-linux-gnu/curl "$out/prefix/include/"
cp -r /usr/include/openssl "$out/prefix/include/"
cp -r /usr/include/x86_64-linux-gnu/openssl/* "$out/prefix/include/openssl/"
cp /usr/include/sqlite3.h /usr/include/sqlite3ext.h "$out/prefix/include/"
cp /usr/include/pcre2.h "$out/prefix/include/"
cp -r /usr/src/googletest "$out/googletest"
# Debian's bubblewrap, for GPU hosts that have none (kwb finds it through KWB_BWRAP). It needs
# only libc, libcap and libselinux, which every Ubuntu and Debian has.
mkdir -p "$out/sandbox"
cp /usr/bin/bwrap "$out/sandbox/bwrap"
du -sh "$out"
