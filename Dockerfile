# The connector image. Node.js 24 LTS ("Krypton", supported until 2028-04-30); the connector runs as the
# unprivileged user `node` (uid 1000, from the base image) and cannot modify its own files (they belong to root).
#
# Version: package.json's "version" is the only copy. It ships in the image (package.json) and the image tag carries
# it; there is no io.airbyte.version label to keep in step (Airbyte goes by the image tag). A release build:
#   docker build -t airbyte/source-questback:"$(node -p "require('./package.json').version")" .
ARG NODE_IMAGE=node:24-trixie-slim

# Build stage: compile TypeScript with the dev dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /airbyte/integration_code
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
COPY simulator ./simulator
COPY harness ./harness
RUN npm run build

# Production dependencies, installed from the lock file on their own (nothing left over from the build).
# --omit=optional keeps typescript out: it is an optional peer of ts-essentials (faros-js-client), which the lock file
# marks devOptional, so --omit=dev alone, npm prune --omit=dev and --omit=peer all keep it. It is the only optional
# package of the production tree (a platform-specific optional dependency added later would be dropped too).
FROM ${NODE_IMAGE} AS deps
WORKDIR /airbyte/integration_code
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund

# Runtime stage: production dependencies, the compiled connector, its resources.
FROM ${NODE_IMAGE}
WORKDIR /airbyte/integration_code
ENV NODE_ENV=production
COPY --from=deps /airbyte/integration_code/node_modules ./node_modules
COPY --from=build /airbyte/integration_code/lib/src ./lib/src
COPY package.json ./
COPY resources ./resources
COPY bin ./bin
RUN chmod 0755 bin/main
LABEL io.airbyte.name=airbyte/source-questback
ENV AIRBYTE_ENTRYPOINT="/airbyte/integration_code/bin/main"
USER node
ENTRYPOINT ["/airbyte/integration_code/bin/main"]
