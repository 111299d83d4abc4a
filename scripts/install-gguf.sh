#!/usr/bin/env sh
# Installs the optional generative runtime for local-gguf (node-llama-cpp with
# its prebuilt CPU binary only: ~85 MB and ~10 s, against ~725 MB with every
# CUDA/Vulkan variant that a plain `npm install node-llama-cpp` pulls) beside
# the project in .optional/, and links it into node_modules where the
# local-models package finds it. Run again after `npm ci` (which empties
# node_modules). Nothing here is needed unless LOCAL_GGUF_PATH is set.
set -eu
cd "$(dirname "$0")/.."
VERSION=3.22.1
npm install --prefix .optional --no-audit --no-fund --no-save --omit=optional \
  "node-llama-cpp@$VERSION" "@node-llama-cpp/linux-x64@$VERSION" >/dev/null
ln -sfn "$PWD/.optional/node_modules/node-llama-cpp" node_modules/node-llama-cpp
echo "node-llama-cpp $VERSION (CPU) installed in .optional/ and linked into node_modules"
