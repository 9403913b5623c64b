# Build stage: compile TypeScript with the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /airbyte/integration_code
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
COPY test/simulator ./test/simulator
RUN npm run build && npm prune --omit=dev

# Runtime stage: production dependencies, the compiled connector, its resources.
FROM node:20-bookworm-slim
WORKDIR /airbyte/integration_code
ENV NODE_ENV=production
COPY --from=build /airbyte/integration_code/node_modules ./node_modules
COPY --from=build /airbyte/integration_code/lib/src ./lib/src
COPY package.json ./
COPY resources ./resources
COPY bin ./bin
RUN chmod +x bin/main
LABEL io.airbyte.name=airbyte/source-questback
LABEL io.airbyte.version=0.1.0
ENV AIRBYTE_ENTRYPOINT="/airbyte/integration_code/bin/main"
ENTRYPOINT ["/airbyte/integration_code/bin/main"]
