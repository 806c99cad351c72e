#!/usr/bin/env bash
# Build bench/ns3/dumbbell.cc against the ns-3 shared libraries and headers
# shipped in the PyPI wheel `ns3` (3.44.post0). Installs the wheel with pip if
# it is missing. Output: bench/ns3/build/dumbbell (rpath set to the wheel's lib64).
#
# Environment: PYTHON (default python3), CXX (default g++), CXXFLAGS_EXTRA.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
CXX="${CXX:-g++}"
NS3_VERSION="3.44.post0"

find_ns3() {
  "$PYTHON" - <<'PY'
import importlib.metadata as md, os, sys
try:
    d = md.distribution("ns3")
except md.PackageNotFoundError:
    sys.exit(1)
root = str(d.locate_file("ns3"))
print(root)
print(d.version)
PY
}

if ! out="$(find_ns3)"; then
  echo "build.sh: ns3 not installed for $PYTHON; installing ns3==$NS3_VERSION with pip" >&2
  "$PYTHON" -m pip install "ns3==$NS3_VERSION" >&2
  out="$(find_ns3)"
fi
NS3_ROOT="$(echo "$out" | sed -n 1p)"
NS3_VER="$(echo "$out" | sed -n 2p)"
[ "$NS3_VER" = "$NS3_VERSION" ] || echo "build.sh: warning: ns3 $NS3_VER installed, references were made with $NS3_VERSION" >&2

INC="$NS3_ROOT/include"
LIB=""
for d in lib64 lib; do
  if ls "$NS3_ROOT/$d"/libns3.*-core.so >/dev/null 2>&1; then LIB="$NS3_ROOT/$d"; break; fi
done
[ -n "$LIB" ] && [ -f "$INC/ns3/core-module.h" ] || { echo "build.sh: ns-3 headers/libs not found under $NS3_ROOT" >&2; exit 1; }
# ns-3 library prefix, e.g. ns3.44
PFX="$(basename "$(ls "$LIB"/libns3.*-core.so | head -1)" | sed -e 's/^lib//' -e 's/-core\.so$//')"

MODULES="core network internet applications point-to-point traffic-control stats bridge nix-vector-routing"
LIBS=""
for m in $MODULES; do
  [ -f "$LIB/lib$PFX-$m.so" ] && LIBS="$LIBS -l$PFX-$m"
done

mkdir -p "$here/build"
src="$here/dumbbell.cc"
bin="$here/build/dumbbell"
stamp="$here/build/.flags"
# The wheel's libraries are a release build with NS_LOG and NS_ASSERT compiled
# in (see lib64/cmake/ns3/*.cmake INTERFACE_COMPILE_DEFINITIONS); match them.
FLAGS="-std=c++20 -O3 -DNDEBUG -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE -I$INC ${CXXFLAGS_EXTRA:-}"
LDFLAGS="-L$LIB -Wl,--no-as-needed $LIBS -Wl,--as-needed -Wl,-rpath,$LIB"
if [ -x "$bin" ] && [ "$bin" -nt "$src" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$FLAGS $LDFLAGS" ]; then
  echo "build.sh: $bin is up to date" >&2
  exit 0
fi
echo "build.sh: $CXX $FLAGS dumbbell.cc $LDFLAGS" >&2
"$CXX" $FLAGS "$src" -o "$bin" $LDFLAGS
echo "$FLAGS $LDFLAGS" > "$stamp"
echo "build.sh: built $bin" >&2
