# syntax=docker/dockerfile:1
# Multi-stage image of the package firewall.
#   docker build -t package-firewall .                 (runtime image, the default target)
#   docker build --target admin -t package-firewall-admin .   (admin CLI, same storage env)
# The runtime stage holds only Nitro's output: .output/server already carries the traced
# production dependencies in .output/server/node_modules, so no npm install happens there.

# ---- builder: full install, then the Nitro build ------------------------------------------
FROM node:20-slim AS builder
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nitro.config.ts tsconfig.json ./
COPY server ./server
COPY machines ./machines
COPY storage ./storage
RUN npx nitro build

# ---- admin: the admin CLI (npm run admin -- ...) with production dependencies only ---------
FROM node:20-slim AS admin
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json ./
COPY server ./server
COPY machines ./machines
COPY storage ./storage
COPY scripts ./scripts
USER node
ENTRYPOINT ["npx", "tsx", "scripts/admin.ts"]

# ---- runtime: non-root, only .output -------------------------------------------------------
FROM node:20-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
COPY --from=builder --chown=node:node /app/.output ./.output
# The fs storage (embedded mode) lives in a volume owned by the unprivileged user.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
# node:20-slim has no curl: Node's own fetch probes readiness (storage reachable).
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) shuts down gracefully: in-flight deliveries finish, actors are stored.
STOPSIGNAL SIGTERM
CMD ["node", ".output/server/index.mjs"]
