# syntax=docker/dockerfile:1
#
# toolexec in a container: TypeScript compiled with the dev dependencies, run
# on the production ones only, as a non-root user.
#
#   docker build -t toolexec .
#   docker run -p 127.0.0.1:8787:8787 -e TOOLEXEC_TOKEN="$(openssl rand -hex 24)" \
#     -v "$PWD:/workspace" -v toolexec-data:/data toolexec
#
# Listening on 0.0.0.0 needs a token (TOOLEXEC_TOKEN or server.tokens): the
# service refuses to start without one. Policy comes from a configuration
# file (TOOLEXEC_CONFIG, e.g. mounted at /etc/toolexec/toolexec.json); where
# things live (bind address, port, workspace, database) comes from CMD.
# tini starts the service (ENTRYPOINT below): it reaps the orphans that
# commands run by Bash leave behind (`setsid cmd &`, daemons), which node as
# PID 1 would leave as zombies, and passes SIGTERM on to node. `-s` makes it
# the subreaper even when it is not PID 1 (`docker run --init` adds another).

ARG NODE_IMAGE=node:20-bookworm-slim

# Compilers for better-sqlite3's native addon, built against the headers the
# Node image ships (no download from nodejs.org).
FROM ${NODE_IMAGE} AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
WORKDIR /app

# Build: every dependency, no install script (tsc needs none of them).
FROM toolchain AS build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# Production dependencies. Install scripts stay off, as package.json's
# allowScripts says: only better-sqlite3 needs one (its native addon);
# tree-sitter-bash is used through its .wasm file alone.
FROM toolchain AS deps
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts \
 && npm rebuild better-sqlite3 \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# tini: the init process (see the top). ripgrep: Grep's engine. bubblewrap: the optional Bash sandbox
# (bash.sandbox.mode "auto"/"bubblewrap"; it needs user namespaces, which
# many container runtimes withhold). Add what your agents' commands and
# hooks need, e.g. --build-arg EXTRA_APT_PACKAGES="git python3".
ARG EXTRA_APT_PACKAGES=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tini ripgrep bubblewrap ${EXTRA_APT_PACKAGES} \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data /workspace \
 && chown node:node /data /workspace
ENV NODE_ENV=production \
    TOOLEXEC_URL=http://127.0.0.1:8787
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The uid 1000 user of the Node image: the service, its Bash commands and its
# hooks run without root; the code under /app stays read-only to them.
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "/app/dist/cli.js", "health"]
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "node", "/app/dist/cli.js"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8787", "--workspace", "/workspace", "--data-dir", "/data"]
