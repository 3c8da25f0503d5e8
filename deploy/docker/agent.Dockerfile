# CPU render agent: Debian's ffmpeg 5.1 (with libass; the agent prefers a current system ffmpeg over
# the 2018 static build of @ffmpeg-installer), pocketsphinx, ONNX on the CPU.
#   docker build -f deploy/docker/agent.Dockerfile -t shorts-agent:0.1.0 .
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /opt/shorts
COPY package.json package-lock.json .npmrc ./
COPY common/package.json common/package.json
COPY models/unity-stub models/unity-stub
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20.20.2-bookworm-slim
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends ffmpeg pocketsphinx pocketsphinx-en-us yt-dlp ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production AGENT_WORK_DIR=/var/lib/shorts-agent/work AGENT_METRICS_PORT=9464
WORKDIR /opt/shorts
COPY --from=build /opt/shorts /opt/shorts
RUN useradd --system --uid 10001 --home /var/lib/shorts-agent shorts && mkdir -p /var/lib/shorts-agent && chown shorts /var/lib/shorts-agent
USER shorts
EXPOSE 9464
# SIGTERM (docker stop): the agent stops leasing and hands running tasks back; give it the time.
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/node-agent/src/main.js"]
