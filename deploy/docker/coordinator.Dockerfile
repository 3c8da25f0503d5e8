# Coordinator image: REST API + agent protocol. Build from the repository root:
#   docker build -f deploy/docker/coordinator.Dockerfile -t shorts-coordinator:0.1.0 .
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /opt/shorts
COPY package.json package-lock.json .npmrc ./
COPY common/package.json common/package.json
COPY models/unity-stub models/unity-stub
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20.20.2-bookworm-slim
# ffprobe/ffmpeg read the length and a thumbnail of user uploads (a current one, not the 2018 static build).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ffmpeg ca-certificates && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production PORT=3000 GRPC_PORT=50051 DATA_DIR=/var/lib/shorts
WORKDIR /opt/shorts
# Sources stay beside dist/: migrations (SQL), protos and fonts are read from the repository layout.
COPY --from=build /opt/shorts /opt/shorts
RUN useradd --system --uid 10001 --home /var/lib/shorts shorts && mkdir -p /var/lib/shorts && chown shorts /var/lib/shorts
USER shorts
EXPOSE 3000 50051
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--enable-source-maps", "dist/coordinator/src/main.js"]
