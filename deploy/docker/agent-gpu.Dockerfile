# GPU render agent: NVENC encodes and the CUDA execution provider of onnxruntime.
#   docker build -f deploy/docker/agent-gpu.Dockerfile -t shorts-agent-gpu:0.1.0 .
# Run with the NVIDIA container toolkit (docker run --gpus all / nvidia.com/gpu in Kubernetes).
# NVENC needs the driver's "video" capability mounted into the container (libnvidia-encode), which
# NVIDIA_DRIVER_CAPABILITIES below asks for; datacenter Hopper/A100 GPUs have no NVENC at all (the
# agent's one-frame test at start finds that out and encodes with x264 there).
ARG CUDA_IMAGE=nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04
# BtbN's static GPL builds load NVENC/NVDEC through the driver at run time (nv-codec-headers).
ARG FFMPEG_URL=https://github.com/BtbN/FFmpeg-Builds/releases/download/latest/ffmpeg-n7.1-latest-linux64-gpl-7.1.tar.xz

FROM node:20.20.2-bookworm-slim AS build
WORKDIR /opt/shorts
COPY package.json package-lock.json .npmrc ./
COPY common/package.json common/package.json
COPY models/unity-stub models/unity-stub
# cuda12: fetch onnxruntime-node's CUDA execution provider libraries (skipped in .npmrc for CPU hosts).
RUN npm ci --no-audit --no-fund --onnxruntime-node-install=cuda12
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM debian:12.12-slim AS ffmpeg
ARG FFMPEG_URL
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends curl ca-certificates xz-utils \
 && curl -fsSL "$FFMPEG_URL" -o /tmp/ffmpeg.tar.xz \
 && mkdir /ffmpeg && tar -xJf /tmp/ffmpeg.tar.xz -C /ffmpeg --strip-components=1

FROM ${CUDA_IMAGE}
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends pocketsphinx pocketsphinx-en-us ca-certificates python3-pip \
 && pip3 install --no-cache-dir yt-dlp \
 && rm -rf /var/lib/apt/lists/*
# Node's official Linux binaries need glibc 2.28; Ubuntu 22.04 has 2.35.
COPY --from=node:20.20.2-bookworm-slim /usr/local/bin/node /usr/local/bin/node
COPY --from=ffmpeg /ffmpeg/bin/ffmpeg /ffmpeg/bin/ffprobe /usr/local/bin/
ENV NODE_ENV=production \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility,video \
    FFMPEG_PATH=/usr/local/bin/ffmpeg FFPROBE_PATH=/usr/local/bin/ffprobe \
    AGENT_WORK_DIR=/var/lib/shorts-agent/work AGENT_METRICS_PORT=9464
WORKDIR /opt/shorts
COPY --from=build /opt/shorts /opt/shorts
RUN useradd --system --uid 10001 --home /var/lib/shorts-agent shorts && mkdir -p /var/lib/shorts-agent && chown shorts /var/lib/shorts-agent
USER shorts
EXPOSE 9464
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/node-agent/src/main.js"]
